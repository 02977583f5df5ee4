"""From upstream items to dataset rows: resolve videos and durations, check spans, count every skip.

``convert(format, options)`` is the library entry point behind ``zoomzero data convert``. Each item goes
through its format's ``draft`` and then, in order: video resolution (``missing_video``), duration
(``unknown_duration`` / ``unreadable_video``), ``--min-duration`` (``too_short``), span checks
(``invalid_span`` / ``span_outside_video``; ends up to ``span_tolerance`` past the end, and starts up to
it below 0, are clamped), ambiguous text answers (kept as the first matching option, or
``ambiguous_answer``), question-id uniqueness (``duplicate_qid``), and finally
:func:`zoomzero_plugin.gvqa.prompts.grounding_row`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..gvqa.prompts import DEFAULT_PROMPT_STYLE, check_style, grounding_row
from ..rows import GT_WINDOWS_KEY
from ..spans import Span, check_span, merge_spans
from ..video import probe_duration
from .formats.base import REASONS, VIDEO_SUFFIXES, Draft, Format, Skip

# grounding_row's own arguments and the ground truth's fields: an upstream extra with one of these names is
# stored as "upstream_<name>" instead of clobbering it.
RESERVED = frozenset({"qid", "question", "options", "answer", "duration", "video", "spans", "prompt", "source"})


@dataclass(frozen=True)
class Options:
    """How drafts become rows. ``durations`` maps a draft's ``video_id`` to seconds."""

    video_roots: tuple[Path, ...]
    video_exts: tuple[str, ...] = ("mp4",)
    check_videos: bool = True  # False: trust the paths (videos not downloaded yet); nothing is probed
    durations: Mapping[str, float] = field(default_factory=dict)
    min_duration: float = 0.0
    span_tolerance: float = 1.0  # seconds a span may reach past either end of the video before the row is skipped
    ambiguous: str = (
        "first"  # an answer text equal to several options: "first" keeps the first (as official loaders do), "skip"
    )
    source: str | None = None  # stored as "source" in each answer; default: the format name
    prompt_style: str = DEFAULT_PROMPT_STYLE  # the rows' grounding prompt: paper (word for word) | concise

    def __post_init__(self) -> None:
        if self.ambiguous not in ("first", "skip"):
            raise ValueError(f"ambiguous must be 'first' or 'skip', got {self.ambiguous!r}")
        check_style(self.prompt_style)
        if not self.video_roots:
            raise ValueError("at least one video root is needed")


NOTES: dict[str, str] = {
    "clamped_end": "span end(s) past the video end (within --span-tolerance) clamped to it",
    "clamped_start": "span start(s) below 0 s (within --span-tolerance) clamped to 0",
    "ambiguous_first": "answer text(s) equal to several options: the first such option is the answer "
    "(answer_matches in the row lists all)",
    "probed_duration": "duration(s) probed from the video files",
}


@dataclass
class Report:
    """What a conversion did: rows written, rows skipped by reason (with the first few ids), notes."""

    format: str
    items: int = 0
    written: int = 0
    skipped: Counter = field(default_factory=Counter)
    examples: dict[str, list[list[str]]] = field(default_factory=dict)
    notes: Counter = field(default_factory=Counter)
    videos_checked: bool = True
    keep_examples: int = 5

    def skip(self, reason: str, qid: str, detail: str) -> None:
        self.skipped[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < self.keep_examples:
            shown.append([qid, detail])

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "items": self.items,
            "written": self.written,
            "skipped": dict(self.skipped.most_common()),
            "examples": self.examples,
            "notes": dict(self.notes),
            "videos_checked": self.videos_checked,
        }

    def table(self) -> str:
        lines = [
            f"{self.format}: {self.items} items read, {self.written} rows written, {sum(self.skipped.values())} skipped"
        ]
        for reason, n in self.skipped.most_common():
            lines.append(f"  {reason:<22} {n:>7}  {REASONS[reason]}")
            for qid, detail in self.examples.get(reason, []):
                lines.append(f"      e.g. {qid}: {detail}")
        for note, n in self.notes.items():
            lines.append(f"  note: {n} {NOTES[note]}")
        if not self.videos_checked:
            lines.append(
                "  note: video files NOT checked (--no-video-check): rows point where the videos are "
                "expected; run `zoomzero data check` once they are downloaded"
            )
        return "\n".join(lines)


class _Videos:
    """Finds a draft's video under the roots; probes each file's duration once (several in parallel)."""

    def __init__(self, options: Options):
        self.options = options
        self.roots = [r.expanduser().resolve() for r in options.video_roots]
        self.exts = [e if e.startswith(".") else f".{e}" for e in options.video_exts]
        self._durations: dict[str, float | Exception] = {}

    def _paths(self, candidate: str) -> list[Path]:
        names = [candidate] if Path(candidate).suffix.lower() in VIDEO_SUFFIXES else [candidate + e for e in self.exts]
        if Path(candidate).is_absolute():
            return [Path(n) for n in names]
        return [root / n for root in self.roots for n in names]

    def resolve(self, draft: Draft) -> str:
        paths = [p for c in draft.videos for p in self._paths(c)]
        if not self.options.check_videos:
            return str(paths[0])
        for path in paths:
            if path.is_file():
                return str(path)
        others = f" (and {len(paths) - 1} other candidates)" if len(paths) > 1 else ""
        raise Skip("missing_video", f"{paths[0]}{others}")

    def prefetch(self, paths: Sequence[str], workers: int, progress: bool | None) -> None:
        """Probe ``paths`` with ``workers`` threads (the decoder releases the GIL)."""
        from concurrent.futures import ThreadPoolExecutor

        from tqdm import tqdm

        def probe(path: str) -> float | Exception:
            try:
                return probe_duration(path)
            except Exception as e:  # noqa: BLE001  (any decoder failure is the file's fault)
                return e

        todo = sorted(set(paths) - set(self._durations))
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            results = tqdm(
                pool.map(probe, todo),
                total=len(todo),
                desc="probe durations",
                unit="video",
                disable=None if progress is None else not progress,
            )
            self._durations.update(zip(todo, results, strict=True))

    def duration(self, path: str) -> float:
        if path not in self._durations:
            self.prefetch([path], 1, False)
        value = self._durations[path]
        if isinstance(value, Exception):
            reason = str(value).splitlines()[0][:120] if str(value) else type(value).__name__
            raise Skip("unreadable_video", f"{path}: {reason}")
        return value


def _duration_source(draft: Draft, options: Options) -> str:
    """Where a draft's duration comes from: annotation, durations (--durations), probe, or unknown."""
    if draft.duration is not None and not (draft.approx_duration and options.check_videos):
        return "annotation"
    if draft.video_id in options.durations:
        return "durations"
    if options.check_videos:
        return "probe"
    return "annotation" if draft.duration is not None else "unknown"


def _duration(draft: Draft, video: str, videos: _Videos, report: Report) -> float:
    source = _duration_source(draft, videos.options)
    if source == "annotation":
        return draft.duration
    if source == "durations":
        return float(videos.options.durations[draft.video_id])
    if source == "probe":
        report.notes["probed_duration"] += 1
        return videos.duration(video)
    raise Skip("unknown_duration", f"video {draft.video_id!r}: pass --durations or let the video be probed")


def _spans(raw: Sequence[Any], duration: float, tolerance: float, report: Report) -> list[Span]:
    out = []
    for item in raw:
        try:
            start, end = item
        except (TypeError, ValueError):
            raise Skip("invalid_span", f"{item!r} is not a (start, end) pair") from None
        reason = check_span(0.0 if -tolerance <= _number(start) < 0 else start, end)  # tiny negatives: clamped below
        if reason is not None:
            raise Skip("invalid_span", f"({start}, {end}): {reason}")
        start, end = float(start), float(end)
        if start >= duration or end > duration + tolerance:
            raise Skip("span_outside_video", f"({start:g}, {end:g}) in a {duration:g} s video")
        if end > duration:
            report.notes["clamped_end"] += 1
            end = duration
        if start < 0:
            report.notes["clamped_start"] += 1
            start = 0.0
        out.append((start, end))
    return out


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def _row(draft: Draft, video: str, videos: _Videos, seen: set[str], report: Report, source: str) -> dict[str, Any]:
    """The checked row of one located draft; raises Skip."""
    options = videos.options
    duration = _duration(draft, video, videos, report)
    if not duration > 0 or duration == float("inf"):
        raise Skip("unknown_duration", f"duration {duration!r}")
    duration = round(duration, 3)
    if duration < options.min_duration:
        raise Skip("too_short", f"{duration:g} s < --min-duration {options.min_duration:g} s")
    spans = _spans(draft.spans, duration, options.span_tolerance, report)
    extra = {f"upstream_{k}" if k in RESERVED else k: v for k, v in draft.extra.items() if v is not None}
    if len(draft.answer_matches) > 1:
        if options.ambiguous == "skip":
            raise Skip("ambiguous_answer", f"the answer text is options {list(draft.answer_matches)}")
        report.notes["ambiguous_first"] += 1
        extra["answer_matches"] = list(draft.answer_matches)
    if draft.qid in seen:
        raise Skip("duplicate_qid", f"{draft.qid!r} seen before")
    raw = [(float(s), float(e)) for s, e in draft.spans]
    if merge_spans(spans) != raw:  # clamped or merged: keep the benchmark's own windows for its metrics
        extra[GT_WINDOWS_KEY] = [list(s) for s in raw]
    try:
        return grounding_row(
            qid=draft.qid,
            question=draft.question,
            options=draft.options,
            answer=draft.answer,
            duration=duration,
            video=video,
            spans=spans,
            source=source,
            style=options.prompt_style,
            **extra,
        )
    except ValueError as e:
        raise Skip("unknown_format", str(e)) from None


def convert(
    fmt: Format, options: Options, progress: bool | None = None, examples: int = 5, workers: int = 4
) -> tuple[list[dict[str, Any]], Report]:
    """Rows for every convertible item of ``fmt`` and the report of what was skipped and why.

    Two passes: drafts and video lookup, then (after probing the durations the annotations lack, with
    ``workers`` threads) the checked rows. ``progress``: tqdm bars (None: only on a terminal);
    ``examples``: ids kept per skip reason.
    """
    from tqdm import tqdm

    report = Report(format=fmt.name, videos_checked=options.check_videos, keep_examples=examples)
    videos = _Videos(options)
    items = fmt.items()
    report.items = len(items)
    located: list[tuple[Draft, str]] = []
    bar = tqdm(items, desc=f"convert {fmt.name}", unit="q", disable=None if progress is None else not progress)
    for index, item in enumerate(bar):
        qid = fmt.qid(item) or f"item {index + 1}"
        try:
            draft = fmt.draft(item)
            located.append((draft, videos.resolve(draft)))
        except Skip as skip:
            report.skip(skip.reason, skip.qid or qid, skip.detail)
    videos.prefetch([v for d, v in located if _duration_source(d, options) == "probe"], workers, progress)
    rows, seen = [], set()
    for draft, video in located:
        try:
            rows.append(_row(draft, video, videos, seen, report, options.source or fmt.name))
        except Skip as skip:
            report.skip(skip.reason, skip.qid or draft.qid, skip.detail)
            continue
        seen.add(draft.qid)
    report.written = len(rows)
    return rows, report


def video_roots_exist(roots: Sequence[Path]) -> list[Path]:
    """The roots that are not directories (for a clear CLI error)."""
    return [r for r in roots if not os.path.isdir(r)]
