#!/usr/bin/env bash
# The README's second command: build, then run every test.
#   scripts/test.sh                              release build in build/ (GCC)
#   scripts/test.sh --sanitize address,undefined clang + ASan/UBSan in build-asan/
#                                                (the same build holds the fuzzers)
#   scripts/test.sh --sanitize thread            clang + TSan in build-tsan/
# Extra arguments after -- go to ctest (e.g. -- -R trace).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=""
if [ "${1:-}" = "--sanitize" ]; then
  sanitize="${2:?--sanitize needs address,undefined or thread}"
  shift 2
fi
[ "${1:-}" = "--" ] && shift
if [ -z "$sanitize" ]; then
  scripts/install-deps.sh --test
  scripts/build.sh
  cd build
  exec ctest --output-on-failure -j"$(nproc)" "$@"
fi
case "$sanitize" in
  address,undefined|undefined,address) kind=asan ;;
  thread) kind=tsan ;;
  *) echo "test.sh: --sanitize takes address,undefined or thread, not '$sanitize'" >&2; exit 2 ;;
esac
scripts/install-deps.sh --test --fuzz
dir=$(scripts/configure.sh "$kind")
cmake --build "$dir" -j"$(nproc)"
export ASAN_OPTIONS="detect_leaks=1:suppressions=$PWD/scripts/sanitizer-suppressions/asan.supp"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizer-suppressions/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/sanitizer-suppressions/tsan.supp"
cd "$dir"
exec ctest --output-on-failure -j"$(nproc)" "$@"
