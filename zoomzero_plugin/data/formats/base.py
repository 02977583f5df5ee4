"""What every upstream format shares: the draft of a row, the reasons a row is skipped, small readers.

A format turns one upstream item into a :class:`Draft` (or raises :class:`Skip`); the conversion
pipeline (:mod:`zoomzero_plugin.data.pipeline`) then resolves the video and duration, checks spans and
writes rows through :func:`zoomzero_plugin.gvqa.prompts.grounding_row`. Formats never build rows themselves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ...errors import DataError
from ...ground_truth import LETTERS
from ...readers import read_json, read_table

# Skip reasons: short keys used in reports, with what each one means.
REASONS: dict[str, str] = {
    "missing_video": "the video file is under none of the --video-root folders",
    "unreadable_video": "the video exists but the decoder cannot open it (needed for its duration)",
    "answer_not_in_options": "the answer is not one of the options",
    "ambiguous_answer": "the answer text matches more than one option (--ambiguous skip)",
    "span_outside_video": "a ground-truth span starts at or after the video's end, or ends more than --span-tolerance "
    "past it",
    "invalid_span": "a ground-truth span is not a (start, end) pair of finite seconds with 0 <= start <= end",
    "no_options": "the item has no options (open-ended question, or options missing from the release file)",
    "no_answer": "the item has no ground-truth answer (hidden test labels)",
    "unknown_duration": "no duration: not in the annotation, not in --durations, and the video could not be probed",
    "missing_annotation": "a companion file (spans, video map, options) has no entry for the item",
    "too_short": "the video is shorter than --min-duration",
    "duplicate_qid": "another row already has this question id",
    "unknown_format": "the item lacks a field the format needs, or a field has an unexpected type",
}

VIDEO_SUFFIXES = frozenset({".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v", ".flv", ".mpg", ".mpeg", ".npy"})


class Skip(Exception):
    """The item cannot become a row. ``reason`` is a key of :data:`REASONS`; ``detail`` says why."""

    def __init__(self, reason: str, detail: str = "", qid: str | None = None):
        if reason not in REASONS:
            raise ValueError(f"unknown skip reason {reason!r}")
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail, self.qid = reason, detail, qid


@dataclass
class Draft:
    """One question before the pipeline resolves its video and checks it.

    ``videos`` are candidate paths relative to a ``--video-root`` (or absolute), tried in order; a
    candidate without a video suffix gets each ``--video-ext`` appended. ``duration`` is None when the
    annotation has none (the pipeline asks ``--durations`` or probes the file); ``approx_duration``
    marks a coarse annotation (e.g. whole minutes) that a probed duration should replace.
    """

    qid: str
    question: str
    options: list[str]
    answer: str  # option letter
    videos: tuple[str, ...]
    duration: float | None = None
    spans: Sequence[Any] = ()
    video_id: str = ""  # key into --durations
    approx_duration: bool = False
    answer_matches: tuple[str, ...] = ()  # letters of every option equal to a text answer (> 1: ambiguous)
    extra: dict[str, Any] = field(default_factory=dict)


class Format:
    """One upstream annotation format. Subclasses set the class attributes and implement two methods.

    ``files`` maps the CLI inputs this format reads (``input``, ``gsub``, ``video_map``, ``options``)
    to a description of the upstream file; ``required`` names those that must be given.
    ``required_columns`` names the fields an ``--input`` file must have (a tuple entry: any one of those
    names); a file without one stops the conversion before anything is written.
    """

    name: ClassVar[str]
    title: ClassVar[str]  # one line for the format list
    reads: ClassVar[str]  # which upstream files and columns, for --help
    files: ClassVar[dict[str, str]] = {}
    required: ClassVar[tuple[str, ...]] = ("input",)
    required_columns: ClassVar[tuple[str | tuple[str, ...], ...]] = ()

    def __init__(self, inputs: Mapping[str, list[Path]]):
        self.inputs = inputs

    def items(self) -> Sequence[Any]:
        """Every upstream item (one per question), in file order. Default: the records of every --input."""
        return [row for path in self.inputs["input"] for row in self.records(path)]

    def records(self, path: Path) -> list[dict[str, Any]]:
        """The records of one ``--input`` file (strictly read), after checking it has :attr:`required_columns`."""
        columns, records = read_table(path)
        if records or columns:
            missing = [c for c in self.required_columns if not set((c,) if isinstance(c, str) else c) & set(columns)]
            if missing:
                names = ", ".join(c if isinstance(c, str) else " or ".join(c) for c in missing)
                need = ", ".join(c if isinstance(c, str) else "|".join(c) for c in self.required_columns)
                raise DataError(
                    f"{path}: lacks column(s) {names}; --from {self.name} needs {need} "
                    f"(the file has {', '.join(columns[:20]) or 'no columns'})"
                )
        return records

    def qid(self, item: Any) -> str | None:
        """The item's stable question id, or None when it has none. Never raises."""
        raise NotImplementedError

    def draft(self, item: Any) -> Draft:
        """The draft row for one item; raises :class:`Skip` when it cannot be one."""
        raise NotImplementedError


# --- readers -----------------------------------------------------------------------------------------


FORMATS: dict[str, type[Format]] = {}  # --from name -> format


def register(cls: type[Format]) -> type[Format]:
    """Class decorator: make ``cls`` available as ``--from cls.name``."""
    if cls.name in FORMATS:
        raise ValueError(f"format {cls.name!r} registered twice")
    FORMATS[cls.name] = cls
    return cls


def numbered_records(fmt: Format, paths: Sequence[Path]) -> list[tuple[str, int, dict[str, Any]]]:
    """``(file stem, index in the file, record)`` for every record: ids for formats that have none."""
    return [(Path(p).stem, i, row) for p in paths for i, row in enumerate(fmt.records(Path(p)))]


def json_object(path: Path, flag: str, values: type | tuple[type, ...], expected: str) -> dict[str, Any]:
    """A companion file that must be a JSON object whose values are all ``values`` (e.g. ``dict``).

    ``expected`` describes the upstream file for the message, which names the flag and the first bad value.
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{flag} {path}: a JSON {type(data).__name__}, expected {expected}")
    for key, value in data.items():
        if not isinstance(value, values):
            raise DataError(f"{flag} {path}: entry {key!r} is {value!r:.60}, expected {expected}")
    return data


# --- field helpers -----------------------------------------------------------------------------------


def need(item: Mapping[str, Any], *keys: str) -> Any:
    """``item[key]`` for each key (a tuple for several); raises Skip('unknown_format') naming a missing one."""
    if not isinstance(item, Mapping):
        raise Skip("unknown_format", f"item is a {type(item).__name__}, not an object")
    missing = [k for k in keys if item.get(k) is None]
    if missing:
        raise Skip("unknown_format", f"missing field(s) {missing}")
    values = tuple(item[k] for k in keys)
    return values[0] if len(values) == 1 else values


def first(item: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """The first of ``keys`` present (not None) in ``item``; ``default`` when none is (or item is no mapping)."""
    if not isinstance(item, Mapping):
        return default
    for k in keys:
        if item.get(k) is not None:
            return item[k]
    return default


def seconds(value: Any, what: str) -> float:
    """A finite number of seconds; raises Skip('unknown_format') otherwise."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise Skip("unknown_format", f"{what} {value!r} is not a number") from None
    if not math.isfinite(x):
        raise Skip("unknown_format", f"{what} {value!r} is not finite")
    return x


_LABEL = re.compile(r"^\s*\(?([A-Z])\s*[).:]\s*")


def strip_labels(options: Sequence[Any]) -> list[str]:
    """Option texts without ``(A) `` / ``A. `` labels, when every option carries its own label in order."""
    texts = [str(o).strip() for o in options]
    labels = [_LABEL.match(t) for t in texts]
    if texts and all(m and m.group(1) == LETTERS[i] for i, m in enumerate(labels)):
        return [t[m.end() :].strip() for t, m in zip(texts, labels, strict=True)]
    return texts


_LETTER = re.compile(r"^\s*\(?\s*([A-Za-z])\s*\)?\s*[.:]?\s*$")


def letter(value: Any, options: Sequence[str]) -> str:
    """The option letter in ``"C"``, ``"(C)"``, ``"c."`` or an int index; Skip if not among the options."""
    if isinstance(value, bool):
        raise Skip("answer_not_in_options", f"answer {value!r}")
    if isinstance(value, int):
        if 0 <= value < len(options):
            return LETTERS[value]
        raise Skip("answer_not_in_options", f"answer index {value} with {len(options)} options")
    m = _LETTER.match(str(value))
    if not m or m.group(1).upper() not in LETTERS[: len(options)]:
        raise Skip("answer_not_in_options", f"answer {value!r} with {len(options)} options")
    return m.group(1).upper()


def _norm(text: Any) -> str:
    return " ".join(str(text).split()).strip().rstrip(".").casefold()


def letter_of_text(answer: Any, options: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The letter of the option whose text is ``answer``, and the letters of every option that matches.

    Exact matches first, then whitespace/case/final-period blind ones. Several matches (two options
    read the same) give the first, as the benchmarks' own loaders do (``choices.index(answer)``); the
    pipeline keeps or skips such rows (``--ambiguous``).
    """
    exact = [i for i, o in enumerate(options) if str(o) == str(answer)]
    loose = exact or [i for i, o in enumerate(options) if _norm(o) == _norm(answer)]
    if not loose:
        raise Skip("answer_not_in_options", f"answer {str(answer)!r} is none of {len(options)} options")
    return LETTERS[loose[0]], tuple(LETTERS[i] for i in loose)


def option_list(options: Any) -> list[str]:
    """Options given as a list, or as ``{"option_0": …, "option_1": …}`` (ordered by index)."""
    if isinstance(options, Mapping):
        keyed = []
        for k, v in options.items():
            m = re.search(r"(\d+)$", str(k))
            if v is not None and m:
                keyed.append((int(m.group(1)), v))
        options = [v for _, v in sorted(keyed)]
    if not isinstance(options, (list, tuple)) or not options:
        raise Skip("no_options", f"options {options!r}")
    out = [str(o) for o in options if o is not None and str(o).strip()]
    if len(out) < 2:
        raise Skip("no_options", f"{len(out)} usable option(s)")
    if len(out) > len(LETTERS):
        raise Skip("unknown_format", f"{len(out)} options")
    return out


def span_list(raw: Any) -> list[Any]:
    """Spans as a list of pairs; a single flat ``[s, e]`` becomes ``[[s, e]]``; None becomes ``[]``."""
    if raw is None:
        return []
    if isinstance(raw, (list, tuple)) and len(raw) == 2 and all(isinstance(x, (int, float)) for x in raw):
        return [list(raw)]
    if not isinstance(raw, (list, tuple)):
        raise Skip("invalid_span", f"spans {raw!r} are not a list")
    return list(raw)
