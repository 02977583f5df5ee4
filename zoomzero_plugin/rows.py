"""Dataset rows: one question per row, loadable by EasyR1's own ``RLHFDataset``.

Columns: ``prompt`` (text with one ``<video>`` placeholder), ``videos`` (a one-element list of paths) and ``answer``
(the JSON of a :class:`GroundTruth`: letter, options, spans, duration, qid, question). An optional ``gt_windows`` key in
the answer JSON keeps the benchmark's raw windows. Rows are written as JSONL or parquet, by extension, atomically: a
temporary file renamed into place.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .errors import DataError
from .files import write_atomic, write_text
from .ground_truth import GroundTruth
from .readers import read_jsonl, read_parquet
from .spans import Span

PROMPT_KEY, VIDEO_KEY, ANSWER_KEY = "prompt", "videos", "answer"
# Optional answer-JSON key: the benchmark's own ground-truth windows, kept by converters when GroundTruth
# clamped or merged them, so per-window official metrics can use them unchanged.
GT_WINDOWS_KEY = "gt_windows"
# Optional answer-JSON key: true on a test question whose label only the benchmark's server has (ReXTime test);
# its ``answer`` is a placeholder. Such rows can be evaluated and exported for submission, never scored or trained on.
LABEL_HIDDEN_KEY = "label_hidden"
ROW_SUFFIXES = (".jsonl", ".json", ".parquet")  # the files rows are read from and written to


def make_row(
    *,
    qid: str,
    question: str,
    options: Sequence[str],
    answer: str,
    duration: float,
    video: str,
    prompt: str,
    spans: Sequence[Span] = (),
    **extra: Any,
) -> dict[str, Any]:
    """One dataset row. ``answer`` is the option letter; validated through :class:`GroundTruth`. ``prompt`` is the
    row's prompt, with one ``<video>`` (Zoom-Zero's grounding rows: :func:`zoomzero_plugin.gvqa.prompts.grounding_row`).
    """
    truth = GroundTruth.parse(
        {
            "answer": answer,
            "options": list(options),
            "spans": [list(s) for s in spans],
            "duration": duration,
            "qid": qid,
            "question": question,
            **extra,
        }
    )
    return {
        PROMPT_KEY: prompt,
        VIDEO_KEY: [str(video)],
        ANSWER_KEY: truth.to_json(),
    }


def row_truth(row: dict[str, Any], answer_key: str = ANSWER_KEY) -> GroundTruth:
    return GroundTruth.parse(row[answer_key])


def row_problem(number: int, row: Any, error: Exception) -> str:
    """``row N (qid): why`` for a row whose answer column cannot be read (``number`` counts from 1, the qid
    shown when the row's answer JSON still names one); a missing column is said as such."""
    why = f"no {error} column" if isinstance(error, KeyError) else str(error)
    return f"row {number}{_qid_label(row)}: {why}"


def _qid_label(row: Any) -> str:
    try:
        answer = row[ANSWER_KEY]
        qid = (json.loads(answer) if isinstance(answer, str) else answer)["qid"]
    except Exception:  # noqa: BLE001  (only a label for an error message)
        return ""
    return f" ({qid})"


def bad_rows(source: str, problems: Sequence[str], show: int = 3) -> DataError:
    """One error naming the first ``show`` of a file's bad rows and how many there are."""
    more = f"; and {len(problems) - show} more" if len(problems) > show else ""
    return DataError(
        f"{source}: {len(problems)} bad row(s): {'; '.join(problems[:show])}{more} "
        "(`zoomzero data check` lists them all)"
    )


def label_hidden(truth: GroundTruth) -> bool:
    """The question's label is hidden behind the benchmark's server: its ``answer`` is a placeholder."""
    return bool(truth.extra.get(LABEL_HIDDEN_KEY))


def _check_format(path: Path) -> str:
    if path.suffix not in ROW_SUFFIXES:
        raise DataError(f"{path}: rows must be {', '.join(ROW_SUFFIXES)}; got '{path.suffix}'")
    return path.suffix


def read_rows(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every row of a ``.jsonl``/``.json`` (one object per line) or ``.parquet`` file.

    Raises :class:`~zoomzero_plugin.errors.DataError` naming ``file:line`` for a line that is not a JSON
    object (a file cut short) and for a missing or unreadable file.
    """
    path = Path(path)
    if _check_format(path) == ".parquet":
        return read_parquet(path)[1]
    return read_jsonl(path)


def write_rows(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> int:
    """Write rows atomically; returns how many. A crash leaves no half file at ``path``."""
    path = Path(path)
    kind = _check_format(path)
    rows = list(rows)
    if kind == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        write_atomic(path, lambda tmp: pq.write_table(pa.Table.from_pylist(rows), tmp))
    else:
        write_text(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return len(rows)
