"""Binned views of scored questions (the paper's Figure 3 style) and their PNG plots (matplotlib Agg).

``binned`` is pure and feeds both the report's tables and the bar charts. Bins are left-closed
``[lo, hi)``; empty bins are left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from ..files import write_atomic
from .metrics import QuestionScore

INF = math.inf
CLUE_SECONDS = (0, 2, 5, 10, 20, 40, 80, INF)
CLUE_PROPORTION = (0, 0.02, 0.05, 0.1, 0.2, 0.4, INF)
VIDEO_SECONDS = (0, 60, 180, 600, 1800, 3600, INF)


@dataclass(frozen=True)
class Bin:
    label: str
    n: int
    value: float  # percent


def _seconds(x: float) -> str:
    return f"{x / 60:g} min" if x >= 60 and x % 60 == 0 else f"{x:g} s"


def _label(lo: float, hi: float, fmt: Callable[[float], str]) -> str:
    return f"≥ {fmt(lo)}" if hi == INF else f"{fmt(lo)} – {fmt(hi)}"


def binned(
    scores: Sequence[QuestionScore],
    key: Callable[[QuestionScore], float],
    value: Callable[[QuestionScore], float],
    edges: Sequence[float],
    fmt: Callable[[float], str] = _seconds,
) -> list[Bin]:
    """Mean of ``value`` (×100) per bin of ``key``; ``edges`` ascending, the last may be ``inf``."""
    out = []
    for lo, hi in zip(edges, edges[1:]):
        members = [value(q) for q in scores if lo <= key(q) < hi]
        if members:
            out.append(Bin(_label(lo, hi, fmt), len(members), 100.0 * fmean(members)))
    return out


def _percent(x: float) -> str:
    return f"{100 * x:g}%"


def miou_by_clue_seconds(ground: Sequence[QuestionScore]) -> list[Bin]:
    return binned(ground, lambda q: q.gt_length, lambda q: q.iou, CLUE_SECONDS)


def miou_by_clue_proportion(ground: Sequence[QuestionScore]) -> list[Bin]:
    return binned(ground, lambda q: q.gt_length / q.duration, lambda q: q.iou, CLUE_PROPORTION, _percent)


def accuracy_by_video_length(acc: Sequence[QuestionScore]) -> list[Bin]:
    return binned(acc, lambda q: q.duration, lambda q: float(q.correct), VIDEO_SECONDS)


def _save(fig, path: Path) -> Path:
    return write_atomic(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight"))


def _figure():
    """A figure on matplotlib's Agg canvas, without pyplot: no global backend switch, nothing to close."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def plot_iou_distribution(ious: Sequence[float], title: str, path: Path) -> Path:
    fig, ax = _figure()
    ax.hist(list(ious), bins=20, range=(0.0, 1.0), color="#4C72B0", edgecolor="white")
    for t in (0.3, 0.5, 0.7):
        ax.axvline(t, color="grey", linestyle="--", linewidth=0.8)
    ax.set(xlabel="IoU", ylabel="questions", title=title, xlim=(0, 1))
    return _save(fig, path)


def plot_bins(bins: Sequence[Bin], xlabel: str, ylabel: str, title: str, path: Path, ylim: float = 105) -> Path:
    fig, ax = _figure()
    bars = ax.bar([b.label for b in bins], [b.value for b in bins], color="#55A868")
    ax.bar_label(bars, labels=[f"n={b.n}" for b in bins], fontsize=8)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title, ylim=(0, ylim))
    ax.tick_params(axis="x", labelrotation=20)
    return _save(fig, path)
