#!/usr/bin/env bash
# The README's second command: build, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
