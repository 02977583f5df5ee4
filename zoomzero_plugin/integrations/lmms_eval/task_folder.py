"""Write lmms-eval tasks over dataset rows: nextgqa, rextime and cgbench_grounding, scored with the official metrics.

Each task is one YAML file in DIR over one rows file (``zoomzero data convert`` output, .jsonl or .parquet); its
metrics are the benchmark's paper columns, computed as `zoomzero score` computes them from the answer and the spans
each reply cites. lmms-eval finds the tasks with --include_path DIR. The rows are checked first (answers, spans,
video files); ReXTime's test rows (hidden labels) cannot be scored here: use `zoomzero eval` and
`zoomzero score --export rextime`.

examples:
  zoomzero lmms-eval tasks my_tasks --nextgqa nextgqa_test.jsonl --rextime rextime_val.jsonl
  lmms-eval --model zoomzero --model_args model=CKPT,mode=coarse-to-fine --tasks nextgqa --include_path my_tasks
  zoomzero lmms-eval tasks demo_tasks --demo   # tiny random model + synthetic videos: prints a CPU command
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ...errors import DataError, UsageError
from ...eval.metrics import truths_from_rows
from ...files import write_text
from ...inference.options import DEMO_DEFAULTS
from ...inference.passes import Question
from ...rows import read_rows
from ...synthetic.benchmark import prepare_demo
from .task import metric_names

# task name -> benchmark (eval.metrics); lmms-eval's own `cgbench` task is answer-only, hence another name
TASKS = {"nextgqa": "nextgqa", "rextime": "rextime", "cgbench_grounding": "cgbench"}
FUNCTIONS = "zoomzero_plugin.integrations.lmms_eval.task"  # the module the YAMLs name (lmms-eval imports it)


def task_yaml(task: str, rows: Path) -> str:
    """The YAML of ``task`` (a name of :data:`TASKS`) over the rows file ``rows`` (an absolute path)."""
    benchmark = TASKS[task]
    metrics = "".join(
        f"  - metric: {json.dumps(m)}\n    aggregation: !function {FUNCTIONS}.aggregate\n    higher_is_better: true\n"
        for m in metric_names(benchmark)
    )
    return (
        f"# written by `zoomzero lmms-eval tasks`: {benchmark} rows, scored with the benchmark's official metrics\n"
        f"task: {task}\n"
        f"dataset_path: {'parquet' if rows.suffix == '.parquet' else 'json'}\n"
        f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(rows))}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        f"doc_to_visual: !function {FUNCTIONS}.doc_to_visual\n"
        f"doc_to_text: !function {FUNCTIONS}.doc_to_text\n"
        f"doc_to_target: !function {FUNCTIONS}.doc_to_target\n"
        # for other models (zoomzero's modes use their own budgets): room for the template's reasoning
        "generation_kwargs:\n  max_new_tokens: 512\n  do_sample: false\n"
        f"process_results: !function {FUNCTIONS}.{benchmark}_results\n"
        f"metric_list:\n{metrics}"
        f"metadata:\n  version: 1.0\n  benchmark: {benchmark}\n"
    )


def check_rows(path: Path, flag: str) -> Path:
    """``path`` resolved, after checking its rows as ``zoomzero eval`` would (DataError naming the rows)."""

    if not path.is_file():
        raise UsageError(f"{flag} {path}: no such file")
    rows = read_rows(path)
    if not rows:
        raise DataError(f"{flag} {path} holds no rows")
    Question.from_rows(rows, str(path))  # answers, spans, one existing video per row, unique ids
    truths_from_rows(rows, source=f"{flag} {path}")  # a hidden label (ReXTime test) cannot be scored
    return path.resolve()


def write_tasks(directory: str | Path, rows: dict[str, str | Path]) -> list[Path]:
    """Write one YAML per ``task -> rows file`` into ``directory``; returns their paths."""
    directory = Path(directory)
    unknown = sorted(set(rows) - set(TASKS))
    if unknown:
        raise UsageError(f"unknown task(s) {unknown}; choose from {', '.join(TASKS)}")
    checked = {task: check_rows(Path(path), f"--{TASKS[task]}") for task, path in rows.items()}
    out = []
    for task, path in checked.items():
        out.append(directory / f"{task}.yaml")
        write_text(out[-1], task_yaml(task, path))
    return out


def demo_command(directory: Path, model: Path, tasks: list[str]) -> str:
    """The lmms-eval command of the demo: the tiny model with ``zoomzero eval --demo``'s small budgets."""
    budgets = ",".join(f"{k}={v}" for k, v in DEMO_DEFAULTS.items())
    return (
        f"lmms-eval --model zoomzero --model_args model={model},mode=coarse-to-fine,{budgets} "
        f"--tasks {','.join(tasks)} --include_path {directory} --batch_size 1"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", type=Path, metavar="DIR", help="folder to write the task YAMLs into")
    for task, benchmark in TASKS.items():
        parser.add_argument(
            f"--{benchmark}",
            type=Path,
            metavar="ROWS",
            dest=task,
            help=f"rows for the task `{task}` ({benchmark}'s official metrics)",
        )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="build the tiny random model and a synthetic benchmark under DIR/demo-inputs, write the "
        "task nextgqa over it and print the lmms-eval command (CPU, seconds)",
    )


def run(args: argparse.Namespace) -> int:
    rows = {task: getattr(args, task) for task in TASKS if getattr(args, task) is not None}
    model = None
    if args.demo:
        model, rows["nextgqa"] = prepare_demo(args.directory / "demo-inputs")
    if not rows:
        raise UsageError(f"give rows for at least one task ({', '.join('--' + b for b in TASKS.values())}) or --demo")
    for path in write_tasks(args.directory, rows):
        print(f"wrote {path}")
    if model is not None:
        print(
            "\nrun it (the RANDOM tiny model: chance-level answers, no valid span; this shows the pipeline):\n  "
            + demo_command(args.directory, model, sorted(rows))
        )
    else:
        print(
            f"\nlmms-eval --model zoomzero --model_args model=CHECKPOINT,mode=coarse-to-fine "
            f"--tasks {','.join(sorted(rows))} --include_path {args.directory}"
        )
    return 0
