#!/usr/bin/env bash
# NExT-GQA test: Acc@QA, Acc@GQA, mIoP, IoP@0.3/0.5, mIoU, IoU@0.3/0.5 (doc-doc/NExT-GQA eval_ground.py).
# The paper reports GVQA benchmarks with one-stage inference: one coarse pass answers and grounds.
#   MODEL=ckpt bash examples/eval_nextgqa.sh   # rows: DATA, default data/eval/nextgqa_test.jsonl (docs/preparing-data.md)
#   MODEL=ckpt DATA=nextgqa_test.jsonl bash examples/eval_nextgqa.sh [extra zoomzero eval flags]
#   DATA=synthetic bash examples/eval_nextgqa.sh          # no data: synthetic benchmark, tiny model, CPU
set -euo pipefail
source "$(dirname "$0")/_eval_source.sh"
OUT=${OUT:-runs/eval-nextgqa}
eval_source nextgqa data/eval/nextgqa_test.jsonl
zoomzero eval --benchmark nextgqa "${SOURCE[@]}" --mode "${MODE:-one-stage}" --batch-size "${BATCH_SIZE:-1}" \
  --out "$OUT" "$@"
