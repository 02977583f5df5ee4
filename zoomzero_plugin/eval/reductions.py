"""How one question's predicted spans are measured against its ground truth: the span *reductions*.

A prediction may list several spans; benchmarks disagree on what that means. Each reduction maps
(raw predicted span items, ground truth) to :class:`Overlap` — IoU, IoP and IoG as fractions in [0, 1]:

- ``first``  (NExT-GQA ``eval_ground.py``, ReXTime ``rextime_eval.py``): only the FIRST item as written
  counts, unclamped, measured against each ground-truth window separately, keeping the best:
  IoU = max(0, overlap) / hull, IoP = max(0, overlap) / prediction length; a zero-length prediction
  has IoU 0 and IoP 1 if it lies inside a window (NExT-GQA's point rule). A first item that is not a
  pair of finite numbers, or is reversed, scores 0 (what the official arithmetic gives a reversed one).
- ``merged`` (CG-Bench ``run/utils.py``): every item that is a finite, non-reversed pair, merged into
  one union, unclamped; IoU = |P ∩ G| / |P ∪ G| on the unions.
- ``union`` (this project's ``iou`` reward): :func:`zoomzero_plugin.spans.clean_spans` — invalid items
  dropped, clamped to the video, zero-length dropped, merged; measured on unions.

IoG (Zoom-Zero's mIoG) is always |P ∩ ∪G| / |∪G|, P being what the reduction keeps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..ground_truth import GroundTruth
from ..rows import GT_WINDOWS_KEY as WINDOWS_KEY  # optional truth.extra key: the benchmark's raw windows
from ..spans import Span, clean_spans, intersection_length, iog, iop, iou, total_length


class Overlap(NamedTuple):
    iou: float
    iop: float
    iog: float


ZERO = Overlap(0.0, 0.0, 0.0)


def as_pair(item: Any) -> Span | None:
    """``(start, end)`` as finite floats (reversed allowed), or None when ``item`` is no such pair."""
    try:
        s, e = item
        s, e = float(s), float(e)
    except (TypeError, ValueError, OverflowError):
        return None
    return (s, e) if math.isfinite(s) and math.isfinite(e) else None


def truth_windows(truth: GroundTruth) -> list[Span]:
    """The ground-truth windows the official per-window rules compare against.

    ``truth.extra["gt_windows"]`` when a converter kept the benchmark's raw windows (GroundTruth merges
    touching spans and clamps them to the video); otherwise ``truth.spans``.
    """
    raw = truth.extra.get(WINDOWS_KEY)
    if raw is None:
        return list(truth.spans)
    windows = [as_pair(w) for w in raw] if isinstance(raw, (list, tuple)) else [None]
    if any(w is None for w in windows):
        raise ValueError(f"question {truth.qid}: '{WINDOWS_KEY}' must be a list of [start, end] pairs, got {raw!r}")
    return windows  # type: ignore[return-value]


def window_iou(pred: Span, gt: Span) -> float:
    """IoU of two single windows as NExT-GQA and ReXTime compute it: max(0, overlap) / hull."""
    overlap = min(pred[1], gt[1]) - max(pred[0], gt[0])
    hull = max(pred[1], gt[1]) - min(pred[0], gt[0])
    return overlap / hull if overlap > 0 and hull > 0 else 0.0


def window_iop(pred: Span, gt: Span) -> float:
    """NExT-GQA's IoP: overlap / prediction length; a point prediction scores 1 inside the window."""
    s, e = pred
    if s == e:
        return 1.0 if gt[0] <= s <= gt[1] else 0.0
    overlap = min(e, gt[1]) - max(s, gt[0])
    return overlap / (e - s) if e > s and overlap > 0 else 0.0


def _on_unions(pred: Sequence[Span], gt: Sequence[Span]) -> Overlap:
    return Overlap(iou(pred, gt), iop(pred, gt), iog(pred, gt))


def first_window(raw: Sequence[Any], truth: GroundTruth) -> Overlap:
    pred = as_pair(raw[0]) if raw else None
    if pred is None or pred[0] > pred[1]:
        return ZERO
    windows = truth_windows(truth)
    gt_len = total_length(truth.spans)
    inside = intersection_length([pred], truth.spans) if pred[1] > pred[0] else 0.0
    return Overlap(
        max((window_iou(pred, w) for w in windows), default=0.0),
        max((window_iop(pred, w) for w in windows), default=0.0),
        inside / gt_len if gt_len > 0 else 0.0,
    )


def merged(raw: Sequence[Any], truth: GroundTruth) -> Overlap:
    pairs = [p for p in map(as_pair, raw) if p is not None and p[0] <= p[1]]
    return _on_unions(pairs, truth.spans)


def union(raw: Sequence[Any], truth: GroundTruth) -> Overlap:
    return _on_unions(clean_spans(raw, truth.duration)[0], truth.spans)


REDUCTIONS: dict[str, Callable[[Sequence[Any], GroundTruth], Overlap]] = {
    "first": first_window,
    "merged": merged,
    "union": union,
}


def invalid_count(raw: Sequence[Any], truth: GroundTruth) -> int:
    """Items the core span rules reject: not a pair, not finite, negative, reversed, past the video, empty."""
    return len(clean_spans(raw, truth.duration)[1])
