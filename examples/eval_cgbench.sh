#!/usr/bin/env bash
# CG-Bench (long videos with clue intervals): long-acc., mIoU, rec.@IoU, acc.@IoU (CG-Bench run/utils.py).
# Long videos: coarse-to-fine by default (coarse ≤256 frames, then a zoom pass on the predicted clues
# under the same 8,192-token budget); MODE=divide-and-conquer for 256-s windows and the top-4 windows.
#   MODEL=ckpt bash examples/eval_cgbench.sh   # rows: DATA, default data/eval/cgbench.jsonl (docs/preparing-data.md)
#   MODEL=ckpt DATA=cgbench.jsonl bash examples/eval_cgbench.sh [extra zoomzero eval flags]
#   DATA=synthetic bash examples/eval_cgbench.sh
set -euo pipefail
source "$(dirname "$0")/_eval_source.sh"
OUT=${OUT:-runs/eval-cgbench}
eval_source cgbench data/eval/cgbench.jsonl
zoomzero eval --benchmark cgbench "${SOURCE[@]}" --mode "${MODE:-coarse-to-fine}" --batch-size "${BATCH_SIZE:-1}" \
  --out "$OUT" "$@"
