"""Score a predictions file with a benchmark's official metrics.

PREDICTIONS is JSONL, one record per question, from any system:
  {"qid": "q1", "answer": "B", "spans": [[12.5, 20.0], [31.0, 33.5]], "confidence": 0.91}
answer may be null or the system's whole reply: its letter is read among the question's own options as the
benchmark's script reads it (Video-MME, LongVideoBench, MLVU, LVBench, CG-Bench; this package's reading of answer
phrases for the others: docs/metrics.md, "Answer letters"); spans may be empty; other keys are ignored; for a
repeated qid the last line wins.
--data is the benchmark's dataset rows (.jsonl/.parquet, as written by `zoomzero data convert`); every
predicted qid must be one of its questions. Questions without a prediction count as the benchmark's
own script counts them (see docs/metrics.md).

--reduction official applies the benchmark script's rule to several predicted spans (NExT-GQA and
ReXTime: the first span only; CG-Bench: their union); --reduction union merges all valid spans.
Prints the metric table (percentages); --out DIR also writes metrics.json, report.md and plots there.

--export FILE writes the benchmark server's submission file instead (ReXTime's test labels are hidden):
every question of --data (rows of `zoomzero data convert --from rextime-test`) needs a prediction.
  zoomzero score runs/rextime-test/predictions.jsonl --benchmark rextime --data rextime_test.jsonl \
      --export rextime_submission.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import DataError, UsageError, ZoomzeroError
from ..files import write_text
from ..rows import read_rows
from .metrics import (
    BENCHMARKS,
    REDUCTION_CHOICES,
    get_benchmark,
    score_predictions,
    source_mismatch,
    truths_from_rows,
)
from .predictions import index_predictions, load_predictions
from .report import counts_table, metric_table, write_report
from .submission import EXPORTS, submission


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("predictions", type=Path, metavar="PREDICTIONS.jsonl", help="predictions, one JSON per line")
    parser.add_argument("--benchmark", required=True, choices=list(BENCHMARKS), help="whose metrics to compute")
    parser.add_argument("--data", required=True, type=Path, metavar="ROWS", help="dataset rows with the ground truth")
    parser.add_argument(
        "--reduction",
        choices=REDUCTION_CHOICES,
        default="official",
        help="how several predicted spans are reduced (default: official)",
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="write metrics.json, report.md and plots here")
    parser.add_argument(
        "--export",
        type=Path,
        metavar="FILE",
        help=f"write the server's submission file instead of scoring ({', '.join(EXPORTS)}: test labels are hidden)",
    )


def run(args: argparse.Namespace) -> int:
    for what, path in (("predictions", args.predictions), ("data", args.data)):
        if not path.exists():
            raise UsageError(f"{what} file not found: {path}")
        if path.is_dir():
            raise UsageError(f"{what} {path} is a folder; give a file")
    if args.export is not None:
        return _export(args)
    try:
        truths = truths_from_rows(read_rows(args.data), source=str(args.data))
        predictions = _predictions(args.predictions)
        if mismatch := source_mismatch(args.benchmark, truths):
            print(f"zoomzero score: warning: {mismatch}", file=sys.stderr)
        if args.out is not None:
            metrics = write_report(
                args.out, args.benchmark, predictions, truths, args.reduction, source=str(args.predictions)
            )
        else:
            metrics = score_predictions(args.benchmark, predictions, truths, args.reduction)
    except ZoomzeroError:
        raise
    except ValueError as e:  # a malformed predictions or rows file, named by the reader
        raise DataError(str(e)) from None
    letters = get_benchmark(args.benchmark).letter_rule.name
    print(f"{args.benchmark} · reduction {args.reduction} · letters read by {letters} · {args.predictions}\n")
    print(metric_table(args.benchmark, metrics) + "\n")
    print(counts_table(metrics))
    if args.out is not None:
        print(f"\nwrote {args.out / 'metrics.json'}, {args.out / 'report.md'} and plots")
    return 0


def _export(args: argparse.Namespace) -> int:
    if args.benchmark not in EXPORTS:
        raise UsageError(f"--export writes {', '.join(EXPORTS)} submissions, not {args.benchmark}")
    if args.out is not None:
        raise UsageError("--export writes a submission, not a report: drop --out")
    try:
        truths = truths_from_rows(read_rows(args.data), allow_hidden=True, source=str(args.data))
        predictions, _ = index_predictions(_predictions(args.predictions))
        lines = submission(args.benchmark, predictions, truths)
    except ValueError as e:  # a malformed predictions or rows file, named by the reader
        raise DataError(str(e)) from None
    write_text(args.export, "".join(json.dumps(line) + "\n" for line in lines))
    print(f"wrote {len(lines)} {args.benchmark} submission lines to {args.export}")
    return 0


def _predictions(path: Path) -> list[dict]:
    """The file's records; a cut last line is said on stderr, a file without predictions is an error."""
    loaded = load_predictions(path)
    loaded.require_records()
    if warning := loaded.warning():
        print(f"zoomzero score: warning: {warning}", file=sys.stderr)
    return loaded.records
