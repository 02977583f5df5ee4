"""Upstream annotation formats, one module each, registered by name for ``zoomzero data convert --from``:
:mod:`.nextgqa`, :mod:`.rextime`, :mod:`.cgbench`, :mod:`.videomme`, :mod:`.mlvu`, :mod:`.lvbench`,
:mod:`.longvideobench`, :mod:`.plm`, :mod:`.gqa_json` (the Zoom-Zero/VideoChat-R1 releases' JSON) and
:mod:`.mcq_table` (any MCQ table); :mod:`.base` holds what they share (the draft of a row, the skip reasons).
"""

from __future__ import annotations

from . import cgbench, gqa_json, longvideobench, lvbench, mcq_table, mlvu, nextgqa, plm, rextime, videomme  # noqa: F401  (they register)
from .base import FORMATS, REASONS, Draft, Format, Skip, register

__all__ = ["FORMATS", "REASONS", "Draft", "Format", "Skip", "register"]
