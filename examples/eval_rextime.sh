#!/usr/bin/env bash
# ReXTime val: mIoU, R1@0.3/0.5/0.7, accuracy, accuracy ∧ IoU≥0.5 (ReXTime evaluation/rextime_eval.py;
# test labels are hidden behind the benchmark's server). One-stage, as in the paper.
#   MODEL=ckpt bash examples/eval_rextime.sh   # rows: DATA, default data/eval/rextime_val.jsonl (docs/preparing-data.md)
#   MODEL=ckpt DATA=rextime_val.jsonl bash examples/eval_rextime.sh [extra zoomzero eval flags]
#   DATA=synthetic bash examples/eval_rextime.sh
set -euo pipefail
source "$(dirname "$0")/_eval_source.sh"
OUT=${OUT:-runs/eval-rextime}
eval_source rextime data/eval/rextime_val.jsonl
zoomzero eval --benchmark rextime "${SOURCE[@]}" --mode "${MODE:-one-stage}" --batch-size "${BATCH_SIZE:-1}" \
  --out "$OUT" "$@"
