"""An append-only JSONL journal keyed by question id: what a long run has finished, safe to kill.

Each finished question is one line, written with its newline in a single ``write`` and fsync'd, so a
killed run loses at most the batch in flight. Opening a journal recovers it: a last line cut short (no
newline, not JSON) is truncated away; a complete last line that only lost its newline gets it back.
Nothing is ever written twice: callers skip ``done`` keys. :func:`check_settings` keeps a resumed run
from mixing results made with other settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class Journal:
    """``records`` (file order) and ``done`` (their keys) after recovery; ``append`` adds lines durably."""

    def __init__(self, path: str | os.PathLike, key: str = "qid"):
        self.path = Path(path)
        self.key = key
        self.records: list[dict[str, Any]] = self._recover()
        self.done: set[str] = {str(r[key]) for r in self.records}

    def _recover(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        records = []
        for number, line in enumerate(lines, 1):
            if line.strip():
                records.append(self._parse(line, number))
        if tail.strip():
            try:
                records.append(self._parse(tail, len(lines) + 1))
                keep = len(data)
            except ValueError:
                keep = len(data) - len(tail)  # the line in flight when the writer died
            with self.path.open("r+b") as f:
                f.truncate(keep)
                if keep == len(data):
                    f.seek(0, os.SEEK_END)
                    f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())
        return records

    def _parse(self, line: bytes, number: int) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{self.path}:{number}: not JSON ({e.msg})") from None
        if not isinstance(record, dict) or self.key not in record:
            raise ValueError(f"{self.path}:{number}: expected a JSON object with {self.key!r}")
        return record

    def append(self, records: Iterable[dict[str, Any]]) -> None:
        """Write ``records`` as lines, then flush and fsync. Raises on a key already written."""
        records = list(records)
        keys = [str(r[self.key]) for r in records]
        again = [k for k in keys if k in self.done] or [k for i, k in enumerate(keys) if k in keys[:i]]
        if again:
            raise ValueError(f"{self.path}: {self.key} {again[0]!r} is already in the journal")
        if not records:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        with self.path.open("ab") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        self.records += records
        self.done.update(keys)


def check_settings(path: str | os.PathLike, settings: dict[str, Any]) -> None:
    """Store ``settings`` (JSON) at ``path`` on the first run; later runs must pass the same, or stop with
    the names of the settings that differ."""
    from ..files import write_text

    path = Path(path)
    if not path.exists():
        write_text(path, json.dumps(settings, indent=2) + "\n")
        return
    before = json.loads(path.read_text(encoding="utf-8"))
    settings = json.loads(json.dumps(settings))  # tuples as lists, as they were stored
    changed = sorted(k for k in set(before) | set(settings) if before.get(k) != settings.get(k))
    if changed:
        raise SystemExit(f"{path.parent} holds results made with other settings ({', '.join(changed)}) than "
                         f"{path.name} records; use another output, or --restart to discard them")
