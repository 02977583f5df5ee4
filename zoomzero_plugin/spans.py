"""Time spans (seconds) and the algebra of span *sets*: validation, clamping, merging, overlap measures.

A span set is always reduced to its union before it is measured, so ``[(0, 5), (3, 8)]`` counts as
``[(0, 8)]``. All measures are total: empty sets give 0, never an exception.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

Span = tuple[float, float]

MAX_SECONDS = 1e6  # ~11.6 days: anything later is treated as garbage, not as video time


def check_span(start: Any, end: Any, duration: float | None = None) -> str | None:
    """Why ``(start, end)`` is not a usable span, or None if it is. Reasons are short snake_case words."""
    try:
        s, e = float(start), float(end)
    except (TypeError, ValueError, OverflowError):
        return "not_a_number"
    if not (math.isfinite(s) and math.isfinite(e)):
        return "not_finite"
    if s < 0 or e < 0:
        return "negative"
    if s > e:
        return "reversed"
    if e > MAX_SECONDS:
        return "absurd"
    if duration is not None and s >= duration:
        return "outside_video"
    return None


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Sorted union of spans; touching or overlapping spans become one. Zero-length spans are kept."""
    return _merge_sorted(sorted((float(s), float(e)) for s, e in spans))


def _merge_sorted(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    start = end = None
    for s, e in spans:
        if start is not None and s <= end:
            end = max(end, e)
        else:
            if start is not None:
                merged.append((start, end))
            start, end = s, e
    if start is not None:
        merged.append((start, end))
    return merged


def clean_spans(
    raw: Iterable[Any], duration: float | None = None, keep_points: bool = False
) -> tuple[list[Span], list[str]]:
    """Validate, clamp to ``[0, duration]`` and merge raw ``(start, end)`` pairs.

    Returns the merged valid spans and one reason per rejected item. Zero-length spans are rejected
    as ``"empty"`` unless ``keep_points`` (ground-truth point annotations exist in NExT-GQA).
    """
    valid: list[Span] = []
    problems: list[str] = []
    for item in raw:
        try:
            start, end = item
        except (TypeError, ValueError):
            problems.append("not_a_pair")
            continue
        reason = check_span(start, end, duration)
        if reason is None:
            s, e = float(start), float(end)
            if duration is not None:
                e = min(e, float(duration))
            if e == s and not keep_points:
                reason = "empty"
            else:
                valid.append((s, e))
        if reason is not None:
            problems.append(reason)
    return merge_spans(valid), problems


def clean_pairs(
    starts: Sequence[float], ends: Sequence[float], duration: float | None = None
) -> tuple[list[Span], int]:
    """``clean_spans(zip(starts, ends), duration)`` of float pairs (a parsed span list, as two columns), with the
    number of rejected pairs instead of their reasons: the same spans, in comprehensions (no call per pair).

    A pair is kept when ``0 <= s <= e <= MAX_SECONDS`` (false for nan and ±inf, so finite), its start is not at or
    after ``duration``, and it is not empty once its end is clamped to ``duration``.
    """
    if not starts:
        return [], 0
    if duration is None:
        kept = [(s, e) for s, e in zip(starts, ends) if 0 <= s < e <= MAX_SECONDS]
    else:
        d = float(duration)
        kept = [(s, min(e, d)) for s, e in zip(starts, ends) if 0 <= s <= e <= MAX_SECONDS and not s >= d]
        kept = [p for p in kept if p[1] != p[0]]
    return _merge_sorted(sorted(kept)), len(starts) - len(kept)


def total_length(spans: Sequence[Span]) -> float:
    """Length of the union of ``spans``."""
    return sum(e - s for s, e in merge_spans(spans))


def intersection_length(a: Sequence[Span], b: Sequence[Span]) -> float:
    """Length of (∪a) ∩ (∪b), by a two-pointer sweep over the merged unions."""
    a, b = merge_spans(a), merge_spans(b)
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else 0.0


def iou(pred: Sequence[Span], gt: Sequence[Span]) -> float:
    """|∪pred ∩ ∪gt| / |∪pred ∪ ∪gt|; 0 when either side is empty."""
    if not pred or not gt:
        return 0.0
    inter = intersection_length(pred, gt)
    return _ratio(inter, total_length(pred) + total_length(gt) - inter)


def iop(pred: Sequence[Span], gt: Sequence[Span]) -> float:
    """Intersection over the prediction's length (NExT-GQA's IoP, on unions)."""
    return _ratio(intersection_length(pred, gt), total_length(pred)) if pred and gt else 0.0


def iog(pred: Sequence[Span], gt: Sequence[Span]) -> float:
    """Intersection over the ground truth's length (Zoom-Zero's mIoG, on unions)."""
    return _ratio(intersection_length(pred, gt), total_length(gt)) if pred and gt else 0.0


def widen_spans(spans: Sequence[Span], min_length: float, duration: float) -> list[Span]:
    """Grow each span shorter than ``min_length`` around its centre, inside ``[0, duration]``; merge."""
    out = []
    min_length = min(min_length, duration)
    for s, e in spans:
        if e - s < min_length:
            c = (s + e) / 2
            s = min(max(0.0, c - min_length / 2), duration - min_length)
            e = s + min_length
        out.append((s, e))
    return merge_spans(out)
