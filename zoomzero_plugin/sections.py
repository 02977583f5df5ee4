"""Options dataclasses from recipe sections: the one reader of a mapping such as
``worker.reward.reward_function_kwargs.zoom`` into a frozen dataclass whose fields are its keys.

Unknown keys are an error naming the known ones; values are read as their field's type (``4`` and ``4.0`` as an
int, but never ``true``), and every error names the key as ``where.key``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def build(
    cls: type[T],
    section: Mapping[str, Any],
    where: str,
    defaults: Mapping[str, Any] = {},  # noqa: B006 - read only
) -> T:
    """``cls`` from ``defaults`` updated by ``section``; ValueError naming ``where`` on any problem."""
    known = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(section) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown option(s) {unknown}; known: {sorted(known)}")
    values = {**defaults, **section}
    try:
        return cls(**{k: coerce(str(known[k].type), v, f"{where}.{k}") for k, v in values.items()})
    except (TypeError, ValueError) as e:
        raise ValueError(str(e) if str(e).startswith(where) else f"{where}: {e}") from None


def coerce(kind: str, value: Any, key: str) -> Any:
    """``value`` as a field annotated ``kind`` (bool, int, float, tuple[str, ...], each ``| None``; others as
    given)."""
    if kind.endswith(" | None"):
        return None if value is None else coerce(kind.removesuffix(" | None"), value, key)
    try:
        if kind == "bool":
            if not isinstance(value, bool):
                raise TypeError
            return value
        if kind == "int":
            if isinstance(value, bool) or float(value) != int(value):
                raise TypeError
            return int(value)
        if kind == "float":
            if isinstance(value, bool) or not math.isfinite(float(value)):
                raise TypeError
            return float(value)
        if kind == "tuple[str, ...]":
            return tuple(str(v) for v in ([value] if isinstance(value, str) else value))
        return value
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{key}: {value!r} is not a valid {kind}") from None
