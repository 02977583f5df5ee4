"""Prediction records: what any system says about each question, one JSON line per question.

``{"qid": str, "answer": "B", a reply or null, "spans": [[s, e], ...], "confidence": float or null, ...}``;
other keys are ignored. The answer is kept as written: its letter is read when it is scored, by the benchmark's
letter rule among the question's own options (:mod:`zoomzero_plugin.eval.metrics`). Spans are kept exactly as
written (order, invalid items and all): the benchmarks' official single-span rules read the *first* span as
written, and the report counts the invalid ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SETTINGS_FILE = "run.json"  # a `zoomzero eval` output folder's settings, beside its predictions.jsonl


@dataclass(frozen=True)
class Prediction:
    """One question's normalised prediction. ``spans`` holds the raw items, unvalidated."""

    qid: str
    answer: str | None  # as written: a letter or a reply ("B", "b.", "The answer is C"); None when not text
    spans: tuple[Any, ...]
    confidence: float | None = None


def to_prediction(record: Mapping[str, Any]) -> Prediction:
    """Normalise one record. Raises ValueError only when it is not an object or has no ``qid``.

    ``answer`` is kept when it is text (its letter is read when scored), else None. ``spans`` that is not a list
    counts as no spans.
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"a prediction must be a JSON object, got {type(record).__name__}")
    if record.get("qid") is None:
        raise ValueError(f"prediction has no 'qid': {dict(record)!r:.200}")
    answer = record.get("answer")
    spans = record.get("spans")
    confidence = record.get("confidence")
    try:
        confidence = None if confidence is None else float(confidence)
    except (TypeError, ValueError):
        confidence = None
    return Prediction(
        qid=str(record["qid"]),
        answer=answer if isinstance(answer, str) else None,
        spans=tuple(spans) if isinstance(spans, (list, tuple)) else (),
        confidence=confidence,
    )


def index_predictions(records: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Prediction], int]:
    """qid → prediction, the last record of a qid winning; also returns how many records were overridden."""
    out: dict[str, Prediction] = {}
    duplicates = 0
    for record in records:
        p = to_prediction(record)
        duplicates += p.qid in out
        out[p.qid] = p
    return out, duplicates


@dataclass(frozen=True)
class PredictionsFile:
    """A predictions file as read: its records and what was skipped.

    ``torn`` is 1 when the last line was cut short (no newline, not JSON: a writer killed mid-line) and skipped;
    ``journal`` is True when the file is a ``zoomzero eval`` output (its ``run.json`` beside it), whose run can be
    resumed to ask the question again."""

    path: Path
    records: list[dict[str, Any]]
    torn: int = 0
    journal: bool = False

    def warning(self) -> str | None:
        """One line about the skipped last line, or None when nothing was skipped."""
        if not self.torn:
            return None
        if self.journal:
            return (
                f"{self.path}: its last line is cut short (the run was killed while writing it): 1 prediction "
                f"skipped, {len(self.records)} read; run the same `zoomzero eval` command again to finish it"
            )
        return (
            f"{self.path}: its last line is cut short (no newline, not JSON): that line is skipped, "
            f"{len(self.records)} prediction(s) read"
        )

    def require_records(self) -> None:
        """ValueError when the file holds no prediction (empty, blank, or only a cut line)."""
        if not self.records:
            why = "its only line is cut short" if self.torn else "empty"
            raise ValueError(f"{self.path}: holds no predictions ({why}); expected one JSON object per line")


def load_predictions(path: str | os.PathLike) -> PredictionsFile:
    """Read a predictions JSONL file (see :class:`PredictionsFile`).

    Blank lines are skipped. A final line cut short by a killed writer (no trailing newline, not JSON) is
    skipped and counted; any other line that is not a JSON object raises ValueError naming the line. A missing
    path raises FileNotFoundError; a folder, ValueError. Anything else that can be read is read (``/dev/null``,
    a pipe)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"predictions file not found: {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give the predictions file (e.g. {path / 'predictions.jsonl'})")
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    records, torn = [], 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines) and not text.endswith("\n"):
                torn = 1  # the question in flight when a run was killed
                break
            raise ValueError(f"{path}:{number}: not JSON ({e.msg})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{number}: a prediction must be a JSON object")
        records.append(record)
    return PredictionsFile(path, records, torn, (path.parent / SETTINGS_FILE).is_file())


def read_predictions(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The records of a predictions JSONL file, in file order (:func:`load_predictions`; a cut last line is
    skipped silently: use :func:`load_predictions` to report it)."""
    return load_predictions(path).records
