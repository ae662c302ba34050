#!/usr/bin/env bash
# Configures (once) and builds sparseflash into build/; incremental when run again.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --build "$(scripts/configure.sh release)" -j"$(nproc)"
