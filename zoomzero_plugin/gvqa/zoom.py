"""Zoom planning: Zoom-Zero Eq. 3 under Qwen-VL's visual token budget.

For a context budget of ``L_v`` visual tokens, per-frame bounds ``V_min..V_max`` tokens and a sampling
rate ``s`` over ``F`` seconds::

    N     = min(F·s, L_v / V_min)                 frames
    V_res = max(V_min, min(L_v / N, V_max))       tokens per frame

The coarse pass plans over the whole video; the fine (zoom) pass applies the same budget to the union
of predicted spans (``F' < F``), so each frame gets more tokens.

Units follow qwen-vl-utils: a frame of ``P`` pixels costs ``P / (factor² · temporal_patch)`` context
tokens (the model's :class:`~zoomzero_plugin.vision.VisionGeometry`: 28-px tokens and temporal patch 2 for
Qwen2.5-VL, 32-px tokens for Qwen3-VL), and ``total_pixels = L_v · factor²``. Frame counts are even (two frames
share one temporal patch). The decoded frame is at most ``frame_pixels``: qwen-vl-utils' ``smart_resize`` keeps the
aspect ratio and rounds each side down to a multiple of ``factor``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ..spans import Span, merge_spans, widen_spans
from ..video import DecodedClip, fetch_element
from ..vision import DEFAULT_GEOMETRY, VisionGeometry, fetch_patch_size

# The paper's per-frame bounds V_min..V_max, in tokens per video frame (16..768 tokens per two-frame temporal
# patch): pixel bounds follow from the model's geometry (paper_budget, ZoomBudget.with_geometry).
V_MIN_TOKENS, V_MAX_TOKENS = 8, 384


@dataclass(frozen=True)
class ZoomBudget:
    """The knobs of Eq. 3, with the paper's values as defaults (its budget for short grounded-QA videos).

    This is the one source of every budget default: ``zoomzero eval``/``data filter`` flags, the zoom pass's
    options and the shipped recipes take theirs from here (:data:`PAPER_BUDGETS` for the long-video one).
    Pixel bounds are per frame, as qwen-vl-utils' ``min_pixels``/``max_pixels``; a frame of ``P`` pixels costs
    ``P / (factor² · temporal_patch)`` context tokens (:meth:`frame_tokens`).
    """

    max_visual_tokens: int = 8192
    """L_v: visual context tokens one pass may spend (= qwen-vl-utils ``total_pixels / factor²``)."""
    min_frame_pixels: int = DEFAULT_GEOMETRY.frame_pixels(V_MIN_TOKENS)
    """V_min as pixels per frame (default 12,544 px = 8 tokens per frame of 28-px tokens, 16 per temporal patch)."""
    max_frame_pixels: int = DEFAULT_GEOMETRY.frame_pixels(V_MAX_TOKENS)
    """V_max as pixels per frame (default 602,112 px = 384 tokens per frame of 28-px tokens, 768 per temporal
    patch)."""
    fps: float = 1.0
    """s: frames sampled per second of the seconds a pass reads."""
    factor: int = DEFAULT_GEOMETRY.factor
    """Pixels per side of one visual token: the model's patch size × spatial merge (:meth:`with_geometry`)."""
    temporal_patch: int = DEFAULT_GEOMETRY.temporal_patch
    """Frames that share one temporal patch (the model's): a frame costs 1/temporal_patch of a patch's tokens."""
    max_frames: int = 256
    """Frames per pass at most (the paper's ≤ 256; the authors' zoom pass keeps ≤ 256 frames too)."""
    min_clip_seconds: float = 1.0
    """Seconds: shorter spans are widened to this, so every clip has ≥ 2 source frames."""

    def __post_init__(self) -> None:
        problems = [
            f"{name} must be {rule}, got {getattr(self, name)!r}"
            for name, rule, ok in (
                ("max_visual_tokens", "> 0", self.max_visual_tokens > 0),
                ("fps", "> 0", self.fps > 0),
                ("max_frames", ">= 2", self.max_frames >= 2),
                ("min_clip_seconds", "> 0", self.min_clip_seconds > 0),
                ("min_frame_pixels", "> 0", self.min_frame_pixels > 0),
            )
            if not ok
        ]
        if not problems and self.min_frame_pixels > self.max_frame_pixels:
            problems.append(
                f"min_frame_pixels ({self.min_frame_pixels}) must be <= max_frame_pixels ({self.max_frame_pixels})"
            )
        if problems:
            raise ValueError("invalid zoom budget: " + "; ".join(problems))

    def frame_tokens(self, pixels: float) -> float:
        """Context tokens one frame of ``pixels`` costs."""
        return pixels / (self.factor**2 * self.temporal_patch)

    def with_geometry(self, geometry: VisionGeometry) -> ZoomBudget:
        """This budget on a model of ``geometry`` (its token size and temporal patch; the pixel bounds as given)."""
        return replace(self, factor=geometry.factor, temporal_patch=geometry.temporal_patch)


# The fields of ZoomBudget a user sets (flags, recipe keys); factor and temporal_patch are the model's geometry.
BUDGET_KEYS = ("max_visual_tokens", "fps", "min_frame_pixels", "max_frame_pixels", "max_frames", "min_clip_seconds")

# The paper's budgets (Zoom-Zero App. B, as issue 13 states it; the authors' evaluation scripts use the same
# numbers): short grounded-QA videos 8,192 tokens at 1 fps; long videos 16,384 tokens, at most 256 frames.
PAPER_BUDGETS: dict[str, ZoomBudget] = {
    "short": ZoomBudget(),
    "long": ZoomBudget(max_visual_tokens=16384),
}
# What the fine pass does when the coarse pass gives no valid span, in evaluation and in RL alike: skip it (the
# coarse answer stands; in RL the zoom reward is 0) | uniform: it reads uniform frames over the whole video (the
# authors' released code).
NO_SPANS = ("skip", "uniform")
UNIFORM_FRAMES = 20  # frames of no_spans=uniform over the whole video: the authors' eval and RL code read ~20
BENCHMARK_BUDGETS: dict[str, str] = {
    "nextgqa": "short",
    "rextime": "short",
    "cgbench": "long",
    "videomme": "long",
    "mlvu": "long",
    "lvbench": "long",
}


def paper_budget(benchmark: str | None = None, geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ZoomBudget:
    """The paper's budget for ``benchmark`` (short videos' for unknown names or None) on a model of ``geometry``:
    V_min..V_max are :data:`V_MIN_TOKENS`..:data:`V_MAX_TOKENS` tokens per frame, as pixels of that model."""
    base = PAPER_BUDGETS[BENCHMARK_BUDGETS.get(benchmark or "", "short")].with_geometry(geometry)
    return replace(
        base, min_frame_pixels=geometry.frame_pixels(V_MIN_TOKENS), max_frame_pixels=geometry.frame_pixels(V_MAX_TOKENS)
    )


@dataclass(frozen=True)
class Clip:
    """One contiguous piece of video to decode: ``nframes`` frames between ``start`` and ``end``."""

    start: float
    end: float
    nframes: int


@dataclass(frozen=True)
class ZoomPlan:
    """Frames and per-frame size for one pass."""

    clips: tuple[Clip, ...]
    frame_pixels: int  # V_res, as pixels per frame (qwen-vl-utils ``max_pixels``)
    budget: ZoomBudget

    @property
    def frames(self) -> int:
        return sum(c.nframes for c in self.clips)

    @property
    def seconds(self) -> float:
        return sum(c.end - c.start for c in self.clips)

    @property
    def tokens_per_frame(self) -> float:
        return self.budget.frame_tokens(self.frame_pixels)

    @property
    def tokens(self) -> float:
        return self.frames * self.tokens_per_frame

    def video_elements(self, video: str) -> list[dict[str, Any]]:
        """qwen-vl-utils ``fetch_video`` elements, one per clip."""
        b = self.budget
        return [
            {
                "video": video,
                "video_start": c.start,
                "video_end": c.end,
                "nframes": c.nframes,
                "min_pixels": b.min_frame_pixels,
                "max_pixels": self.frame_pixels,
                # qwen-vl-utils caps max_pixels at total_pixels / nframes · 2: keep that cap at V_res
                "total_pixels": self.frame_pixels * c.nframes // b.temporal_patch + 1,
            }
            for c in self.clips
        ]


def _even(n: float) -> int:
    return max(2, 2 * int(round(n / 2)))


def plan_pass(spans: list[Span] | tuple[Span, ...], duration: float, budget: ZoomBudget = ZoomBudget()) -> ZoomPlan:
    """Plan Eq. 3 over the union of ``spans`` (widened to ``min_clip_seconds``) of a video.

    Frames are shared among clips in proportion to their length, at least 2 each.
    """
    if not math.isfinite(duration) or duration <= 0:
        raise ValueError(f"duration must be positive seconds, got {duration}")
    spans = widen_spans(merge_spans(spans), budget.min_clip_seconds, duration)
    if not spans:
        raise ValueError("plan_pass needs at least one span")
    seconds = sum(e - s for s, e in spans)
    v_min = budget.frame_tokens(budget.min_frame_pixels)
    v_max = budget.frame_tokens(budget.max_frame_pixels)
    n_total = min(seconds * budget.fps, budget.max_visual_tokens / v_min, budget.max_frames)
    clips = tuple(Clip(s, e, _even(n_total * (e - s) / seconds)) for s, e in spans)
    n = sum(c.nframes for c in clips)
    v_res = max(v_min, min(budget.max_visual_tokens / n, v_max))
    pixels = int(v_res * budget.factor**2 * budget.temporal_patch)
    return ZoomPlan(clips=clips, frame_pixels=max(budget.min_frame_pixels, pixels), budget=budget)


def plan_coarse(duration: float, budget: ZoomBudget = ZoomBudget()) -> ZoomPlan:
    """The whole video, ``[0, duration]``."""
    return plan_pass([(0.0, duration)], duration, budget)


def plan_zoom(
    spans: list[Span] | tuple[Span, ...], duration: float, budget: ZoomBudget = ZoomBudget()
) -> ZoomPlan | None:
    """The predicted spans, or None when there are none (the caller decides: 0 reward or uniform frames)."""
    return plan_pass(spans, duration, budget) if spans else None


def fetch_plan(plan: ZoomPlan, video: str) -> list[DecodedClip]:
    """Decode every clip of ``plan`` from ``video``; only frames inside the clips are read."""
    patch = fetch_patch_size(plan.budget.factor)
    return [fetch_element(e, image_patch_size=patch) for e in plan.video_elements(video)]
