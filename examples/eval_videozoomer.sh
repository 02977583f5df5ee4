#!/usr/bin/env bash
# VideoZoomer's <video_zoom> agent on the long-video benchmarks its paper reports (LongVideoBench, MLVU,
# Video-MME, LVBench): a 64-frame overview at 0.5 fps, then up to 4 calls of <= 16 frames over <= 5 assistant turns,
# with the authors' evaluation prompt (answer in \boxed{} inside <answer>). Every benchmark whose rows exist
# is run; each prediction keeps its transcript and report.md adds tool statistics.
#   MODEL=zsgvivo/videozoomer LVB=lvb_val.jsonl MLVU=mlvu.jsonl VIDEOMME=videomme.jsonl \
#     LVBENCH=lvbench.jsonl BACKEND=vllm bash examples/eval_videozoomer.sh
#   DATA=synthetic bash examples/eval_videozoomer.sh      # no data: synthetic benchmark, tiny model, CPU
# Extra arguments go to every `zoomzero eval` (e.g. --agent-max-assistant-turns 3, --agent-prompt train, --limit 50).
set -euo pipefail
source "$(dirname "$0")/_eval_source.sh"
OUT=${OUT:-runs/eval-videozoomer}
declare -A ROWS=([longvideobench]=${LVB:-data/lvb_val.jsonl} [mlvu]=${MLVU:-data/mlvu.jsonl}
                 [videomme]=${VIDEOMME:-data/videomme.jsonl} [lvbench]=${LVBENCH:-data/lvbench.jsonl})
ran=0
for bench in longvideobench mlvu videomme lvbench; do
  if [[ "${DATA:-}" != synthetic && ! -e "${ROWS[$bench]}" ]]; then
    echo "skip $bench: no rows at ${ROWS[$bench]}" >&2
    continue
  fi
  ( if [[ "${DATA:-}" != synthetic ]]; then DATA=${ROWS[$bench]} MODEL=${MODEL:-zsgvivo/videozoomer}; fi
    eval_source "$bench" "${ROWS[$bench]}"
    zoomzero eval --benchmark "$bench" "${SOURCE[@]}" --mode agent --backend "${BACKEND:-transformers}" \
      --batch-size "${BATCH_SIZE:-8}" --out "$OUT/$bench" "$@" )
  ran=$((ran + 1))
  [[ "${DATA:-}" == synthetic ]] && break  # one synthetic run shows the pipeline
done
if [[ $ran == 0 ]]; then
  echo "No long-video rows found. Convert them (docs/preparing-data.md, e.g. zoomzero data convert --from" \
       "longvideobench ...), or run with DATA=synthetic." >&2
  exit 1
fi
