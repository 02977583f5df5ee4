"""Every metric EasyR1 logs, also as one JSON line per log call (``EASYR1_PLUGINS_METRICS_FILE=PATH``).

EasyR1's console logger prints nested YAML and its other loggers need a service or a package (wandb,
tensorboard, swanlab, mlflow). With this variable set (``easyr1 train --metrics-file PATH`` sets it), each
``Tracker.log(data, step)`` in the trainer also appends ``{"step": step, <metric>: value, ...}`` to PATH, flushed at
once, so a crashed run keeps every finished step and scripts read a run without parsing logs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

METRICS_FILE_ENV = "EASYR1_PLUGINS_METRICS_FILE"


def _plain(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    try:
        return float(value)  # numpy and torch scalars
    except (TypeError, ValueError):
        return str(value)


def append(path: str, data: dict[str, Any], step: int) -> None:
    """Append one line ``{"step": step, **data}`` to ``path`` (its folder is created)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    line = json.dumps({"step": int(step), **{k: _plain(v) for k, v in data.items()}})
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def wrap_tracker_log(original: Callable) -> Callable:
    def log(self, data, step, *args, **kwargs):
        original(self, data, step, *args, **kwargs)
        path = os.environ.get(METRICS_FILE_ENV)
        if path:
            append(path, data, step)

    return log
