#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang with ASan+UBSan) into build-asan/
# (the build scripts/test.sh --sanitize address,undefined uses too)
# and runs each for SECONDS (default 30) on its seed corpus (fuzz/corpus/NAME,
# read-only) plus a working corpus in build-asan/corpus/NAME, with its
# dictionary where there is one. Stops with exit 1 at the first crash, timeout
# or out-of-memory; the reproducer is left in build-asan/artifacts/.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
scripts/install-deps.sh --fuzz
scripts/configure.sh asan >/dev/null
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(trace_reader text_trace npy_import device_profile model_file sweep_file
             weight_header tokenizer tiny_model oracle_general)
fi
cmake --build build-asan -j"$(nproc)" --target "${harnesses[@]/#/fuzz_}"
mkdir -p build-asan/artifacts
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for h in "${harnesses[@]}"; do
  mkdir -p "build-asan/corpus/$h"
  dict=()
  [ -f "fuzz/dict/$h.dict" ] && dict=(-dict="fuzz/dict/$h.dict")
  echo "== fuzz_$h for ${seconds}s" >&2
  log="build-asan/fuzz_$h.log"
  if ! "build-asan/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="build-asan/artifacts/${h}-" \
       "${dict[@]}" "build-asan/corpus/$h" "fuzz/corpus/$h" > "$log" 2>&1; then
    tail -40 "$log" >&2
    echo "fuzz_$h failed; see $log and build-asan/artifacts/" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/  fuzz_$h /" >&2
done
