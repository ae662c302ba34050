#!/usr/bin/env bash
# Installs the Debian 12 packages sparseflash builds with, if missing; with
# --test also what the tests use (chromium renders the HTML report), with
# --fuzz what the fuzzers and sanitized builds use (clang and its runtimes), with
# --arm64 the cross toolchain, qemu-user and the :arm64 libraries (multiarch).
# Uses apt-get directly as root, sudo otherwise.
set -euo pipefail

arm64=0
packages=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev libprotobuf-dev protobuf-compiler libsqlite3-dev liburing-dev
  libgtest-dev libgmock-dev libbenchmark-dev libzstd-dev libhwy-dev libcli11-dev
  nlohmann-json3-dev sqlite3
)
for flag in "$@"; do
  case "$flag" in
    --test) packages+=(chromium python3) ;;      # the HTML report in a test; a script's test
    --fuzz) packages+=(clang libclang-rt-14-dev) ;;  # libFuzzer and the sanitizers
    --arm64) arm64=1 ;;                          # cross build and emulation (below)
    *) echo "install-deps.sh: unknown flag $flag" >&2; exit 2 ;;
  esac
done

if [ "$arm64" = 1 ]; then
  packages+=(crossbuild-essential-arm64 qemu-user libc6:arm64 libstdc++6:arm64)
  for lib in libabsl-dev libprotobuf-dev libsqlite3-dev liburing-dev libgtest-dev libgmock-dev \
             libbenchmark-dev libzstd-dev libhwy-dev; do
    packages+=("$lib:arm64")
  done
fi
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
if [ "$arm64" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
