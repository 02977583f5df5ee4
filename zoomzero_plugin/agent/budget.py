"""The agent's budgets: what one VideoZoomer trajectory may see and say. Defaults are the paper's (and the
authors' released scripts'): a 64-frame overview at 0.5 fps, ≤16 frames a call, ≤4 calls, ≤5 rounds,
128 images, 4,096 tokens a turn and 32,768 response tokens in all.
"""

from __future__ import annotations

import ast
import inspect
import math
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class AgentBudget:
    """One trajectory's limits. Every field is validated; ``ValueError`` names the field and its bound."""

    overview_fps: float = 0.5
    """Frames per second of video sampled for the overview (the first user turn), in 1/s. The authors'
    sampler keeps every ``round(native_fps / overview_fps)``-th frame."""

    overview_frames: int = 64
    """Overview frames at most; a longer video gets this many frames spread uniformly over its whole length."""

    call_frames: int = 16
    """Frames one ``<video_zoom>`` call may ask for, counted as ``int(fps · (end − start))``; a call asking for
    more is an error turn (never a silent clamp)."""

    calls: int = 4
    """Executed (successful) calls per trajectory at most; a further call is an error turn."""

    rounds: int = 5
    """Assistant turns per trajectory at most. The observation after turn ``rounds − 1`` tells the model not to
    call again; a call in the last turn ends the trajectory unanswered."""

    images: int = 128
    """Images (overview + every clip frame) in one conversation at most; a call that would pass it is an error."""

    turn_tokens: int = 4096
    """Tokens one assistant turn may generate (``max_new_tokens`` of each round)."""

    total_tokens: int = 32768
    """Response tokens in all, after the first prompt: assistant turns + observations (image tokens included).
    A trajectory that reaches it ends (reason ``total_tokens``)."""

    frame_max_pixels: int = 100352
    """Pixels (height × width) per frame at most: a larger frame is shrunk, aspect kept; a smaller one is never
    enlarged (the model's processor then rounds each side to its patch grid)."""

    frame_min_pixels: int = 25088
    """A frame shrunk to ``frame_max_pixels`` is scaled back up to at least this many pixels (the authors' rule)."""

    def __post_init__(self) -> None:
        problems = []
        positive_ints = ("overview_frames", "call_frames", "rounds", "images", "turn_tokens", "total_tokens",
                         "frame_max_pixels", "frame_min_pixels")
        for name in positive_ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                problems.append(f"{name} must be an integer >= 1, got {value!r}")
        if isinstance(self.calls, bool) or not isinstance(self.calls, int) or self.calls < 0:
            problems.append(f"calls must be an integer >= 0, got {self.calls!r}")
        fps = self.overview_fps
        if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
            problems.append(f"overview_fps must be a finite number > 0, got {fps!r}")
        if not problems and self.frame_min_pixels > self.frame_max_pixels:
            problems.append(f"frame_min_pixels ({self.frame_min_pixels}) must be <= frame_max_pixels "
                            f"({self.frame_max_pixels})")
        if not problems and self.overview_frames > self.images:
            problems.append(f"overview_frames ({self.overview_frames}) must be <= images ({self.images})")
        if not problems and self.turn_tokens > self.total_tokens:
            problems.append(f"turn_tokens ({self.turn_tokens}) must be <= total_tokens ({self.total_tokens})")
        if problems:
            raise ValueError("invalid agent budget: " + "; ".join(problems))

    @property
    def last_round(self) -> int:
        """Index (from 0) of the last assistant turn, the one that may not call."""
        return self.rounds - 1

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> AgentBudget:
        """Build from a mapping; unknown keys are an error naming them and the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown agent budget key(s) {unknown}; known: {sorted(known)}")
        return cls(**values)


def field_help() -> dict[str, str]:
    """Each field's docstring, first sentence (for command-line help)."""
    tree = ast.parse(inspect.getsource(AgentBudget))
    body = tree.body[0].body  # type: ignore[attr-defined]
    out = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            text = " ".join(str(after.value.value).split()).replace("``", "")
            out[node.target.id] = text.split(". ")[0].rstrip(".")  # type: ignore[union-attr]
    return out
