"""Atomic file writes: a temporary file beside the target, renamed into place; never a half file."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import UsageError


def write_atomic(path: str | os.PathLike, write: Callable[[str], object]) -> Path:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, then rename it into place.

    The file gets mode 0o644 (``mkstemp`` makes 0o600); on any failure the temporary file is removed
    and whatever was at ``path`` before is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    return write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def write_json(path: str | os.PathLike, data: Any) -> Path:
    return write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def check_writable(path: str | os.PathLike, flag: str) -> Path:
    """Raise :class:`~zoomzero_plugin.errors.UsageError` naming ``flag`` unless a file can be written at ``path``.

    ``path`` must not be a folder, and its nearest existing parent must be a writable folder (missing
    folders below it are created on write). Checked before long work, so it never fails at the end.
    """
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a folder; give a file name inside it")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: {parent} is a file, not a folder")
    try:  # the real test (os.access says yes to root on read-only or virtual file systems)
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write in {parent} ({e.strerror}); choose another place") from None
    return path
