"""The host's errors, members of the package's :class:`~zoomzero_plugin.errors.ZoomzeroError` family.

``easyr1``'s command line turns each into one line (``easyr1 COMMAND: message``) at its edge; in a Ray
worker they stop the process with that message.
"""

from __future__ import annotations

from collections.abc import Sequence

from zoomzero_plugin import errors
from zoomzero_plugin.errors import ConfigError, DependencyError, UsageError, ZoomzeroError

from ..seams import SeamError

__all__ = ["ConfigError", "DependencyError", "PluginError", "SeamError", "UsageError", "format_problems"]


class PluginError(ZoomzeroError, RuntimeError):
    """A plugin could not be loaded, contradicts another one, or the plugins are not active where needed."""


def format_problems(problems: Sequence[str], where: str = "") -> str:
    """A :class:`ConfigError` message about the EasyR1 config (``where``: which), one problem per line."""
    return errors.format_problems(problems, f"the EasyR1 config{where}")
