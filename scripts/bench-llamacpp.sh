#!/usr/bin/env bash
# Measures real llama.cpp (its llama-bench) decoding MODEL.gguf under hard
# memory limits, as sparseflash's real runs are measured, and stores each
# result in a results database as a measured run of the llamacpp baseline:
#
#   scripts/bench-llamacpp.sh LLAMA_BENCH MODEL.gguf [options]
#     --db FILE          results database (default results.db)
#     --device NAME      profile of this machine (default host)
#     --model NAME       catalog model the GGUF stands for (default turbosparse-mistral-7b)
#     --tokens N         decode tokens per test (default 16)
#     --threads N        threads (default: every core)
#     --limits LIST      comma-separated: a share of the file (0.5), "file+1G" or
#                        "none" (default 0.25,0.5,0.75,file+1G,none)
#
# Each limit runs in its own memory cgroup (v1 or v2; needs root) whose limit
# is the memory the process may use; the page cache is dropped before each
# run, so every run starts cold. llama.cpp maps the file: the kernel pages it
# in and out under the limit, which is the behaviour being measured. Build it
# with -DGGML_CPU_AARCH64=OFF for the limited runs: by default x86 builds with
# AVX-512 repack Q4_0 weights into anonymous memory at load, which a limit
# below the file cannot page out (a half-file limit was OOM-killed).
set -euo pipefail
usage() { sed -n 2,21p "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
[ $# -ge 2 ] || usage
bench=$1 gguf=$2
shift 2
db=results.db device=host model=turbosparse-mistral-7b tokens=16 threads=$(nproc)
limits=0.25,0.5,0.75,file+1G,none
while [ $# -gt 0 ]; do
  case $1 in
    --db) db=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --limits) limits=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option $1" >&2; usage ;;
  esac
done
[ -x "$bench" ] || { echo "$bench: not an executable llama-bench" >&2; exit 2; }
[ -f "$gguf" ] || { echo "$gguf: no such model file" >&2; exit 2; }
cli="$(dirname "$0")/../build/bin/sparseflash"
[ -x "$cli" ] || { echo "$cli: build sparseflash first (scripts/build.sh)" >&2; exit 2; }
file_bytes=$(stat -c %s "$gguf")

source "$(dirname "$0")/lib/measuring.sh"

for spec in ${limits//,/ }; do
  case $spec in
    none) limit="" ;;
    file+1G) limit=$((file_bytes + (1 << 30))) ;;
    *) limit=$(share_of "$spec" "$file_bytes") ;;
  esac
  drop_page_cache
  out=$(mktemp --suffix=.json)
  echo "== llama-bench, memory limit ${limit:-none} ($spec)" >&2
  run_limited "$limit" "$bench" -m "$gguf" -p 0 -n "$tokens" -t "$threads" -r 1 -o json > "$out" ||
    true
  if [ ! -s "$out" ]; then
    echo "llama-bench printed nothing under ${limit:-no} limit (killed?)" >&2
    rm -f "$out"
    continue
  fi
  memory=()
  [ -n "$limit" ] && memory=(--memory "$limit")
  "$cli" db import --llama-bench "$out" --db "$db" --device "$device" --model "$model" "${memory[@]}"
  grep -o '"avg_ts": [0-9.e+-]*' "$out" | sed "s/^/  ${spec}: /" >&2
  rm -f "$out"
done
