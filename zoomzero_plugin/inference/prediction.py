"""What every inference mode returns per question: the deterministic record and the wall-clock timings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModeOutput:
    """``record``: one line of ``predictions.jsonl`` (``qid``, ``answer``, ``spans``, ``confidence``, ``mode`` and
    the mode's own keys); ``timing``: one line of ``timings.jsonl`` (kept apart so predictions compare exactly)."""

    record: dict[str, Any]
    timing: dict[str, Any] = field(default_factory=dict)
