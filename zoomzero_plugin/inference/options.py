"""Command-line options shared by ``zoomzero eval`` and ``zoomzero data filter``: budgets and mode knobs.

Every flag defaults to ``None`` so :func:`resolve` can tell "not given" from "given": unset flags take
the paper's value, or the CPU demo's (``DEMO_DEFAULTS``) when the command runs as a demo.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..zoom import ZoomBudget
from .modes import ModeConfig

DEFAULTS: dict[str, Any] = {
    "max_tokens": 8192, "fps": 1.0, "min_frame_pixels": 16 * 28 * 28, "max_frame_pixels": 768 * 28 * 28,
    "max_frames": 256, "min_clip_seconds": 1.0, "max_new_tokens": 512, "fine_answer": "letters",
    "no_spans": "coarse", "uniform_frames": 20, "window_seconds": 256.0, "window_times": "auto",
    "window_budget": "full", "top_k": 4, "dc_final": "fine", "rounds": 3, "min_shrink": 0.0,
}

# A small visual budget and short responses keep the demo to seconds on a CPU; the random model writes no
# spans, so its fine pass reads uniform frames (the authors' code's fallback).
DEMO_DEFAULTS: dict[str, Any] = {
    "max_tokens": 128, "min_frame_pixels": 4 * 28 * 28, "max_new_tokens": 32, "no_spans": "uniform",
    "window_seconds": 4.0, "uniform_frames": 8,
}

_BUDGET_KEYS = ("max_tokens", "fps", "min_frame_pixels", "max_frame_pixels", "max_frames", "min_clip_seconds")


def add_flag(parser: argparse._ActionsContainer, name: str, help: str, **kwargs: Any) -> None:
    parser.add_argument("--" + name.replace("_", "-"), dest=name, default=None,
                        help=f"{help} (default: {DEFAULTS[name]})", **kwargs)


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("visual token budget (Zoom-Zero Eq. 3; the same for every pass)")
    add_flag(group, "max_tokens", "L_v: visual tokens per pass", type=int)
    add_flag(group, "fps", "s: frames per second sampled over the seconds a pass reads", type=float)
    add_flag(group, "min_frame_pixels", "V_min as pixels per frame", type=int)
    add_flag(group, "max_frame_pixels", "V_max as pixels per frame", type=int)
    add_flag(group, "max_frames", "frames per pass at most (the paper's coarse pass: 256)", type=int)
    add_flag(group, "min_clip_seconds", "shorter predicted spans are widened to this", type=float)


def resolve(args: argparse.Namespace, demo: bool = False) -> dict[str, Any]:
    """Every option's value: given, else the demo's (when ``demo``), else the paper's."""
    out = {}
    for key, default in DEFAULTS.items():
        given = getattr(args, key, None)
        out[key] = given if given is not None else (DEMO_DEFAULTS.get(key, default) if demo else default)
    return out


# flag -> (test, what it must be)
_RULES: dict[str, tuple[Any, str]] = {
    "max_tokens": (lambda v: v > 0, "> 0"), "fps": (lambda v: v > 0, "> 0"),
    "min_frame_pixels": (lambda v: v > 0, "> 0"), "max_frames": (lambda v: v >= 2, ">= 2"),
    "min_clip_seconds": (lambda v: v > 0, "> 0"), "max_new_tokens": (lambda v: v >= 1, ">= 1"),
    "uniform_frames": (lambda v: v >= 2, ">= 2"), "window_seconds": (lambda v: v > 0, "> 0"),
    "top_k": (lambda v: v >= 1, ">= 1"), "rounds": (lambda v: v >= 1, ">= 1"),
    "min_shrink": (lambda v: 0 <= v < 1, "in [0, 1)"),
}


def check_values(values: dict[str, Any]) -> None:
    """Raise UsageError naming every flag whose resolved value is out of range (NaN included)."""
    bad = [f"--{k.replace('_', '-')} must be {what}, got {values[k]}" for k, (ok, what) in _RULES.items()
           if k in values and not ok(values[k])]
    if not values["min_frame_pixels"] <= values["max_frame_pixels"]:
        bad.append(f"--max-frame-pixels ({values['max_frame_pixels']}) must be >= --min-frame-pixels "
                   f"({values['min_frame_pixels']})")
    if bad:
        raise UsageError("; ".join(bad))


def budget_from(values: dict[str, Any], factor: int = 28) -> ZoomBudget:
    return ZoomBudget(factor=factor, **{k: values[k] for k in _BUDGET_KEYS})


def mode_config(values: dict[str, Any], factor: int = 28) -> ModeConfig:
    """The :class:`ModeConfig` of resolved values, for a model with ``factor`` pixels per token side."""
    keys = [k for k in DEFAULTS if k not in _BUDGET_KEYS]
    return ModeConfig(budget=budget_from(values, factor), **{k: values[k] for k in keys})
