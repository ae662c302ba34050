#!/usr/bin/env bash
# Real llama.cpp beside sparseflash's real engine on this machine, the two
# alternated run by run, in rounds: every run starts with the page cache
# dropped and runs inside a memory cgroup whose hard limit is its memory (a
# share of each system's own file; sparseflash's --memory is that limit). One
# line per run goes to a log, every result to a results database, and a
# Markdown table (measured, predicted, ratio, prediction error) to stdout:
#
#   scripts/bench-side-by-side.sh --llama-bench BIN --gguf MODEL.gguf \
#       --device PROFILE --weights FILE [options]
#     --llama-bench-plain BIN  llama-bench built with -DGGML_CPU_AARCH64=OFF, for
#                         the limited runs and beside the default build unlimited
#                         (default: --llama-bench for everything)
#     --model NAME        catalog model of the weight file (turbosparse-mistral-7b)
#     --shares LIST       comma-separated shares of each file, or none
#                         (default none,0.75,0.5,0.25)
#     --rounds N          rounds over every share and system (default 3)
#     --tokens N          decode tokens per run (default 16)
#     --threads N         llama.cpp threads (default: every core)
#     --db FILE           results database (default side-by-side.db)
#     --log FILE          one tab-separated line per run (default side-by-side.tsv)
#     --cold-storage      do not read each file once with O_DIRECT before its run
#                         (by default both systems' files are: storage that caches
#                         what was read, a virtual disk's host, is then as `device
#                         calibrate --file` measured it, for both alike)
#     --recheck-compute   replay measures this machine's compute rates just before
#                         and after each run and predicts again at them (about 6 s
#                         a run): the table then gives the errors at both
#     --recheck-storage   replay reads the weight file again just before and after
#                         each run at the profile's random-read point (and, mapped,
#                         its read-ahead) and predicts at the storage's rate now;
#                         with --recheck-compute, at both
#     --summarize-only    print the table of an existing --log and stop
#
# sparseflash runs per share: none: in_memory sparse=true (6 GB); a share above
# a third: powerinfer2 (split and whole bundles), llmflash and llamacpp
# (mmap=true, the kernel paging the mapped file); below: powerinfer2 whole
# bundles with attention=flash, and llamacpp. Needs root (cgroups, dropping
# the page cache); a quiet machine (cat /proc/loadavg) and nothing built beside it.
set -euo pipefail
usage() { sed -n 2,35p "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
here=$(dirname "$0")
bench="" plain="" gguf="" device="" weights="" model=turbosparse-mistral-7b
shares=none,0.75,0.5,0.25 rounds=3 tokens=16 threads=$(nproc)
db=side-by-side.db log=side-by-side.tsv summarize_only=0 recheck=() warm=1
while [ $# -gt 0 ]; do
  case $1 in
    --llama-bench) bench=$2; shift 2 ;;
    --llama-bench-plain) plain=$2; shift 2 ;;
    --gguf) gguf=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --weights) weights=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --shares) shares=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --recheck-compute) recheck+=(--recheck-compute); shift ;;
    --recheck-storage) recheck+=(--recheck-storage); shift ;;
    --cold-storage) warm=0; shift ;;
    --summarize-only) summarize_only=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option $1" >&2; usage ;;
  esac
done
summarize() { python3 "$here/side-by-side-table.py" "$log"; }
if [ "$summarize_only" = 1 ]; then
  [ -f "$log" ] || { echo "$log: no such log (--log)" >&2; exit 2; }
  summarize
  exit
fi
[ -x "$bench" ] || { echo "--llama-bench '$bench': not an executable llama-bench" >&2; exit 2; }
[ -z "$plain" ] && plain=$bench
[ -x "$plain" ] || { echo "--llama-bench-plain '$plain': not an executable" >&2; exit 2; }
[ -f "$gguf" ] || { echo "--gguf '$gguf': no such model file" >&2; exit 2; }
[ -f "$device" ] || { echo "--device '$device': no such profile (device calibrate)" >&2; exit 2; }
[ -f "$weights" ] || { echo "--weights '$weights': no such weight file (weights make)" >&2; exit 2; }
cli="$here/../build/bin/sparseflash"
[ -x "$cli" ] || { echo "$cli: build sparseflash first (scripts/build.sh)" >&2; exit 2; }
source "$here/lib/measuring.sh"
gguf_bytes=$(stat -c %s "$gguf")
weight_bytes=$(stat -c %s "$weights")

# Drops the page cache and, unless --cold-storage, reads `file` once with
# O_DIRECT (past the page cache), so that a run starts cold in this machine's
# memory but finds the storage as calibration did.
prepare_run() {
  drop_page_cache
  [ "$warm" = 1 ] && dd if="$1" of=/dev/null bs=4M iflag=direct status=none
  return 0
}

# One llama-bench run; appends its line to the log.
run_llama() {
  local round=$1 share=$2 build=$3 bin=$4 limit out ts
  limit=$(share_of "$share" "$gguf_bytes")
  prepare_run "$gguf"
  out=$(mktemp --suffix=.json)
  run_limited "$limit" "$bin" -m "$gguf" -p 0 -n "$tokens" -t "$threads" -r 1 -o json \
    > "$out" 2> /dev/null || true
  ts=$(grep -o '"avg_ts": [0-9.e+-]*' "$out" | head -1 | awk '{print $2}')
  if [ -z "$ts" ]; then
    echo "  llama.cpp $build at $share: no result (killed by its limit?)" >&2
    ts=killed
  else
    local memory=()
    [ -n "$limit" ] && memory=(--memory "$limit")
    "$cli" db import --llama-bench "$out" --db "$db" --device "$device" --model "$model" \
      "${memory[@]}" > /dev/null
  fi
  rm -f "$out"
  printf '%s\t%s\tllama.cpp\t%s\t%s\t-\t-\n' "$round" "$share" "$build" "$ts" | tee -a "$log" >&2
}

# One sparseflash replay of `strategy` with `options`; appends its line to the log.
run_replay() {
  local round=$1 share=$2 strategy=$3 options=$4 limit budget out measured predicted now
  limit=$(share_of "$share" "$weight_bytes")
  [ -z "$limit" ] && limit=6000000000
  budget="$((limit / 1000000))MB"
  limit=$((limit / 1000000 * 1000000))
  local opts=()
  for o in $options; do opts+=(--option "$o"); done
  prepare_run "$weights"
  out=$(mktemp --suffix=.json)
  run_limited "$limit" "$cli" replay --device "$device" --model "$model" --weights "$weights" \
    --strategy "$strategy" --memory "$budget" --tokens "$tokens" --cold-storage --json \
    --db "$db" "${recheck[@]}" "${opts[@]}" > "$out" 2> /dev/null || true
  read -r measured predicted now < <(python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    now = d.get("predicted_at_rates_now", {}).get("decode_tokens_per_s", "-")
    print(d["measured"]["decode_tokens_per_s"], d["predicted"]["decode_tokens_per_s"], now)
except Exception:
    print("failed - -")' "$out")
  rm -f "$out"
  printf '%s\t%s\tsparseflash\t%s\t%s\t%s\t%s\n' "$round" "$share" \
    "$strategy${options:+ $options}" "$measured" "$predicted" "$now" | tee -a "$log" >&2
}

# Every system at one share, in turn.
run_share() {
  local round=$1 share=$2
  if [ "$share" = none ]; then
    run_llama "$round" "$share" default "$bench"
    run_replay "$round" "$share" in_memory "sparse=true"
    [ "$plain" != "$bench" ] && run_llama "$round" "$share" plain "$plain"
    return
  fi
  run_llama "$round" "$share" plain "$plain"
  if awk -v s="$share" 'BEGIN { exit !(s > 0.34) }'; then
    run_replay "$round" "$share" powerinfer2 ""
    run_replay "$round" "$share" powerinfer2 "layout=bundle"
    run_replay "$round" "$share" llmflash ""
  else
    run_replay "$round" "$share" powerinfer2 "layout=bundle attention=flash"
  fi
  run_replay "$round" "$share" llamacpp "mmap=true"
}

printf 'round\tshare\tsystem\tconfiguration\tmeasured\tpredicted\tpredicted_now\n' > "$log"
for ((round = 1; round <= rounds; ++round)); do
  echo "== round $round of $rounds ($(cut -d' ' -f1-3 /proc/loadavg) load)" >&2
  for share in ${shares//,/ }; do run_share "$round" "$share"; done
done
summarize
