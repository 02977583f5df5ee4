"""Evaluation reports: ``metrics.json``, ``report.md`` (the paper's table for the benchmark) and PNG plots.

``finalize(out_dir, benchmark, truths, reduction)`` is what ``zoomzero eval`` calls at the end of a run:
it reads ``out_dir/predictions.jsonl`` and writes, atomically, next to it:

- ``metrics.json``  ``{"benchmark", "reduction", "rule", "letters", "source", "metrics": {...}, "bins": {...}}``
- ``report.md``     the paper-layout table, counts, per-category accuracy, binned tables, the plots
- ``iou_distribution.png``, ``miou_by_clue_duration.png``, ``miou_by_clue_proportion.png`` (benchmarks
  with ground-truth spans), ``accuracy_by_video_length.png`` (all).
- agent predictions (with transcripts) add tool statistics (:mod:`.agent_stats`): ``metrics.json``'s
  ``agent``, a report section and ``agent_*.png``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

from ..files import write_text
from ..ground_truth import GroundTruth
from . import agent_stats, plots
from .metrics import BREAKDOWN_KEYS, QuestionScore, aggregate, get_benchmark, reduction_rule, score_questions
from .predictions import read_predictions

PREDICTIONS_FILE, METRICS_FILE, REPORT_FILE = "predictions.jsonl", "metrics.json", "report.md"
COUNTS = (
    ("questions", "questions"),
    ("predicted", "predicted"),
    ("missing", "missing"),
    ("duplicates", "duplicates"),
    ("no answer", "no_answer"),
    ("invalid spans", "invalid_spans"),
    ("scored (accuracy)", "scored_accuracy"),
    ("scored (grounding)", "scored_grounding"),
)


class BinnedView(NamedTuple):
    title: str  # of the report's table and of the plot
    measure: str  # the value column: mIoU or Acc
    axis: str  # what is binned


BINNED = {  # file stem -> view
    "miou_by_clue_duration": BinnedView("mIoU by ground-truth clue duration", "mIoU", "clue duration"),
    "miou_by_clue_proportion": BinnedView("mIoU by clue proportion of the video", "mIoU", "clue / video length"),
    "accuracy_by_video_length": BinnedView("Accuracy by video length", "Acc", "video length"),
}
RULES = {
    "first": "only the first predicted span as written, against the best ground-truth window",
    "merged": "all predicted spans merged into one union, unclamped",
    "union": "all valid predicted spans clamped to the video and merged",
}


def _cell(value: float | int | None) -> str:
    if value is None:
        return "–"
    return str(value) if isinstance(value, int) else f"{value:.1f}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(c if isinstance(c, str) else _cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def metric_table(benchmark: str, metrics: Mapping[str, float | int]) -> str:
    """The benchmark's paper-layout table (percentages, one decimal; – where a metric does not apply)."""
    columns = get_benchmark(benchmark).table()
    return markdown_table([h for h, _ in columns], [[metrics.get(k) for _, k in columns]])


def counts_table(metrics: Mapping[str, float | int]) -> str:
    return markdown_table([h for h, _ in COUNTS], [[metrics.get(k) for _, k in COUNTS]])


def _breakdown_tables(metrics: Mapping[str, float | int]) -> list[str]:
    out = []
    for key in BREAKDOWN_KEYS:
        pattern = re.compile(rf"Acc\[{re.escape(key)}=(.*)\]")
        rows = [
            [m.group(1), metrics[f"n[{key}={m.group(1)}]"], v]
            for k, v in metrics.items()
            if (m := pattern.fullmatch(k))
        ]
        if rows:
            out.append(f"## Accuracy by {key}\n\n" + markdown_table([key, "n", "Acc"], rows))
    return out


def _bins_table(view: BinnedView, bins: Sequence[plots.Bin]) -> str:
    return f"## {view.title}\n\n" + markdown_table(
        [view.axis, "n", view.measure], [[b.label, b.n, b.value] for b in bins]
    )


def write_report(
    out_dir: str | os.PathLike,
    benchmark: str,
    predictions: list[dict],
    truths: Mapping[str, GroundTruth],
    reduction: str = "official",
    source: str | None = None,
) -> dict[str, float | int]:
    """Score ``predictions`` and write metrics.json, report.md and the plots into ``out_dir``.

    Returns the metrics dict (as :func:`.metrics.score_predictions`). ``source`` names the predictions
    file in the report.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    bench, rule = get_benchmark(benchmark), reduction_rule(benchmark, reduction)
    scores, duplicates = score_questions(benchmark, predictions, dict(truths), reduction)
    metrics = aggregate(benchmark, scores, duplicates)
    acc, ground = bench.accuracy_population(scores), bench.grounding_population(scores)

    bins = {}
    if ground:
        bins["miou_by_clue_duration"] = plots.miou_by_clue_seconds(ground)
        bins["miou_by_clue_proportion"] = plots.miou_by_clue_proportion(ground)
    bins["accuracy_by_video_length"] = plots.accuracy_by_video_length(acc)
    figures = _write_plots(out_dir, f"{benchmark} · {reduction}", ground, bins)
    tools = agent_stats.summarize(predictions, scores)
    figures += agent_stats.write_plots(tools, out_dir, benchmark)

    write_text(
        out_dir / METRICS_FILE,
        json.dumps(
            {
                "benchmark": benchmark,
                "reduction": reduction,
                "rule": RULES[rule],
                "letters": bench.letter_rule.name,
                "source": bench.source,
                "metrics": metrics,
                "bins": {k: [asdict(b) for b in v] for k, v in bins.items()},
                **({"agent": tools.to_dict()} if tools else {}),
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
    )
    extra = [agent_stats.section(tools, markdown_table)] if tools else []
    write_text(out_dir / REPORT_FILE, _report_text(benchmark, reduction, rule, source, metrics, bins, figures, extra))
    return metrics


def _write_plots(
    out_dir: Path, title: str, ground: Sequence[QuestionScore], bins: Mapping[str, Sequence[plots.Bin]]
) -> list[tuple[str, str]]:
    """Draw the plots that apply; remove stale ones an earlier report in ``out_dir`` left behind."""
    figures = []
    if ground:
        plots.plot_iou_distribution(
            [q.iou for q in ground], f"IoU distribution ({title})", out_dir / "iou_distribution.png"
        )
        figures.append(("IoU distribution", "iou_distribution.png"))
    for name, view in BINNED.items():
        if bins.get(name):
            plots.plot_bins(
                bins[name], view.axis, f"{view.measure} (%)", f"{view.title} ({title})", out_dir / f"{name}.png"
            )
            figures.append((view.title, f"{name}.png"))
    drawn = {file for _, file in figures}
    for name in ["iou_distribution", *BINNED]:
        if f"{name}.png" not in drawn:
            (out_dir / f"{name}.png").unlink(missing_ok=True)
    return figures


def _report_text(benchmark, reduction, rule, source, metrics, bins, figures, extra=()) -> str:
    bench = get_benchmark(benchmark)
    parts = [
        f"# {benchmark} evaluation",
        f"Predictions: `{source or PREDICTIONS_FILE}` · reduction **{reduction}** ({RULES[rule]}) · "
        f"answer letters read by {bench.letter_rule.name} · metrics as defined by {bench.source}. "
        "Values are percentages.",
        metric_table(benchmark, metrics),
        "## Counts\n\n" + counts_table(metrics),
        *_breakdown_tables(metrics),
    ]
    parts += [_bins_table(BINNED[k], v) for k, v in bins.items() if v]
    parts += list(extra)
    parts.append("## Plots")
    parts += [f"![{caption}]({name})" for caption, name in figures]
    return "\n\n".join(parts) + "\n"


def finalize(
    out_dir: Path,
    benchmark: str,
    truths: dict[str, GroundTruth],
    reduction: str = "official",
) -> dict:
    """Read ``out_dir/predictions.jsonl``; write metrics.json, report.md and plots there; return the metrics."""
    path = Path(out_dir) / PREDICTIONS_FILE
    return write_report(out_dir, benchmark, read_predictions(path), truths, reduction, source=str(path))
