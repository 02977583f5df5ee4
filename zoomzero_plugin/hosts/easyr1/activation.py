"""Making the plugins active in every process EasyR1 trains in.

EasyR1's training loop runs in a ``Runner`` Ray actor and its rollout/FSDP workers and reward managers are
further actors, so patching only the driver changes nothing. Three entry points, one per way of launching:

- :func:`activate` — in-process (the ``easyr1`` launcher, tests, notebooks).
- :func:`setup_worker` — Ray's ``worker_process_setup_hook``: runs in every worker process of the job before
  any actor or task code, so actors (and actors they create) start with the plugins active.
- :func:`ray_runtime_env_hook` — for ``RAY_RUNTIME_ENV_HOOK``: Ray passes the ``runtime_env`` of a plain
  ``ray.init()`` (EasyR1 calls it itself) through it; it activates the driver, adds the setup hook, and,
  under ``python3 -m verl.trainer.main``, validates the recipe before any actor starts.

Activation is idempotent: it loads the entry points once and installs every seam once. It is the only code
that installs seams; the state it records lives in :mod:`.state`.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from zoomzero_plugin.cpu_compat import ensure_torchvision_importable
from zoomzero_plugin.errors import EXIT_USER, ZoomzeroError, one_line

from . import cpu_mode, cpu_seams, seams
from .recipe import check_driver_argv
from .registry import PluginHost
from .state import Activation, activation, current_host, record

__all__ = [
    "Activation",
    "activate",
    "activation",
    "current_host",
    "ray_runtime_env_hook",
    "runtime_env",
    "setup_worker",
]

SETUP_HOOK = "zoomzero_plugin.hosts.easyr1.activation.setup_worker"
ENV_HOOK = "zoomzero_plugin.hosts.easyr1.activation.ray_runtime_env_hook"
CHAINED_HOOK_ENV = "EASYR1_PLUGINS_CHAINED_SETUP_HOOK"  # a setup hook the user had before ours
CHECKED_ENV = "EASYR1_PLUGINS_CHECKED"  # set by `easyr1 train`: the recipe was validated in the driver
JOB_ENV_NAMES = "EASYR1_PLUGINS_JOB_ENV"  # comma list of the plugins' job env vars to pass to every worker


def activate(where: str = "process") -> PluginHost:
    """Load the plugins and install every seam in this process (once); returns the plugin host.

    Raises :class:`~.errors.PluginError` (a plugin fails to load or clashes) or :class:`~.errors.SeamError`
    (an already imported EasyR1 module lacks a seam's target); nothing is recorded then.
    """
    if activation() is None:
        ensure_torchvision_importable()  # before EasyR1 imports qwen-vl-utils (a no-op where torchvision loads)
        host = PluginHost.load()
        seams.install()
        if cpu_mode.requested():  # easyr1 train --cpu: EasyR1's workers on CPU processes (.cpu_seams)
            cpu_seams.install()
        record(host, where)
    return current_host()


def setup_worker() -> None:
    """Ray ``worker_process_setup_hook``: activate, then run the setup hook the user had configured, if any."""
    activate("ray worker")
    chained = os.environ.get(CHAINED_HOOK_ENV)
    if chained:
        module, _, name = chained.rpartition(".")
        getattr(importlib.import_module(module), name)()


def runtime_env() -> dict[str, Any]:
    """The ``runtime_env`` that activates the plugins in a job (``ray job submit --runtime-env-json``).

    Its env var also reaches the job's driver (the entrypoint), whose own ``ray.init`` then validates the recipe.
    """
    return {"worker_process_setup_hook": SETUP_HOOK, "env_vars": {"RAY_RUNTIME_ENV_HOOK": ENV_HOOK}}


def with_setup_hook(runtime_env: dict[str, Any] | None) -> dict[str, Any]:
    """``runtime_env`` plus the worker setup hook (a user's own setup hook is chained, not replaced)."""
    env = dict(runtime_env or {})
    env_vars = dict(env.get("env_vars") or {})
    current = env.get("worker_process_setup_hook")
    if current not in (None, SETUP_HOOK):
        if not isinstance(current, str):
            raise ValueError(
                "runtime_env['worker_process_setup_hook'] is a callable; the easyr1 plugins need their own hook. "
                f"Give it as a 'module.function' string so it can be chained, or call {SETUP_HOOK}() from it."
            )
        env_vars[CHAINED_HOOK_ENV] = current
    env["worker_process_setup_hook"] = SETUP_HOOK
    if env_vars:
        env["env_vars"] = env_vars
    return env


def ray_runtime_env_hook(runtime_env: dict[str, Any] | None) -> dict[str, Any]:
    """``RAY_RUNTIME_ENV_HOOK`` target, the edge of launch paths 2 and 3 (:func:`driver_runtime_env` does the work).

    A user's problem (a bad recipe, a plugin that cannot load) ends the driver here with one line on stderr
    and exit status 2, before any actor starts, instead of a traceback through ``ray.init``.
    """
    try:
        return driver_runtime_env(runtime_env)
    except ZoomzeroError as e:
        print(one_line("easyr1 plugins (RAY_RUNTIME_ENV_HOOK)", e), file=sys.stderr)
        raise SystemExit(EXIT_USER) from None


def driver_runtime_env(runtime_env: dict[str, Any] | None) -> dict[str, Any]:
    """Activate the driver and return ``runtime_env`` with the setup hook and the plugins' job env vars (see
    :meth:`~.registry.PluginHost.job_env`); under ``python3 -m verl.trainer.main`` the recipe on its command
    line is checked first (raises :class:`~.errors.ConfigError` listing every problem)."""
    activate("driver (RAY_RUNTIME_ENV_HOOK)")
    env = with_setup_hook(dict(runtime_env) if runtime_env is not None else None)
    env_vars = dict(env.get("env_vars") or {})
    if _running_easyr1_main() and os.environ.get(CHECKED_ENV) != "1":
        env_vars.update(check_driver_argv(sys.argv[1:]))  # in CPU mode it also declares the recipe's GPUs to Ray
    for name in filter(None, os.environ.get(JOB_ENV_NAMES, "").split(",")):
        if name in os.environ:
            env_vars.setdefault(name, os.environ[name])
    if env_vars:
        env["env_vars"] = env_vars
    return env


def export_job_env(job_env: dict[str, str]) -> list[str]:
    """Set the plugins' job env vars in this process (a value the user exported wins) and mark them for
    :func:`ray_runtime_env_hook` to pass to every worker. Returns one note per variable."""
    notes = []
    for name, value in job_env.items():
        if os.environ.get(name, value) != value:
            notes.append(f"{name}={os.environ[name]} from your environment (the plugins would set {value})")
        else:
            notes.append(f"{name}={value} in every process of the job")
        os.environ.setdefault(name, value)
    names = set(filter(None, os.environ.get(JOB_ENV_NAMES, "").split(","))) | set(job_env)
    if names:
        os.environ[JOB_ENV_NAMES] = ",".join(sorted(names))
    return notes


def _running_easyr1_main() -> bool:
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", None) == "verl.trainer.main"
