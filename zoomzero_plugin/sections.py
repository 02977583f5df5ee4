"""Options dataclasses from recipe sections: the one reader of a mapping such as
``worker.reward.reward_function_kwargs.zoom`` into a frozen dataclass whose fields are its keys.

A field may hold a dataclass given *inline*, as the section's own keys (``field(metadata={"inline": KEYS})``: the
zoom section's ``fps`` is its budget's); a field marked ``metadata={"section": False}`` is no key at all. Values are
read as their field's type (``4`` and ``4.0`` as an int, but never ``true``). Every problem is found at once and
named as ``where.key``: unknown keys (one line naming the known ones), each value of the wrong type, then what the
dataclasses themselves refuse (:class:`SectionError` holds one line each).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import Field, fields, replace
from typing import Any, TypeVar

T = TypeVar("T")


class SectionError(ValueError):
    """Every problem of one section, one line each (its message: them all, joined by ``; ``)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def keys(cls: type) -> dict[str, Field]:
    """The keys a section of ``cls`` takes: its own fields (but those marked ``section: False``), and the inline
    fields' keys, each with the field that reads it."""
    out: dict[str, Field] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if "inline" in f.metadata:
            nested = {g.name: g for g in fields(type(f.default))}
            out.update({k: nested[k] for k in f.metadata["inline"]})
        elif f.metadata.get("section", True):
            out[f.name] = f
    return out


def build(cls: type[T], section: Mapping[str, Any], where: str, defaults: Mapping[str, Any] = {}) -> T:  # noqa: B006
    """``cls`` from ``defaults`` updated by ``section``; :class:`SectionError` naming ``where`` on any problem."""
    known = keys(cls)
    problems = []
    unknown = sorted(set(section) - set(known))
    if unknown:
        problems.append(f"{where}: unknown option(s) {unknown}; known: {sorted(known)}")
    values = {}
    for key, value in {**defaults, **section}.items():
        if key in known:
            try:
                values[key] = coerce(str(known[key].type), value, f"{where}.{key}")
            except ValueError as e:
                problems.append(str(e))
    if problems:
        raise SectionError(problems)
    nested = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if "inline" in f.metadata:
            given = {k: values.pop(k) for k in f.metadata["inline"] if k in values}
            nested[f.name] = _made(lambda d=f.default, g=given: replace(d, **g), where, problems) or f.default
    made = _made(lambda: cls(**values, **nested), where, problems)
    if problems:
        raise SectionError(problems)
    return made


def _made(make: Callable[[], Any], where: str, problems: list[str]) -> Any:
    """``make()``, or None with its refusal added to ``problems`` as a line naming ``where``."""
    try:
        return make()
    except (TypeError, ValueError) as e:
        problems.append(str(e) if str(e).startswith(where) else f"{where}: {e}")
        return None


def section_of(options: Any) -> dict[str, Any]:
    """The section that builds ``options`` again: its own keys and its inline fields' keys."""
    out = {}
    for f in fields(options):
        value = getattr(options, f.name)
        if "inline" in f.metadata:
            out.update({k: getattr(value, k) for k in f.metadata["inline"]})
        elif f.metadata.get("section", True):
            out[f.name] = value
    return out


def one_of(value: Any, allowed: Collection[Any], key: str) -> None:
    """ValueError naming ``key`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{key} must be one of {list(allowed)}, got {value!r}")


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
