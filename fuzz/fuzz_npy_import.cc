// libFuzzer harness: .npy import (header, dtype, shape, rows) of one layer
// through a memory file, with and without a threshold; the trace goes to a
// memory-backed folder without fsync.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "traces/npy_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz.npy", 0);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  const std::string in = "/proc/self/fd/" + std::to_string(fd);
  const std::string out = "/dev/shm/sparseflash-fuzz-" + std::to_string(getpid()) + ".trace";
  const sparseflash::TraceModelShape shape{"toy", 1, 16, 1, 1, false};
  for (double threshold : {-1.0, 0.5}) {
    (void)sparseflash::ImportNpyMasks({in}, shape, {}, out,
                                      {.threshold = threshold, .writer = {.sync = false}});
  }
  unlink(out.c_str());
  close(fd);
  return 0;
}
