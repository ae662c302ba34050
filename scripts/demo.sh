#!/usr/bin/env bash
# The README's first command: build, then run the embedded default example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/bin/sparseflash demo "$@"
