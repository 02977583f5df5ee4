"""vLLM's ``vllm.general_plugins`` entry point: the verl host's vLLM seams in vLLM's own processes (CPU mode only).

verl's vLLM server starts vLLM's engine core (and its model) in a process of its own that never imports verl, so the
``verl.plugins`` entry point does not reach it; vLLM loads its general plugins in every one of its processes. This
one installs :data:`~.seams.VLLM_SEAMS` when ``ZOOMZERO_VERL_CPU=1`` (inherited from the verl job) and does nothing
otherwise: a vLLM that does not serve a CPU-mode verl job runs exactly as before.
"""

from __future__ import annotations

import os

from . import cpu_mode
from .seams import TABLE, VLLM_SEAMS


def install() -> None:
    """The entry point: install the vLLM seams in CPU mode (idempotent)."""
    skipped = {n.strip() for n in os.environ.get("ZOOMZERO_VERL_SEAMS_SKIP", "").split(",")}
    if cpu_mode.requested():
        TABLE.install([s for s in VLLM_SEAMS if s.name not in skipped])
