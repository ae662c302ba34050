#!/usr/bin/env bash
# Cross-builds sparseflash for aarch64 (the phones' ISA) into build-arm64/ and runs
# the test suite under qemu-user, with `-cpu max` so the Highway kernel's NEON
# and SVE/SVE2 targets are all exercised. Installs what is missing: the arm64
# architecture for dpkg, the cross toolchain, qemu-user and the :arm64 libraries.
#   scripts/test-arm64.sh            every test
#   scripts/test-arm64.sh -- -R X    ctest arguments (e.g. a subset)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = "--" ] && shift
scripts/install-deps.sh --test --arm64
if [ ! -f build-arm64/build.ninja ]; then
  cmake -S . -B build-arm64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
fi
cmake --build build-arm64 -j"$(nproc)"
cd build-arm64
exec ctest --output-on-failure -j"$(nproc)" --timeout 1500 "$@"
