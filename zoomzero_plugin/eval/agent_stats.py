"""Tool statistics of agent predictions (records with a ``transcript``): for report.md, metrics.json and plots.

Per question: calls that returned frames, turns, error turns (by error code), frames the calls returned, how the
trajectory ended. Aggregated: the calls-per-question histogram, means, the error rate (error turns / call
turns), and accuracy by number of calls (the benchmark's own correctness of each question). Predictions of the
no-tool baseline (``--no-tool``: transcripts of prompt ``notool``) get their own short section and no plots.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from ..agent.baseline import NO_TOOL
from . import plots
from .metrics import QuestionScore

FIGURES = {
    "agent_calls": "Calls per question",
    "agent_accuracy_by_calls": "Accuracy by number of calls",
    "agent_frames": "Frames returned by calls per question",
    "agent_errors": "Error turns by cause",
}


@dataclass(frozen=True)
class ToolStats:
    questions: int  # questions with a transcript
    calls_histogram: dict[int, int]  # calls that returned frames -> questions
    mean_calls: float
    mean_turns: float
    mean_clip_frames: float
    mean_images: float  # overview + clip frames the model saw
    call_turns: int  # turns that called the tool (errors included)
    error_turns: int
    error_rate: float  # percent of call turns
    errors_by_code: dict[str, int]
    ends: dict[str, int]
    accuracy_by_calls: list[plots.Bin] = field(default_factory=list)
    clip_frames_histogram: dict[int, int] = field(default_factory=dict)
    tool: bool = True  # False: every transcript is the no-tool baseline's

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["calls_histogram"] = {str(k): v for k, v in self.calls_histogram.items()}
        d["clip_frames_histogram"] = {str(k): v for k, v in self.clip_frames_histogram.items()}
        return d


def summarize(predictions: Sequence[Mapping[str, Any]], scores: Sequence[QuestionScore]) -> ToolStats | None:
    """Statistics over the predictions that carry a transcript (the last record of a qid wins); None if none do."""
    transcripts = {
        str(p["qid"]): p["transcript"]
        for p in predictions
        if isinstance(p, Mapping) and isinstance(p.get("transcript"), Mapping) and "qid" in p
    }
    if not transcripts:
        return None
    correct = {q.qid: q.correct for q in scores}
    calls, turns, frames, images, codes, ends = [], [], [], [], Counter(), Counter()
    call_turns = 0
    by_calls: dict[int, list[bool]] = {}
    for qid, t in transcripts.items():
        n_calls = int(t.get("calls") or 0)
        calls.append(n_calls)
        turns.append(len(t.get("turns") or ()))
        frames.append(int(t.get("clip_frames") or 0))
        images.append(int(t.get("images") or 0))
        ends[str(t.get("end"))] += 1
        for turn in t.get("turns") or ():
            call_turns += turn.get("kind") == "call"
            if turn.get("error"):
                codes[str(turn["error"].get("code"))] += 1
        by_calls.setdefault(n_calls, []).append(bool(correct.get(qid, False)))
    errors = sum(codes.values())
    accuracy = [plots.Bin(str(k), len(v), 100.0 * fmean(v)) for k, v in sorted(by_calls.items())]
    return ToolStats(
        questions=len(transcripts),
        calls_histogram=dict(sorted(Counter(calls).items())),
        mean_calls=fmean(calls),
        mean_turns=fmean(turns),
        mean_clip_frames=fmean(frames),
        mean_images=fmean(images),
        call_turns=call_turns,
        error_turns=errors,
        error_rate=100.0 * errors / call_turns if call_turns else 0.0,
        errors_by_code=dict(codes.most_common()),
        ends=dict(ends.most_common()),
        accuracy_by_calls=accuracy,
        clip_frames_histogram=dict(sorted(Counter(frames).items())),
        tool=any(t.get("prompt") != NO_TOOL for t in transcripts.values()),
    )


def section(stats: ToolStats, table) -> str:
    """report.md's tool-use section; ``table(headers, rows)`` renders a markdown table."""
    if not stats.tool:
        return "\n\n".join(
            [
                "## No tool (VideoZoomer's baseline)",
                (
                    "The model answered without the <video_zoom> tool (`--no-tool`, the authors' eval_video_notool.sh "
                    "setting): the video as one video, one reply. Run `--mode agent` on the same data to compare."
                ),
                table(["questions", "frames / q"], [[stats.questions, f"{stats.mean_images:.1f}"]]),
                "### How replies ended\n\n" + table(["end", "questions"], [[k, v] for k, v in stats.ends.items()]),
            ]
        )
    summary = table(
        [
            "questions",
            "calls / q",
            "turns / q",
            "clip frames / q",
            "images / q",
            "call turns",
            "error turns",
            "error rate %",
        ],
        [
            [
                stats.questions,
                f"{stats.mean_calls:.2f}",
                f"{stats.mean_turns:.2f}",
                f"{stats.mean_clip_frames:.1f}",
                f"{stats.mean_images:.1f}",
                stats.call_turns,
                stats.error_turns,
                stats.error_rate,
            ]
        ],
    )
    parts = [
        "## Tool use (agent)",
        summary,
        "### Calls per question\n\n"
        + table(["calls", "questions"], [[str(k), v] for k, v in stats.calls_histogram.items()]),
        "### Accuracy by number of calls\n\n"
        + table(["calls", "n", "Acc"], [[b.label, b.n, b.value] for b in stats.accuracy_by_calls]),
        "### How trajectories ended\n\n" + table(["end", "questions"], [[k, v] for k, v in stats.ends.items()]),
    ]
    if stats.errors_by_code:
        parts.append(
            "### Error turns by cause\n\n"
            + table(["error", "turns"], [[k, v] for k, v in stats.errors_by_code.items()])
        )
    return "\n\n".join(parts)


def write_plots(stats: ToolStats | None, out_dir: Path, title: str) -> list[tuple[str, str]]:
    """Draw the agent plots (removing stale ones when ``stats`` is None); (caption, file name) of each."""
    figures = []
    if stats is not None and stats.tool:

        def bars(counts: Mapping[Any, int]) -> list[plots.Bin]:
            return [plots.Bin(str(k), v, float(v)) for k, v in counts.items()]

        drawn = {
            "agent_calls": (bars(stats.calls_histogram), "calls that returned frames", "questions"),
            "agent_accuracy_by_calls": (stats.accuracy_by_calls, "calls that returned frames", "Acc (%)"),
            "agent_frames": (bars(stats.clip_frames_histogram), "frames returned by calls", "questions"),
            "agent_errors": (bars(stats.errors_by_code), "error", "turns"),
        }
        for name, (bins, xlabel, ylabel) in drawn.items():
            if bins:
                ylim = 105 if ylabel.startswith("Acc") else max(b.value for b in bins) * 1.15 + 1
                plots.plot_bins(bins, xlabel, ylabel, f"{FIGURES[name]} ({title})", out_dir / f"{name}.png", ylim=ylim)
                figures.append((FIGURES[name], f"{name}.png"))
    kept = {file for _, file in figures}
    for name in FIGURES:
        if f"{name}.png" not in kept:
            (out_dir / f"{name}.png").unlink(missing_ok=True)
    return figures
