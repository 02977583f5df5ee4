"""The agent's budgets: what one VideoZoomer trajectory may see and say. Defaults are the paper's (and the
authors' released scripts'): a 64-frame overview at 0.5 fps, ≤16 frames a call, ≤4 calls, ≤5 assistant turns,
128 images, 4,096 tokens a turn and 32,768 response tokens in all.

This is the one home of the agent's defaults: the rollout's recipe section, ``zoomzero eval``'s ``--agent-*`` flags,
``data export-sft``'s budget flags, the reward and the frame reader take theirs from here. A limit says what it
limits (``max_…``/``min_…``, as verl's ``max_assistant_turns``).
"""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..sections import build


@dataclass(frozen=True)
class AgentBudget:
    """One trajectory's limits. Every field is validated; ``ValueError`` names the field and its bound."""

    overview_fps: float = 0.5
    """Frames per second of video sampled for the overview (the first user turn), in 1/s. The authors'
    sampler keeps every ``round(native_fps / overview_fps)``-th frame."""

    max_overview_frames: int = 64
    """Overview frames at most; a longer video gets this many frames spread uniformly over its whole length."""

    max_frames_per_call: int = 16
    """Frames one ``<video_zoom>`` call may ask for, counted as ``int(fps · (end − start))``; a call asking for
    more is an error turn (never a silent clamp)."""

    max_calls: int = 4
    """Executed (successful) calls per trajectory at most; a further call is an error turn."""

    max_assistant_turns: int = 5
    """Assistant turns per trajectory at most. The observation after the next-to-last turn tells the model not to
    call again; a call in the last turn ends the trajectory unanswered."""

    max_images: int = 128
    """Images (overview + every clip frame) in one conversation at most; a call that would pass it is an error."""

    max_new_tokens: int = 4096
    """Tokens one assistant turn may generate (the ``max_new_tokens`` of each turn's generation)."""

    max_response_tokens: int = 32768
    """Response tokens in all, after the first prompt: assistant turns + observations (image tokens included).
    A trajectory that reaches it ends (reason ``total_tokens``)."""

    max_frame_pixels: int = 100352
    """Pixels (height × width) per frame at most: a larger frame is shrunk, aspect kept; a smaller one is never
    enlarged (the model's processor then rounds each side to its patch grid)."""

    min_frame_pixels: int = 25088
    """A frame shrunk to ``max_frame_pixels`` is scaled back up to at least this many pixels (the authors' rule)."""

    def __post_init__(self) -> None:
        problems = []
        positive_ints = (
            "max_overview_frames",
            "max_frames_per_call",
            "max_assistant_turns",
            "max_images",
            "max_new_tokens",
            "max_response_tokens",
            "max_frame_pixels",
            "min_frame_pixels",
        )
        for name in positive_ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                problems.append(f"{name} must be an integer >= 1, got {value!r}")
        if isinstance(self.max_calls, bool) or not isinstance(self.max_calls, int) or self.max_calls < 0:
            problems.append(f"max_calls must be an integer >= 0, got {self.max_calls!r}")
        fps = self.overview_fps
        if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
            problems.append(f"overview_fps must be a finite number > 0, got {fps!r}")
        if not problems and self.min_frame_pixels > self.max_frame_pixels:
            problems.append(
                f"min_frame_pixels ({self.min_frame_pixels}) must be <= max_frame_pixels ({self.max_frame_pixels})"
            )
        if not problems and self.max_overview_frames > self.max_images:
            problems.append(
                f"max_overview_frames ({self.max_overview_frames}) must be <= max_images ({self.max_images})"
            )
        if not problems and self.max_new_tokens > self.max_response_tokens:
            problems.append(
                f"max_new_tokens ({self.max_new_tokens}) must be <= max_response_tokens ({self.max_response_tokens})"
            )
        if problems:
            raise ValueError("invalid agent budget: " + "; ".join(problems))

    @property
    def last_turn(self) -> int:
        """Index (from 0) of the last assistant turn, the one that may not call."""
        return self.max_assistant_turns - 1

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_section(cls, section: Mapping[str, Any] | None, where: str) -> AgentBudget:
        """The budget a recipe section gives (the rollout's ``agent:`` section, read by the rollout and the reward
        alike): its budget keys; the section's other keys are its owner's. ValueError names ``where.key``."""
        names = {f.name for f in fields(cls)}
        picked = {k: v for k, v in (section or {}).items() if k in names}
        return build(cls, picked, where)


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
