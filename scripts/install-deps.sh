#!/usr/bin/env bash
# Installs the Debian 12 packages sparseflash builds with, if missing; with
# --test also what the tests use (chromium renders the HTML report), with
# --fuzz what the fuzzers and sanitized builds use (clang and its runtimes).
# Uses apt-get directly as root, sudo otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev libprotobuf-dev protobuf-compiler libsqlite3-dev liburing-dev
  libgtest-dev libgmock-dev libbenchmark-dev libzstd-dev libhwy-dev libcli11-dev
  nlohmann-json3-dev sqlite3
)
for flag in "$@"; do
  case "$flag" in
    --test) packages+=(chromium) ;;              # renders the HTML report in a test
    --fuzz) packages+=(clang libclang-rt-14-dev) ;;  # libFuzzer and the sanitizers
    *) echo "install-deps.sh: unknown flag $flag" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
