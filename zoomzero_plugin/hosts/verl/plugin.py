"""The ``verl.plugins`` entry point: zoomzero-plugin in every process that imports verl.

``import verl`` imports every ``verl.plugins`` entry point (in the driver, the task runner, every worker, the agent-loop
and reward workers) and hides a failing one at DEBUG level. So :func:`register` says what it did on stderr, one line
per process, and a plugin that fails says why on stderr before verl swallows the error.

What it registers, each through verl's own extension point: the ``cpu`` platform (``PlatformRegistry``), and the seams
(:mod:`.seams`): always, and CPU mode's when ``ZOOMZERO_VERL_CPU=1``.
"""

from __future__ import annotations

import os
import sys
import traceback

from . import cpu_mode
from .seams import CPU_SEAMS, SEAMS, TABLE

QUIET_ENV = "ZOOMZERO_VERL_QUIET"  # "1": no registration line (tests that count output lines)
_registered: list[str] = []


def register() -> list[str]:
    """Register everything in this process (once); returns what was registered, in words."""
    if _registered:
        return list(_registered)
    from . import cpu_platform  # noqa: F401 - registers the platform with verl's registry

    TABLE.install(SEAMS)
    done = [f"platform {cpu_platform.NAME}", f"{len(SEAMS)} seams"]
    if cpu_mode.requested():
        TABLE.install(CPU_SEAMS)
        done.append(f"CPU mode ({len(CPU_SEAMS)} seams)")
    _registered.extend(done)
    return list(done)


def _announce(done: list[str]) -> None:
    if os.environ.get(QUIET_ENV) != "1":
        print(f"zoomzero-plugin: verl plugin registered (pid {os.getpid()}): {', '.join(done)}", file=sys.stderr)


try:
    _announce(register())
except Exception:  # verl logs a failing plugin at DEBUG level only: say it here, then let verl see the error
    print("zoomzero-plugin: the verl plugin failed to register:\n" + traceback.format_exc(), file=sys.stderr)
    raise
