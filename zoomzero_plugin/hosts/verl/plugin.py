"""The ``verl.plugins`` entry point: zoomzero-plugin in every process that imports verl.

``import verl`` imports every ``verl.plugins`` entry point (in the driver, the task runner, every worker, the agent-loop
and reward workers) and hides a failing one at DEBUG level. So :func:`register` says what it did on stderr, one line
per process, and a plugin that fails says why on stderr before verl swallows the error.

What it registers, each through verl's own extension point: the ``cpu`` platform (``PlatformRegistry``); the agent
loops ``zoomzero`` and ``videozoomer`` (``register``), the reward managers ``zoomzero`` and ``videozoomer``
(``reward_manager.register``) and the advantage estimators ``tokenadv`` and ``grpo_sum`` (``register_adv_est``), each
when verl imports its registry (importing them with verl would add seconds to every process); and the seams
(:mod:`.seams`): always, and CPU mode's when ``ZOOMZERO_VERL_CPU=1`` (then, in verl's driver, the watch of
:mod:`.ray_watch`: a one-line error instead of a run that waits forever for a CPU Ray will not give).
"""

from __future__ import annotations

import os
import sys
import traceback
from types import ModuleType

from ..post_import import when_imported
from . import cpu_mode, cpu_platform, ray_watch
from .seams import CPU_SEAMS, SEAMS, TABLE

QUIET_ENV = "ZOOMZERO_VERL_QUIET"  # "1": no registration line (tests that count output lines)
SKIP_ENV = "ZOOMZERO_VERL_SEAMS_SKIP"  # comma list of seam names not to install (diagnosis: is a seam still needed?)
# the packages, not their registry modules: a hook runs once the whole package is imported (never half-built)
AGENT_LOOPS = "verl.experimental.agent_loop"
REWARD_MANAGERS = "verl.experimental.reward_loop.reward_manager"
ESTIMATORS = "verl.trainer.ppo.core_algos"
_registered: list[str] = []


# Each class registers itself with verl's decorator where it is defined; importing its module is the registration
# (a module this import finds half-built, because it is what imported verl's registry, finishes and registers then).
def _agent_loops(module: ModuleType) -> None:
    from . import videozoomer_loop, zoom_loop  # noqa: F401


def _reward_managers(module: ModuleType) -> None:
    from . import reward  # noqa: F401


def _estimators(module: ModuleType) -> None:
    from .tokenadv import register_estimators

    register_estimators(module)


def register() -> list[str]:
    """Register everything in this process (once); returns what was registered, in words."""
    if _registered:
        return list(_registered)
    skipped = {n.strip() for n in os.environ.get(SKIP_ENV, "").split(",") if n.strip()}
    TABLE.install([s for s in SEAMS if s.name not in skipped])
    when_imported(AGENT_LOOPS, _agent_loops)
    when_imported(REWARD_MANAGERS, _reward_managers)
    when_imported(ESTIMATORS, _estimators)
    done = [
        f"platform {cpu_platform.NAME}",
        "agent loops zoomzero, videozoomer",
        "reward managers zoomzero, videozoomer",
        "estimators tokenadv, grpo_sum",
        f"{len(SEAMS)} seams",
    ]
    if skipped:
        done.append(f"seams skipped ({SKIP_ENV}): {', '.join(sorted(skipped))}")
    if cpu_mode.requested():
        TABLE.install([s for s in CPU_SEAMS if s.name not in skipped])
        done.append(f"CPU mode ({len(CPU_SEAMS)} seams)")
        if ray_watch.start_if_driver() is not None:
            done.append(f"Ray's waiting actors watched ({ray_watch.limit():g} s)")
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
