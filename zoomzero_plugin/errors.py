"""Typed errors: what a user did wrong, raised by library code and turned into one line at a CLI's edge.

Library functions raise a :class:`ZoomzeroError` subclass whose message names the thing (argument, file and
line, row id, model path) and the fix; they never print or exit. The two command lines (``zoomzero``,
``easyr1``) catch these once, print ``prog: message`` on stderr and exit with :data:`EXIT_USER`. Anything
else is a bug in this package or a library, and keeps its traceback.
"""

from __future__ import annotations

EXIT_USER = 2  # a user mistake (argument, file, data, model); the message says what to change


class ZoomzeroError(Exception):
    """Base: a problem the user can fix. ``str(error)`` is the whole message, one line where possible."""


class UsageError(ZoomzeroError, ValueError):
    """A bad command-line argument or option value (or a combination of them)."""


class DataError(ZoomzeroError, ValueError):
    """A data file or row is malformed, inconsistent or missing; the message names file:line or the row id."""


class VideoError(DataError):
    """A video is missing, empty, truncated or cannot be decoded; the message names the file."""


class ModelError(ZoomzeroError):
    """A model or processor cannot be loaded (missing path, unreachable hub id, unsupported architecture)."""


class ResumeError(ZoomzeroError):
    """An output directory holds earlier results that cannot be resumed with these settings."""


class ConfigError(ZoomzeroError, ValueError):
    """A recipe or option section is invalid (unknown key, wrong type, contradictory settings)."""


class DependencyError(ZoomzeroError, ImportError):
    """An optional dependency (vLLM, EasyR1, LLaMA-Factory) is missing or of an unsupported version."""


def one_line(prog: str, error: BaseException) -> str:
    """``prog: message`` for the user; the message's own lines are kept (a problem list stays a list)."""
    return f"{prog}: {str(error).strip() or type(error).__name__}"
