#!/usr/bin/env bash
# Configures (once) the build folder of one kind and prints its path:
#   release  build/        GCC, optimized (the CLI, benchmarks, the test suite)
#   asan     build-asan/   clang, ASan+UBSan, -O1, with the libFuzzer harnesses
#   tsan     build-tsan/   clang, TSan, -O1
#   arm64    build-arm64/  GCC cross compiler for aarch64, tests under qemu-user
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:?configure.sh needs release, asan, tsan or arm64}"
case "$kind" in
  release) dir=build; args=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) dir=build-asan
        args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
              -DSPARSEFLASH_SANITIZE=address,undefined -DSPARSEFLASH_FUZZ=ON)
        export CC=clang CXX=clang++ ;;
  tsan) dir=build-tsan
        args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
              -DSPARSEFLASH_SANITIZE=thread)
        export CC=clang CXX=clang++ ;;
  arm64) dir=build-arm64
         args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake) ;;
  *) echo "configure.sh: unknown kind '$kind' (release, asan, tsan, arm64)" >&2; exit 2 ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "${args[@]}" >&2
fi
echo "$dir"
