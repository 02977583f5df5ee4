"""Upstream annotation formats, one module each, registered by name for ``zoomzero data convert --from``."""

from __future__ import annotations

from . import cgbench, gqa_json, longvideobench, lvbench, mcq_table, mlvu, nextgqa, plm, rextime, videomme  # noqa: F401  (they register)
from .base import FORMATS, REASONS, Draft, Format, Skip, register

__all__ = ["FORMATS", "REASONS", "Draft", "Format", "Skip", "register"]
