"""A clear one-line error instead of a silent wait when Ray lacks a resource the run needs (CPU mode).

verl's actors (TransferQueue's controller and storage units, the agent-loop and reward workers, the worker group's
bundles) each ask Ray for resources; on a machine with fewer CPUs than they ask for together, the last ones wait for
a CPU that never comes and the run hangs without a word. ``zoomzero verl train --cpu`` declares what the recipe needs
(:func:`~.cpu_mode.ray_resources`); this watch is the net under it, for ``python -m verl.trainer.main_ppo`` started by
hand, a user's ``RAY_OVERRIDE_RESOURCES``, or a count the declaration missed: in the driver, once Ray is up, it asks
Ray's state API every few seconds for actors and placement groups still waiting; one that waits longer than
``ZOOMZERO_VERL_RAY_WAIT`` seconds (default 120) while the cluster cannot offer what it asks ends the driver with one
line naming it, what it asks, what the cluster has, and the fix.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zoomzero_plugin.errors import EXIT_USER

WAIT_ENV = "ZOOMZERO_VERL_RAY_WAIT"
FIX = (
    "declare more (RAY_OVERRIDE_RESOURCES, or let `zoomzero verl train --cpu` declare them) or ask for fewer "
    "(transfer_queue.backend.SimpleStorage.num_data_storage_units, actor_rollout_ref.rollout.agent.num_workers, "
    "reward.num_workers, trainer.n_gpus_per_node)"
)


def _fits(demand: Mapping[str, float], free: Mapping[str, float]) -> bool:
    return all(float(free.get(k, 0.0)) >= float(v) for k, v in demand.items() if float(v) > 0)


def stuck(
    pending: Sequence[tuple[str, Mapping[str, float]]], free: Mapping[str, float], total: Mapping[str, float]
) -> str | None:
    """The error line for the first waiting item the cluster cannot serve now (None when all could be placed).

    ``pending``: (what, demand) of each waiting actor or placement group; ``free``/``total``: the cluster's resources.
    """
    for what, demand in pending:
        if not _fits(demand, free):
            asked = ", ".join(f"{k} {v:g}" for k, v in sorted(demand.items()) if float(v) > 0)
            have = ", ".join(f"{k} {float(free.get(k, 0)):g} of {float(total.get(k, 0)):g}" for k in sorted(demand))
            return f"Ray cannot place {what}: it asks {asked}, the cluster has {have} free; {FIX}"
    return None


def pending_items(address: str | None = None) -> list[tuple[str, dict[str, float]]]:
    """(what, demand) of the actors and placement groups Ray has not placed yet (its state API), in the cluster at
    ``address`` (the GCS address of the one this process is connected to: without it, the state API refuses to choose
    when another Ray runs on the machine, "Found multiple active Ray instances")."""
    from ray.util import state

    out = []
    asked = dict(address=address, detail=True, timeout=10)
    for actor in state.list_actors(filters=[("state", "=", "PENDING_CREATION")], **asked):
        demand = dict(getattr(actor, "required_resources", None) or {})
        out.append((f"actor {actor.class_name}", demand))
    for group in state.list_placement_groups(filters=[("state", "=", "PENDING")], **asked):
        demand: dict[str, float] = {}
        for bundle in getattr(group, "bundles", None) or []:
            for k, v in (bundle.get("unit_resources") or {}).items():
                demand[k] = demand.get(k, 0.0) + float(v)
        out.append((f"placement group {group.name or group.placement_group_id}", demand))
    return out


def watch(limit: float, interval: float = 5.0, stop: Callable[[str], None] | None = None) -> threading.Thread:
    """Start the watch in a daemon thread (it waits for ``ray.init`` first)."""

    def fail(line: str) -> None:
        print(f"zoomzero verl: {line}", file=sys.stderr, flush=True)
        os._exit(EXIT_USER)

    def run() -> None:
        import ray

        while not ray.is_initialized():
            time.sleep(interval)
        address = ray.get_runtime_context().gcs_address
        first_seen: dict[str, float] = {}
        failed_since: float | None = None
        while ray.is_initialized():
            time.sleep(interval)
            try:
                pending = pending_items(address)
                free, total = ray.available_resources(), ray.cluster_resources()
            except Exception as error:  # noqa: BLE001 - the state API may not answer during start-up: ask again
                failed_since = failed_since or time.monotonic()
                if time.monotonic() - failed_since >= limit:  # say once that the net is down, then stop watching
                    print(
                        f"zoomzero verl: the Ray watch stops, Ray's state API did not answer: {error}", file=sys.stderr
                    )
                    return
                continue
            failed_since = None
            now = time.monotonic()
            first_seen = {w: first_seen.get(w, now) for w, _ in pending}
            late = [(w, d) for w, d in pending if now - first_seen[w] >= limit]
            line = stuck(late, free, total)
            if line is not None:
                (stop or fail)(line)
                return

    thread = threading.Thread(target=run, name="zoomzero-ray-watch", daemon=True)
    thread.start()
    return thread


DRIVER = "verl.trainer.main_ppo"


def in_driver(module: str = DRIVER) -> bool:
    """Whether this process is verl's driver (``python -m verl.trainer.main_ppo``; ``module`` for tests).

    verl loads its plugins when ``verl`` is imported, and ``python -m`` imports a module's parent packages before
    ``__main__`` becomes the module: at that moment ``__main__.__spec__`` is still None and ``sys.argv[0]`` is "-m",
    so the interpreter's own arguments (``sys.orig_argv``) are what says it."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if getattr(spec, "name", None) == module:
        return True
    argv = sys.orig_argv  # Python 3.10 and up (the package requires it)
    return f"-m{module}" in argv or any(a == "-m" and b == module for a, b in zip(argv, argv[1:]))


def limit() -> float:
    try:
        return float(os.environ.get(WAIT_ENV, "120"))
    except ValueError:
        return 120.0


def start_if_driver() -> Any:
    """Start the watch when this process is verl's driver; returns the thread or None."""
    return watch(limit()) if in_driver() else None
