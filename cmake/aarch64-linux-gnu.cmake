# Cross build for 64-bit Arm (phones run this ISA) with Debian 12's cross
# toolchain (crossbuild-essential-arm64) and multiarch :arm64 libraries; protoc
# stays the host's. Tests run under qemu-user (scripts/test-arm64.sh).
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Libraries and CMake packages of the target architecture only; programs (protoc) of the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# `-cpu max` lets qemu run every Arm extension it emulates (SVE, SVE2), so the
# kernel's tests cover those targets as well as NEON. The guest's loader and
# libraries are the multiarch :arm64 ones (`-L /`): with the cross toolchain's own
# copy (`-L /usr/aarch64-linux-gnu`) the first pthread_create hangs under qemu 7.2.
set(SF_QEMU_CPU "max" CACHE STRING "qemu-aarch64 -cpu for tests")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -cpu ${SF_QEMU_CPU} -L /)
