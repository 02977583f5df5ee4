"""Strict readers for the files users hand us (JSON, JSONL, CSV, parquet): every fault is a DataError.

A file that cannot be read whole is an error naming ``file:line`` and what is wrong, never a silently
shorter or shifted table: a CSV row with too few or too many fields, a quote left open, a CSV that ends
in the middle of a line (cut short), a JSONL line that is not a JSON object, JSON that stops early. A UTF-8
byte-order mark (Excel, some Windows tools) is read as nothing.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

from .errors import DataError

Records = list[dict[str, Any]]


def read_text(path: str | os.PathLike) -> str:
    """The file's text as UTF-8 (a leading byte-order mark dropped)."""
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise DataError(f"{path}: is a folder, not a file") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read it ({e.strerror})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not UTF-8 text (byte {e.start}: {data[e.start : e.start + 1]!r})") from None


def _cut_hint(text: str, error: json.JSONDecodeError) -> str:
    cut = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string")
    return "; the file ends there: it looks cut short (download it again)" if cut else ""


def read_json(path: str | os.PathLike) -> Any:
    """One JSON document."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}:{e.lineno}: not valid JSON ({e.msg}, column {e.colno}){_cut_hint(text, e)}") from None


def read_jsonl(path: str | os.PathLike) -> Records:
    """One JSON object per line; blank lines are skipped."""
    text = read_text(path)
    records = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            last = number == text.count("\n") + 1
            hint = "; the last line has no line break: the file looks cut short" if last else ""
            raise DataError(f"{path}:{number}: not valid JSON ({e.msg}, column {e.colno}){hint}") from None
        if not isinstance(record, dict):
            raise DataError(f"{path}:{number}: a JSON {type(record).__name__}, expected an object")
        records.append(record)
    return records


def read_csv(path: str | os.PathLike) -> tuple[list[str], Records]:
    """The header and one dict per row (all values strings). Every row must have the header's field count."""
    text = read_text(path)
    if text and not text.endswith(("\n", "\r")):
        line = text.count("\n") + 1
        raise DataError(
            f"{path}:{line}: the file ends in the middle of a line: it looks cut short (download it "
            "again; if that last row is complete, end the file with a line break)"
        )
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if not header:
            raise DataError(f"{path}:1: no header line (an empty file?)")
        repeated = sorted({h for h in header if header.count(h) > 1})
        if repeated:
            raise DataError(f"{path}:1: column(s) {repeated} appear twice in the header")
        records = []
        for fields in reader:
            if not fields:
                continue  # a blank line
            if len(fields) != len(header):
                why = (
                    "a short or malformed row (a cut line?)"
                    if len(fields) < len(header)
                    else "a long row (an unquoted comma inside a value?)"
                )
                raise DataError(
                    f"{path}:{reader.line_num}: {len(fields)} fields where the header has {len(header)}: {why}"
                )
            records.append(dict(zip(header, fields)))
    except csv.Error as e:
        raise DataError(f"{path}:{reader.line_num}: malformed CSV ({e})") from None
    return header, records


def read_parquet(path: str | os.PathLike) -> tuple[list[str], Records]:
    """The column names and one dict per row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as e:
        raise DataError(f"{path}: not a readable parquet file ({str(e).splitlines()[0]}); cut short?") from None
    return list(table.column_names), table.to_pylist()


def read_table(path: str | os.PathLike) -> tuple[list[str], Records]:
    """``(columns, records)`` of a ``.csv``, ``.parquet``, ``.jsonl`` or ``.json`` file.

    A ``.json`` file holds a list of objects, or an object with exactly one list value (``{"data": [...]}``).
    For JSON(L) the columns are every key some record has, in order of first appearance.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_csv(path)
    if suffix == ".parquet":
        return read_parquet(path)
    if suffix == ".jsonl":
        records = read_jsonl(path)
    else:
        data = read_json(path)
        if isinstance(data, dict):
            lists = [v for v in data.values() if isinstance(v, list)]
            if len(lists) == 1:
                data = lists[0]
        if not isinstance(data, list):
            raise DataError(f"{path}: expected a JSON list of objects, got a {type(data).__name__}")
        bad = next((i for i, r in enumerate(data) if not isinstance(r, dict)), None)
        if bad is not None:
            raise DataError(f"{path}: item {bad} of the list is a {type(data[bad]).__name__}, expected an object")
        records = data
    return list(dict.fromkeys(k for r in records for k in r)), records
