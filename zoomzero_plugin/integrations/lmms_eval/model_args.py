"""``--model_args`` of lmms-eval's ``zoomzero`` model: ``zoomzero eval``'s options, by their names and defaults.

There is no table here: a key is the ``dest`` of a ``zoomzero eval`` flag (``max_visual_tokens=16384`` is
``--max-visual-tokens 16384``; ``-`` is accepted for ``_``), read with that flag's own type and choices, and an option
not given takes the value ``zoomzero eval`` would give it (:func:`zoomzero_plugin.inference.options.resolve`: the
paper's, the visual budget by benchmark). The checkpoint is ``model=`` (or ``pretrained=``, lmms-eval's usual word).
One key is this model's own: ``predictions=FILE`` writes every question's whole prediction record there (the lines
of ``zoomzero eval``'s predictions.jsonl: passes, spans, the agent's transcript), for ``zoomzero score`` and
reports. lmms-eval's own ``--batch_size`` and ``--device`` apply unless ``batch_size=`` / ``device=`` are given
here.
The options of ``zoomzero eval`` that lmms-eval's own options replace (``--data``, ``--out``, ``--limit`` …) are
refused, naming what to use instead. Every problem is reported at once, in one :class:`UsageError`.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import UsageError
from ...eval.metrics import BENCHMARKS
from ...eval.runner import add_arguments
from ...inference.modes import ModeConfig
from ...inference.options import check_values, mode_config, resolve
from ...vision import DEFAULT_GEOMETRY, VisionGeometry

ALIASES = {"pretrained": "model"}  # lmms-eval's usual name for the checkpoint
# zoomzero eval's options that lmms-eval or the task replace: key -> what does it here
NOT_HERE = {
    "data": "the task holds the data (--tasks; `zoomzero lmms-eval tasks` writes tasks over dataset rows)",
    "out": "lmms-eval's --output_path",
    "limit": "lmms-eval's --limit",
    "reduction": "the task scores with the benchmark's official rules",
    "restart": "lmms-eval does not resume",
    "repair": "lmms-eval does not resume",
    "demo": "`zoomzero lmms-eval tasks DIR --demo` writes a demo task and prints its command",
    "no_progress": "lmms-eval's --verbosity",
    "skip_errors": "not offered under lmms-eval: a failing question stops the run",
    "help": "`zoomzero eval --help` lists the options",
}
FROM_LMMS_EVAL = ("batch_size", "device")  # lmms-eval passes its own --batch_size and --device to every model
PREDICTIONS = "predictions"  # the one key that is not a zoomzero eval option


@dataclass(frozen=True)
class ModelArgs:
    """The checked ``--model_args``. ``options`` holds every ``zoomzero eval`` option, None where not given."""

    model: str
    mode: str
    backend: str
    batch_size: int
    benchmark: str | None  # the budget preset; None: each task's (:func:`benchmark_of`)
    predictions: str | None = None  # a .jsonl file for every prediction record
    backend_kwargs: dict[str, Any] = field(default_factory=dict)  # device, dtype, attn_implementation
    options: dict[str, Any] = field(default_factory=dict)

    def values(self, benchmark: str | None, geometry: VisionGeometry = DEFAULT_GEOMETRY) -> dict[str, Any]:
        """Every budget and mode value for a task of ``benchmark`` (this ``benchmark=`` wins when given), for a
        model of ``geometry`` (the loaded model's)."""
        return resolve(argparse.Namespace(**self.options), benchmark=self.benchmark or benchmark, geometry=geometry)

    def config(self, benchmark: str | None, geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ModeConfig:
        return mode_config(self.values(benchmark, geometry), geometry)


def benchmark_of(task: str) -> str | None:
    """The benchmark whose paper budget a task gets: the longest benchmark name its name starts with
    (``longvideobench_val_v`` → ``longvideobench``, ``cgbench_grounding`` → ``cgbench``; ``mmmu`` → None)."""
    names = [b for b in BENCHMARKS if task.lower().startswith(b)]
    return max(names, key=len) if names else None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False)
    add_arguments(parser)
    return parser


def eval_options() -> dict[str, argparse.Action]:
    """``zoomzero eval``'s options by ``dest``, less those of :data:`NOT_HERE`."""
    return {a.dest: a for a in _parser()._actions if a.dest not in NOT_HERE}


def _key(raw: str) -> str:
    key = str(raw).strip().replace("-", "_")
    return ALIASES.get(key, key)


def _read(action: argparse.Action, raw: Any) -> Any:
    """``raw`` as the flag would read it. lmms-eval has already turned ``1`` into an int, ``-5`` into the float -5.0
    and ``true`` into True: a whole float is read back as the integer it was written as."""
    text = str(int(raw)) if isinstance(raw, float) and raw.is_integer() else str(raw)
    try:
        value = action.type(text) if callable(action.type) else text
    except (TypeError, ValueError):
        kind = getattr(action.type, "__name__", "value")
        raise ValueError(f"expected {'a number' if kind == 'float' else 'an integer' if kind == 'int' else kind}")
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"choose from {', '.join(map(str, action.choices))}")
    return value


def _unknown(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=3)
    hint = f"did you mean {' or '.join(close)}?" if close else "`zoomzero eval --help` lists the options"
    return f"unknown '{key}' ({hint})"


def as_model_args(message: str) -> str:
    """A message of :func:`check_values` (``--max-visual-tokens must be …``) in ``--model_args`` words
    (``max_visual_tokens``)."""
    return re.sub(r"--([a-z][a-z-]*)", lambda m: m.group(1).replace("-", "_"), message)


def _read_all(
    given: Mapping[str, Any], lmms: Mapping[str, Any], actions: dict[str, argparse.Action]
) -> tuple[dict[str, Any], list[str]]:
    taken: dict[str, Any] = {}
    problems: list[str] = []
    for raw_key, raw in given.items():
        key = _key(raw_key)
        if key == PREDICTIONS:
            taken[key] = str(raw)
        elif key in NOT_HERE:
            problems.append(f"'{raw_key}' is a `zoomzero eval` option not taken here: {NOT_HERE[key]}")
        elif key not in actions:
            problems.append(_unknown(str(raw_key), sorted(actions)))
        elif key in taken:
            problems.append(f"'{key}' given twice")
        else:
            try:
                taken[key] = _read(actions[key], raw)
            except ValueError as e:
                problems.append(f"{key}={raw}: {e}")
    for key in FROM_LMMS_EVAL:
        if key not in taken and lmms.get(key) is not None:
            try:
                taken[key] = _read(actions[key], lmms[key])
            except ValueError as e:
                problems.append(f"lmms-eval's --{key} {lmms[key]}: {e}")
    if "model" not in taken:
        problems.append("model=CHECKPOINT is required (a model folder or hub id; lmms-eval's pretrained= also works)")
    return taken, problems


def parse_model_args(given: Mapping[str, Any], lmms: Mapping[str, Any] | None = None) -> ModelArgs:
    """Check ``given`` (the parsed ``--model_args``) and lmms-eval's own settings ``lmms`` (``batch_size``,
    ``device``); raise one :class:`UsageError` listing every problem, before anything is loaded."""
    actions = eval_options()
    taken, problems = _read_all(given, lmms or {}, actions)
    if problems:
        raise UsageError("; ".join(problems))
    everything = {dest: a.default for dest, a in actions.items()} | taken
    if everything["batch_size"] < 1:
        raise UsageError(f"batch_size must be >= 1, got {everything['batch_size']}")
    args = ModelArgs(
        model=everything["model"],
        mode=everything["mode"],
        backend=everything["backend"],
        batch_size=everything["batch_size"],
        benchmark=everything["benchmark"],
        predictions=everything.get(PREDICTIONS),
        backend_kwargs={
            k: everything[k] for k in ("device", "dtype", "attn_implementation") if everything[k] is not None
        },
        options={k: v for k, v in everything.items() if k not in ModelArgs.__dataclass_fields__},
    )
    values = args.values(None)
    try:
        check_values(values)  # each value named, as zoomzero eval checks them
        mode_config(values)  # and the combinations
    except ValueError as e:
        raise UsageError(as_model_args(str(e))) from None
    return args
