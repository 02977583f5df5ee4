"""Upstream annotation formats, one module each, registered by name for ``zoomzero data convert --from``."""

from __future__ import annotations

from .base import REASONS, Draft, Format, Skip

FORMATS: dict[str, type[Format]] = {}


def register(cls: type[Format]) -> type[Format]:
    """Class decorator: make ``cls`` available as ``--from cls.name``."""
    if cls.name in FORMATS:
        raise ValueError(f"format {cls.name!r} registered twice")
    FORMATS[cls.name] = cls
    return cls


from . import cgbench, gqa_json, longvideobench, lvbench, mcq_table, mlvu, nextgqa, plm, rextime, videomme  # noqa: E402,F401  (they register)

__all__ = ["FORMATS", "REASONS", "Draft", "Format", "Skip", "register"]
