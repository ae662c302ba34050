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
cmake --build "$(scripts/configure.sh arm64)" -j"$(nproc)"
cd build-arm64
exec ctest --output-on-failure -j"$(nproc)" --timeout 1500 "$@"
