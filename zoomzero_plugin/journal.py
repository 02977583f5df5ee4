"""An append-only JSONL journal keyed by question id: what a long run has finished, safe to kill.

Each finished question is one line, written with its newline in a single ``write`` and fsync'd, so a
killed run loses at most the batch in flight. Opening a journal recovers it: a last line cut short (no
newline, not JSON) is truncated away; a complete last line that only lost its newline gets it back. Any
other damage (a line in the middle that is not a JSON object with the key, a key written twice) is a
:class:`~zoomzero_plugin.errors.ResumeError` naming file:line, unless opened with ``repair``, which
keeps the good lines (their questions stay done; the others are asked again). Nothing is ever written
twice: callers skip ``done`` keys. :func:`check_settings` keeps a resumed run from mixing results made
with other settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .errors import ResumeError
from .files import write_atomic, write_text

WAY_OUT = "--repair keeps the readable lines (the other questions are asked again); --restart discards them all"


class Journal:
    """``records`` (file order) and ``done`` (their keys) after recovery; ``append`` adds lines durably."""

    def __init__(self, path: str | os.PathLike, key: str = "qid", repair: bool = False, way_out: str = WAY_OUT):
        """``way_out``: what the ResumeError about a damaged file tells the user to do (the command's own flags)."""
        self.path = Path(path)
        self.key = key
        self.way_out = way_out
        self.repaired = 0  # damaged lines dropped by ``repair``
        self._lines: list[bytes] = []  # the raw line of each record, for rewrites
        self.records: list[dict[str, Any]] = self._recover(repair)
        self.done: set[str] = {str(r[key]) for r in self.records}

    def _recover(self, repair: bool) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        records, bad, seen = [], [], set()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            record, why = self._parse(line)
            if record is not None and str(record[self.key]) in seen:
                record, why = None, f"{self.key} {record[self.key]!r} written twice"
            if record is None:
                bad.append((number, why))
                continue
            seen.add(str(record[self.key]))
            records.append(record)
            self._lines.append(line)
        if bad and not repair:
            number, why = bad[0]
            more = f" (and {len(bad) - 1} more bad line(s))" if len(bad) > 1 else ""
            raise ResumeError(f"{self.path}:{number}: {why}{more}; {len(records)} line(s) are readable. {self.way_out}")
        keep = len(data)
        if tail.strip():
            record, _ = self._parse(tail)
            if record is not None and str(record[self.key]) not in seen:
                records.append(record)
                self._lines.append(tail)
            else:
                keep = len(data) - len(tail)  # the line in flight when the writer died
        if bad:
            self.repaired = len(bad)
            self._rewrite()
        elif tail.strip():
            with self.path.open("r+b") as f:
                f.truncate(keep)
                if keep == len(data):
                    f.seek(0, os.SEEK_END)
                    f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())
        return records

    def _parse(self, line: bytes) -> tuple[dict[str, Any] | None, str]:
        try:
            record = json.loads(line)
        except ValueError as e:  # JSONDecodeError, or bytes that are not UTF-8
            return None, f"not JSON ({getattr(e, 'msg', e)})"
        if not isinstance(record, dict) or self.key not in record:
            return None, f"not a JSON object with {self.key!r}"
        return record, ""

    def _rewrite(self) -> None:
        payload = b"".join(line + b"\n" for line in self._lines)
        write_atomic(self.path, lambda tmp: Path(tmp).write_bytes(payload))

    def drop(self, keys: Iterable[str]) -> int:
        """Remove the records of ``keys`` (atomically rewriting the file), so they can be written again."""
        keys = set(keys)
        kept = [(r, line) for r, line in zip(self.records, self._lines) if str(r[self.key]) not in keys]
        dropped = len(self.records) - len(kept)
        if dropped:
            self.records, self._lines = [r for r, _ in kept], [line for _, line in kept]
            self.done -= keys
            self._rewrite()
        return dropped

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
        lines = [json.dumps(r, ensure_ascii=False).encode("utf-8") for r in records]
        with self.path.open("ab") as f:
            f.write(b"".join(line + b"\n" for line in lines))
            f.flush()
            os.fsync(f.fileno())
        self.records += records
        self._lines += lines
        self.done.update(keys)


def _flatten(settings: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(settings, dict):
        out = {}
        for k, v in settings.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: settings}


def check_settings(
    path: str | os.PathLike,
    settings: dict[str, Any],
    *,
    results: bool = False,
    repair: bool = False,
    name: Callable[[str], str] = str,
) -> None:
    """Store ``settings`` (JSON) at ``path`` on the first run; a later run must pass the same.

    ``results``: the folder already holds results, so a missing ``path`` means their settings are unknown
    and they are refused (``repair``: the caller vouches for them and this run's settings are stored). A
    damaged ``path`` is refused (``repair``: rewritten with this run's settings). A difference raises
    :class:`~zoomzero_plugin.errors.ResumeError` naming each setting (``name(dotted key)``, e.g. ``--fps``)
    with both values.
    """
    path = Path(path)
    settings = json.loads(json.dumps(settings))  # tuples as lists, as they are stored
    restart = "use another output folder, or --restart to discard them"
    if not path.exists():
        if results and not repair:
            raise ResumeError(
                f"{path.parent} holds results but no {path.name}: the settings they were made with are "
                f"unknown, so they cannot be resumed; {restart} (or --repair if you know they match)"
            )
        write_text(path, json.dumps(settings, indent=2) + "\n")
        return
    try:
        before = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(before, dict):
            raise ValueError(f"a JSON {type(before).__name__}, expected an object")
    except ValueError as e:
        if not repair:
            why = f"not valid JSON: {e.msg}, line {e.lineno}" if isinstance(e, json.JSONDecodeError) else str(e)
            raise ResumeError(
                f"{path}: damaged ({why}); it records the settings of the results "
                f"beside it: restore it, {restart}, or --repair to store this run's settings "
                "(if you know they match)"
            ) from None
        write_text(path, json.dumps(settings, indent=2) + "\n")
        return
    old, new = _flatten(before), _flatten(settings)
    changed = [k for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    if changed:
        shown = ", ".join(f"{name(k)} ({old.get(k, 'unset')!r} there, {new.get(k, 'unset')!r} now)" for k in changed)
        raise ResumeError(f"{path.parent} holds results made with other settings: {shown}; {restart}")
