"""Evaluate a model on a benchmark: resumable predictions, then metrics.json, report.md and plots.

Reads dataset rows (``zoomzero data convert`` output, or any rows with prompt/videos/answer columns),
runs an inference mode question by question and appends one JSON line per question to
OUT/predictions.jsonl (fsync'd: a killed run restarts where it stopped, never repeating a question).
Wall-clock timings go to OUT/timings.jsonl, so predictions of a resumed run equal an uninterrupted one.
Finally the benchmark's official metrics are computed (``zoomzero score`` does the same for any file).

Modes (Zoom-Zero §5.3, App. D): one-stage · coarse-to-fine · divide-and-conquer · iterative.
Defaults are the paper's: the prompt word for word (rows carry it: `zoomzero data convert`); 8,192
visual tokens at 1 fps for NExT-GQA and ReXTime, 16,384 for CG-Bench, Video-MME, MLVU and LVBench; 8..384
tokens per frame; ≤256 frames; 256-s windows, top-4 windows, responses ≤512 tokens.
Mode agent (VideoZoomer): the model calls <video_zoom> over up to 5 assistant turns after a 64-frame overview
(≤16 frames a call, ≤4 calls); predictions keep each transcript, report.md adds tool statistics.
--mode agent --no-tool: the authors' baseline without the tool (their eval_video_notool.sh: the video as one
video at 0.2 fps, ≤120 frames, one reply), to measure what the tool adds.

examples:
  zoomzero eval --benchmark nextgqa --model Qwen/Qwen2.5-VL-7B-Instruct --data nextgqa_test.jsonl --out runs/nextgqa
  zoomzero eval --benchmark lvbench --mode divide-and-conquer --model CKPT --data lvbench.jsonl --out runs/lvb-dc
  zoomzero eval --benchmark longvideobench --mode agent --model zsgvivo/videozoomer --data lvb_val.jsonl --out runs/vz
  zoomzero eval --benchmark longvideobench --mode agent --no-tool --model zsgvivo/videozoomer --data lvb_val.jsonl \
      --out runs/vz-notool
  zoomzero eval --demo --out runs/demo      # tiny random model + synthetic videos, CPU, seconds
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..errors import DataError, ResumeError, UsageError, ZoomzeroError, cli_edge
from ..files import check_writable
from ..inference.backend import load_backend
from ..inference.modes import MODES, ModeOutput, predict
from ..inference.options import (
    DEFAULTS,
    add_agent_arguments,
    add_backend_arguments,
    add_budget_arguments,
    add_mode_arguments,
    add_resume_arguments,
    check_values,
    flag,
    mode_config,
    resolve,
)
from ..inference.passes import Question
from ..journal import Journal, check_settings
from ..rows import label_hidden, read_rows
from ..synthetic.benchmark import prepare_demo
from .metrics import BENCHMARKS, get_benchmark
from .predictions import SETTINGS_FILE
from .report import finalize, metric_table

MODE_NAMES = tuple(MODES)
PREDICTIONS, TIMINGS, SETTINGS = "predictions.jsonl", "timings.jsonl", SETTINGS_FILE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    io = parser.add_argument_group("what to evaluate")
    io.add_argument("--benchmark", choices=list(BENCHMARKS), help="metric set to report (rows: generic grounded QA)")
    io.add_argument("--model", help="checkpoint path or hub id (Qwen2-VL / Qwen2.5-VL / Qwen3-VL with processor)")
    io.add_argument("--data", help="dataset rows, .jsonl or .parquet (see `zoomzero data convert`)")
    io.add_argument("--out", required=True, help="output directory (predictions, metrics, report, plots)")
    io.add_argument("--mode", choices=MODE_NAMES, default="one-stage", help="inference mode (default: one-stage)")
    io.add_argument("--limit", type=int, help="evaluate only the first N rows")
    io.add_argument(
        "--reduction",
        choices=("official", "union"),
        default="official",
        help="how several predicted spans are scored (default: each benchmark's official rule)",
    )
    add_resume_arguments(io, "predictions (OUT/predictions.jsonl)", "OUT/run.json")
    io.add_argument(
        "--demo",
        action="store_true",
        help="build the tiny random model and a synthetic benchmark under OUT/demo-inputs and "
        "evaluate them on CPU (no --model/--data needed; small budgets unless given)",
    )
    io.add_argument(
        "--skip-errors",
        action="store_true",
        help="a question that fails (e.g. an unreadable video) gets a record with its error and no "
        "answer instead of stopping the run; the next run asks it again",
    )

    run = parser.add_argument_group("backend")
    add_backend_arguments(run, "questions")
    run.add_argument("--attn-implementation", help="transformers attention, e.g. flash_attention_2 or sdpa")

    add_budget_arguments(parser)

    add_mode_arguments(parser.add_argument_group("modes"))
    add_agent_arguments(parser)


def evaluate(
    backend,
    rows: list[dict[str, Any]],
    out_dir: str | Path,
    *,
    benchmark: str,
    mode: str,
    cfg,
    batch_size: int = 1,
    reduction: str = "official",
    settings: dict[str, Any] | None = None,
    progress: bool = True,
    skip_errors: bool = False,
    repair: bool = False,
    source: str = "the data",
) -> dict[str, Any]:
    """Predict every row not yet in OUT/predictions.jsonl, then write metrics, report and plots.

    ``settings`` (JSON-able) are stored in OUT/run.json by the first run; a resumed run must match them
    (ResumeError naming the differences); results without run.json are refused (``repair``: adopted).
    A damaged journal line is a ResumeError (``repair``: dropped). Questions are matched by id, so
    the rows may be reordered between runs. Bad rows raise one DataError before any question is asked
    (``source`` names them). A failing batch stops the run naming its questions and the cause (a
    VideoError names the file), or with ``skip_errors`` is retried question by question, a question that
    still fails being recorded with ``error`` and no answer; a later run asks those again.
    Returns the metrics dict of :func:`zoomzero_plugin.eval.report.finalize`.
    """
    from tqdm import tqdm

    out_dir = Path(out_dir)
    rule = get_benchmark(benchmark).letter_rule  # replies are read as the benchmark's own script reads them
    questions = [replace(q, letter_rule=rule) for q in Question.from_rows(rows, source, videos=not skip_errors)]
    run = {"benchmark": benchmark, "mode": mode, "config": run_config(cfg, mode), **(settings or {})}
    predictions, timings = open_run(out_dir, run, {q.qid for q in questions}, source, repair)
    todo = [q for q in questions if q.qid not in predictions.done]
    bar = tqdm(
        total=len(questions),
        initial=len(questions) - len(todo),
        unit="q",
        desc=f"{benchmark} {mode}",
        disable=not progress,
        dynamic_ncols=True,
    )
    frames = 0
    with bar:
        for i in range(0, len(todo), batch_size):
            batch = todo[i : i + batch_size]
            done = _predict_batch(backend, batch, mode, cfg, skip_errors)
            predictions.append(p.record for p in done)
            timings.append(p.timing for p in done if p.timing["qid"] not in timings.done)
            frames += sum(record_frames(p.record) for p in done)
            bar.update(len(batch))
            bar.set_postfix(frames_per_q=f"{frames / (i + len(batch)):.0f}")
    truths = {q.qid: q.truth for q in questions}
    hidden = sum(label_hidden(t) for t in truths.values())
    if hidden:  # a test split: predictions only, for `zoomzero score --export`
        return {"labels_hidden": hidden}
    return finalize(out_dir, benchmark, truths, reduction)


def run_config(cfg, mode: str) -> dict[str, Any]:
    """The mode's settings as run.json stores them: the agent's knobs for the agent mode only, and not when its turns
    run (a run may resume under the other schedule)."""
    config = asdict(cfg)
    if mode != "agent":
        config.pop("agent", None)
    else:
        config["agent"].pop("schedule", None)
    return config


def open_run(out_dir: Path, run: dict[str, Any], qids: set[str], source: str, repair: bool) -> tuple[Journal, Journal]:
    """The run folder's predictions and timings journals, once its settings (``run``) match the stored ones; the
    questions that failed before are dropped from both, to be asked again."""
    held = any((out_dir / name).is_file() and (out_dir / name).stat().st_size for name in (PREDICTIONS, TIMINGS))
    check_settings(out_dir / SETTINGS, run, results=held, repair=repair, name=setting_flag)
    predictions = Journal(out_dir / PREDICTIONS, repair=repair)
    timings = Journal(out_dir / TIMINGS, repair=repair)
    foreign = predictions.done - qids
    if foreign:
        raise ResumeError(
            f"{out_dir / PREDICTIONS} has questions that are not in {source}, e.g. {sorted(foreign)[:3]}: "
            "was it made from other data? Use another --out, or --restart to discard it"
        )
    failed = {str(r["qid"]) for r in predictions.records if r.get("error")}
    # a timing whose prediction was lost (repair, kill) or is asked again, in one rewrite
    timings.drop((timings.done - predictions.done) | failed)
    if failed:  # asked again: perhaps the video has been fixed
        predictions.drop(failed)
        print(f"asking again {len(failed)} question(s) that failed before", file=sys.stderr)
    return predictions, timings


def setting_flag(key: str) -> str:
    """The command-line flag behind a stored setting (``config.budget.fps`` → ``--fps``)."""
    last = key.rsplit(".", 1)[-1]
    if key.startswith("config.agent.budget."):
        return flag("agent_" + last)
    if last in DEFAULTS or key in ("benchmark", "mode", "model", "data", "backend"):
        return flag(last)
    return {
        "config.budget.factor": "the model's pixels per token side (--model)",
        "config.agent.tool": "--no-tool",
    }.get(key, key)


def record_frames(record: dict[str, Any]) -> int:
    """Frames a prediction's model read: over its passes, or the agent's images."""
    if "passes" in record:
        return sum(x["frames"] for x in record["passes"])
    return int(record.get("frames") or 0)


def _predict_batch(backend, batch, mode: str, cfg, skip_errors: bool):
    try:
        return predict(backend, batch, mode, cfg)
    except Exception as e:
        if not skip_errors:
            hint = "rerun with --skip-errors to record failures and go on"
            if isinstance(e, ZoomzeroError):  # the user's to fix: one line naming the question and the cause
                named = [q.qid for q in batch if q.video in str(e)] or [q.qid for q in batch]
                raise type(e)(f"question {', '.join(named)}: {e} ({hint})") from e
            raise RuntimeError(f"{mode} failed on {[q.qid for q in batch]} ({hint}): {type(e).__name__}: {e}") from e
        if len(batch) > 1:
            return [p for q in batch for p in _predict_batch(backend, [q], mode, cfg, skip_errors)]
        record = {
            "qid": batch[0].qid,
            "answer": None,
            "spans": [],
            "confidence": None,
            "mode": mode,
            "fallback": None,
            "passes": [],
            "error": f"{type(e).__name__}: {e}",
        }
        return [ModeOutput(record, {"qid": batch[0].qid, "passes": [], "total_s": 0.0})]


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    values = resolve(args, demo=args.demo, benchmark=args.benchmark)
    check_values(values)  # each flag value named, before the data and the model
    if values["agent_no_tool"] and args.mode != "agent":
        raise UsageError("--no-tool is VideoZoomer's baseline without its tool: use it with --mode agent")
    if values["agent_no_tool"] and args.agent_prompt is not None:
        raise UsageError("--no-tool reads the authors' no-tool system prompt; drop --agent-prompt")
    try:
        cfg = mode_config(values)  # every other option checked before anything is built or loaded
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.demo:
        if not (args.model and args.data):
            model, data = prepare_demo(out / "demo-inputs")
            args.model, args.data = args.model or str(model), args.data or str(data)
        args.benchmark = args.benchmark or "rows"
        print(
            "demo: small CPU budgets; with the tiny RANDOM model, answers are chance-level and no span is valid: "
            "this shows the pipeline, not accuracy.",
            file=sys.stderr,
        )
    missing = [f"--{k}" for k in ("benchmark", "model", "data") if not getattr(args, k)]
    if missing:
        raise UsageError(f"{', '.join(missing)} required (or --demo)")
    if args.batch_size < 1:
        raise UsageError("--batch-size must be >= 1")
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be >= 1")
    if not Path(args.data).is_file():
        raise UsageError(f"--data {args.data}: no such file")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder")
    check_writable(out / SETTINGS, "--out")
    rows = read_rows(args.data)[: args.limit]
    if not rows:
        raise DataError(f"--data {args.data} holds no rows")
    Question.from_rows(rows, args.data, videos=not args.skip_errors)  # every bad row, before the model loads
    if args.restart:
        for name in (PREDICTIONS, TIMINGS, SETTINGS):
            (out / name).unlink(missing_ok=True)
    kwargs = {"device": args.device, "dtype": args.dtype, "batch_size": args.batch_size}
    if args.attn_implementation:
        kwargs["attn_implementation"] = args.attn_implementation
    if args.backend == "vllm" and args.mode == "agent":
        kwargs["max_images"] = cfg.agent.budget.max_images
    backend = load_backend(args.backend, args.model, **kwargs)  # checks the model first: ModelError at once
    values = resolve(args, demo=args.demo, benchmark=args.benchmark, geometry=backend.geometry)
    check_values(values)  # the per-frame bounds, now in the model's own pixels
    cfg = mode_config(values, backend.geometry)
    settings = {"model": str(args.model), "data": str(Path(args.data).resolve()), "backend": args.backend}
    metrics = evaluate(
        backend,
        rows,
        out,
        benchmark=args.benchmark,
        mode=args.mode,
        cfg=cfg,
        batch_size=args.batch_size,
        reduction=args.reduction,
        settings=settings,
        progress=not args.no_progress,
        skip_errors=args.skip_errors,
        repair=args.repair,
        source=str(args.data),
    )
    if "labels_hidden" in metrics:
        print(
            f"{metrics['labels_hidden']} questions have hidden labels: no metrics. Write the server's submission with\n"
            f"  zoomzero score {out / PREDICTIONS} --benchmark {args.benchmark} --data {args.data} --export "
            "SUBMISSION.jsonl"
        )
        return 0
    print(metric_table(args.benchmark, metrics))
    print(f"\npredictions: {out / PREDICTIONS}\nreport:      {out / 'report.md'}\nmetrics:     {out / 'metrics.json'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m zoomzero_plugin.eval.runner``: the same as ``zoomzero eval``, through the same edge (one-line
    errors, a quiet end when stdout's reader goes away)."""
    parser = argparse.ArgumentParser(
        prog="zoomzero eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    return cli_edge("zoomzero eval", lambda: run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
