"""The process's plugin state: the active :class:`~.registry.PluginHost` and when it became active.

The bottom of the host's import graph: every module that needs the host at call time (seam wrappers
running inside EasyR1) looks it up here with :func:`current_host`, which never activates anything.
Only :func:`~.activation.activate` records a host, and only it installs seams.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from .errors import PluginError
from .registry import PluginHost


@dataclass(frozen=True)
class Activation:
    """When and where the plugins became active in this process."""

    pid: int
    time: float  # time.time()
    where: str
    plugins: tuple[str, ...]


_host: PluginHost | None = None
_activation: Activation | None = None


def record(host: PluginHost, where: str) -> Activation:
    """Make ``host`` this process's active host (called by ``activate`` once its seams are installed)."""
    global _host, _activation
    _host = host
    _activation = Activation(os.getpid(), time.time(), where, tuple(i.name for i in host.infos))
    return _activation


def activation() -> Activation | None:
    """This process's activation, or None if the plugins are not active here."""
    return _activation


def current_host() -> PluginHost:
    """The active plugin host. Raises :class:`PluginError` if none is; never activates (no side effects)."""
    if _host is None:
        raise PluginError(
            "the easyr1 plugins are not active in this process: launch with `easyr1 train`, export "
            "RAY_RUNTIME_ENV_HOOK=zoomzero_plugin.hosts.easyr1.activation.ray_runtime_env_hook, or call "
            "zoomzero_plugin.hosts.easyr1.activate() first"
        )
    return _host
