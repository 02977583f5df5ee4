"""CPU mode's words, for every host: the environment flag that asks for it, and one switched recipe setting."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

FP32 = "bf16 is slow on most CPUs; fp32 on both sides keeps vLLM's and the actor's log-probs equal"


def flag(name: str) -> bool:
    """Whether the environment variable ``name`` asks for it (unset, empty, 0, false, no or off: not)."""
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def shown(value: Any) -> str:
    """A setting's value as a recipe override writes it (``true``, ``null``, ``fsdp2``)."""
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


@dataclass(frozen=True)
class Switch:
    """One recipe setting CPU mode changes: its dotted key from the config root, the value it had and gets, and why."""

    key: str
    old: Any
    new: Any
    why: str

    def override(self, prefix: str = "") -> str:
        """The override that applies it (``prefix``: Hydra's ``++`` to add or replace a key)."""
        return f"{prefix}{self.key}={shown(self.new)}"

    def line(self) -> str:
        return f"cpu mode: {self.key}: {shown(self.old)} -> {shown(self.new)} ({self.why})"
