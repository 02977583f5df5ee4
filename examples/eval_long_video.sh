#!/usr/bin/env bash
# Long-video MCQ benchmarks (VideoMME, MLVU, LVBench) with the paper's two zoom modes:
#   coarse-to-fine      coarse pass ≤256 frames over the whole video, zoom pass on its spans
#   divide-and-conquer  256-s windows each ground and answer; zoom pass on the top-4 windows' spans
# Every benchmark whose rows exist is run in both modes (one output directory each).
#   MODEL=ckpt bash examples/eval_long_video.sh   # rows: data/eval/{videomme,mlvu,lvbench}.jsonl (docs/preparing-data.md)
#   MODEL=ckpt VIDEOMME=videomme.jsonl MLVU=mlvu.jsonl LVBENCH=lvbench.jsonl bash examples/eval_long_video.sh
#   DATA=synthetic bash examples/eval_long_video.sh      # no data: synthetic benchmark, tiny model, CPU
set -euo pipefail
source "$(dirname "$0")/_eval_source.sh"
OUT=${OUT:-runs/eval-long}
declare -A ROWS=([videomme]=${VIDEOMME:-data/eval/videomme.jsonl} [mlvu]=${MLVU:-data/eval/mlvu.jsonl}
                 [lvbench]=${LVBENCH:-data/eval/lvbench.jsonl})
ran=0
for bench in videomme mlvu lvbench; do
  if [[ "${DATA:-}" != synthetic && ! -e "${ROWS[$bench]}" ]]; then
    echo "skip $bench: no rows at ${ROWS[$bench]}" >&2
    continue
  fi
  ( [[ "${DATA:-}" == synthetic ]] || DATA=${ROWS[$bench]}
    eval_source "$bench" "${ROWS[$bench]}"
    for mode in coarse-to-fine divide-and-conquer; do
      zoomzero eval --benchmark "$bench" "${SOURCE[@]}" --mode "$mode" --batch-size "${BATCH_SIZE:-1}" \
        --out "$OUT/$bench-$mode" "$@"
    done )
  ran=$((ran + 1))
done
if [[ $ran == 0 ]]; then
  echo "No long-video rows found. Convert them (docs/preparing-data.md), or run with DATA=synthetic." >&2
  exit 1
fi
