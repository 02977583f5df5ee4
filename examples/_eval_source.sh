# Sourced by the eval_*.sh examples: turns MODEL / DATA into `zoomzero eval` arguments in SOURCE.
#   DATA=path/to/rows.jsonl   real rows (from `zoomzero data convert`), MODEL a checkpoint or hub id
#   DATA=synthetic            no real data: a synthetic benchmark and, unless MODEL is set, the tiny
#                             random model are built under $OUT/demo-inputs (CPU, seconds; small budgets)
eval_source() {  # $1: the benchmark's name in `zoomzero data convert --from`, $2: the default rows path
  if [[ "${DATA:-}" == synthetic ]]; then
    SOURCE=(--demo)
    [[ -n "${MODEL:-}" ]] && SOURCE+=(--model "$MODEL")
    return 0
  fi
  DATA=${DATA:-$2}
  MODEL=${MODEL:-Qwen/Qwen2.5-VL-7B-Instruct}
  if [[ ! -e "$DATA" ]]; then
    cat >&2 <<MSG
No rows at DATA=$DATA.
  * Real data: download the benchmark, then convert it (docs/preparing-data.md), e.g.
      zoomzero data convert --from $1 ... --out $DATA
  * No data at hand: run this script with DATA=synthetic to evaluate the tiny random model on a
    synthetic benchmark (videos with evidence in known spans) on CPU, e.g.
      DATA=synthetic bash $0
MSG
    exit 1
  fi
  SOURCE=(--model "$MODEL" --data "$DATA")
}
