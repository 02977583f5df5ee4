#!/usr/bin/env bash
# A full evaluation on a plain CPU machine, nothing downloaded, well under two minutes:
#   1. builds a tiny random Qwen2.5-VL and a synthetic grounded-QA benchmark (8 videos, each with a
#      coloured square in a known span; the question asks its colour),
#   2. evaluates it coarse-to-fine and divide-and-conquer with `zoomzero eval --demo`,
#   3. writes predictions.jsonl, metrics.json, report.md and plots for each mode.
# The model's weights are random: answers are chance-level and it writes no valid span, so the fine
# pass reads uniform frames. The point is to see every step and file of a real evaluation.
set -euo pipefail
OUT=${OUT:-runs/cpu-eval-demo}
zoomzero eval --demo --mode coarse-to-fine --out "$OUT/coarse-to-fine" "$@"
zoomzero eval --demo --model "$OUT/coarse-to-fine/demo-inputs/tiny-qwen" \
  --data "$OUT/coarse-to-fine/demo-inputs/synthetic/rows.jsonl" --mode divide-and-conquer \
  --out "$OUT/divide-and-conquer" "$@"
echo
echo "Reports: $OUT/coarse-to-fine/report.md  $OUT/divide-and-conquer/report.md"
echo "Every pass of every question (frames, tokens, texts): $OUT/coarse-to-fine/predictions.jsonl"
