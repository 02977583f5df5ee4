"""Any table of multiple-choice questions with a clue span, its columns named on the command line.

Zoom-Zero's stage II trains on PLM-Video's YT-1B MCQA split (facebook/PLM-Video-Auto). Its dataset card could
not be read from where this package was written, so no column names are assumed: ``--columns`` names them,
and a name the file lacks stops the conversion with the file's real columns listed. Nested fields are dotted
paths (``metadata.source_start_time``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import DataError
from .base import (
    Draft,
    Format,
    Skip,
    letter,
    letter_of_text,
    numbered_records,
    option_list,
    register,
    seconds,
    span_list,
)

KEYS = {
    "video": "the video file or id (VIDEO_ROOT/<video>, the --video-ext tried when it has no suffix)",
    "question": "the question text",
    "options": "the options: one list column, a {option_0: ...} struct, or several columns joined by '+'",
    "answer": "the answer: a letter, a 0-based option index, or the option's text",
    "qid": "a unique question id (default: <file stem>_<row index>)",
    "start": "the clue span's start, seconds (with end)",
    "end": "the clue span's end, seconds (with start)",
    "spans": "a list of [start, end] clue spans, seconds (instead of start/end)",
    "duration": "the video's length in seconds (default: --durations, else probed from the file)",
}
REQUIRED = ("video", "question", "options", "answer")


def parse_columns(text: str) -> dict[str, str]:
    """``"question=q,options=a+b+c"`` → ``{"question": "q", "options": "a+b+c"}``; ValueError names a bad item."""
    out: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, column = item.partition("=")
        key, column = key.strip(), column.strip()
        if not sep or not key or not column:
            raise ValueError(f"--columns item {item!r} is not KEY=COLUMN")
        if key not in KEYS:
            raise ValueError(f"--columns key {key!r} is unknown; keys: {', '.join(KEYS)}")
        if key in out:
            raise ValueError(f"--columns names {key!r} twice")
        out[key] = column
    missing = [k for k in REQUIRED if k not in out]
    if missing:
        raise ValueError(f"--columns must name {', '.join(missing)} (keys: {', '.join(KEYS)})")
    if ("start" in out) != ("end" in out):
        raise ValueError("--columns names start and end together, or neither")
    if "spans" in out and "start" in out:
        raise ValueError("--columns names spans or start/end, not both")
    return out


def _get(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise KeyError(path)
        value = value[part]
    return value


def _paths(record: Any, prefix: str = "") -> list[str]:
    if not isinstance(record, Mapping):
        return []
    out = []
    for key, value in record.items():
        out.append(prefix + str(key))
        if isinstance(value, Mapping):
            out.extend(_paths(value, f"{prefix}{key}."))
    return out


@register
class MCQTable(Format):
    name = "mcq-table"
    title = "any MCQ table with clue spans, columns named by --columns (stage II: PLM-Video-Auto YT-1B MCQA)"
    reads = (
        "--input FILE (.parquet, .jsonl, .json or .csv; repeat for several) and --columns KEY=COLUMN,... with "
        "KEY among: "
        + "; ".join(f"{k}: {v}" for k, v in KEYS.items())
        + ". Required: "
        + ", ".join(REQUIRED)
        + ". Example: --columns video=video_id,question=question,options=options,answer=answer,start=start,end=end"
    )
    files = {"input": "the table (parquet/jsonl/json/csv)"}
    needs_columns = True

    def __init__(self, inputs: Mapping[str, list[Path]], columns: Mapping[str, str] | None = None):
        super().__init__(inputs)
        self.columns = dict(columns or {})

    def items(self) -> list[tuple[str, int, dict[str, Any]]]:
        if not self.columns:
            raise ValueError(
                "--from mcq-table needs --columns (which column holds the video, question, options, answer)"
            )
        return numbered_records(self, self.inputs["input"])

    def records(self, path: Path) -> list[dict[str, Any]]:
        records = super().records(path)
        if records:
            self._check(path, records[0])
        return records

    def _check(self, path: Path, record: Any) -> None:
        """Every named column is in the file's first row; else stop naming the file's columns."""
        for key, column in self.columns.items():
            for part in column.split("+") if key == "options" else [column]:
                try:
                    _get(record, part)
                except KeyError:
                    raise DataError(
                        f"{path}: no column {part!r} (--columns {key}={column}); the file's columns: "
                        f"{', '.join(_paths(record)) or '(none)'}"
                    ) from None

    def qid(self, item: tuple[str, int, dict[str, Any]]) -> str:
        stem, index, record = item
        if "qid" in self.columns:
            try:
                return str(_get(record, self.columns["qid"]))
            except KeyError:
                pass
        return f"{stem}_{index}"

    def _field(self, record: Any, key: str) -> Any:
        try:
            value = _get(record, self.columns[key])
        except KeyError:
            raise Skip("unknown_format", f"no {self.columns[key]!r} ({key})") from None
        if value is None:
            raise Skip("unknown_format", f"{self.columns[key]!r} ({key}) is empty")
        return value

    def draft(self, item: tuple[str, int, dict[str, Any]]) -> Draft:
        _, _, record = item
        spec = self.columns["options"]
        if "+" in spec:
            try:
                raw_options: Any = [_get(record, part) for part in spec.split("+")]
            except KeyError as e:
                raise Skip("unknown_format", f"no {e.args[0]!r} (options)") from None
        else:
            raw_options = self._field(record, "options")
        if isinstance(raw_options, str):
            raise Skip("unknown_format", f"options {raw_options[:80]!r} are one string, not a list")
        options = option_list(raw_options)
        answer, matches = self._answer(self._field(record, "answer"), options)
        spans: list[Any] = []
        if "spans" in self.columns:
            spans = span_list(self._field(record, "spans"))
        elif "start" in self.columns:
            spans = [(seconds(self._field(record, "start"), "start"), seconds(self._field(record, "end"), "end"))]
        video = str(self._field(record, "video"))
        duration = seconds(self._field(record, "duration"), "duration") if "duration" in self.columns else None
        return Draft(
            qid=self.qid(item),
            question=str(self._field(record, "question")),
            options=options,
            answer=answer,
            answer_matches=matches,
            videos=(video,),
            duration=duration,
            spans=spans,
            video_id=Path(video).stem,
        )

    @staticmethod
    def _answer(value: Any, options: list[str]) -> tuple[str, tuple[str, ...]]:
        """An option's exact text first (options may be numbers), then an index, a letter, a loose text match."""
        if isinstance(value, bool):
            raise Skip("answer_not_in_options", f"answer {value!r}")
        if str(value) in options:
            return letter_of_text(value, options)
        if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
            return letter(int(value), options), ()
        text = str(value).strip()
        if len(text.strip("().: ")) == 1 and text.strip("().: ").isalpha():
            return letter(text, options), ()
        return letter_of_text(text, options)
