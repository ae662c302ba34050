#include "engine/real/storage_warmup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace sparseflash {

absl::StatusOr<StorageWarmup> ReadFileOnce(const std::string& path,
                                           const std::function<void(int64_t)>& progress) {
  StorageWarmup w;
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0 && errno == EINVAL) {
    w.direct = false;
    return w;
  }
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat(path, ": cannot stat: ", std::strerror(err)));
  }
  const int64_t size = st.st_size;
  constexpr int64_t kRequest = int64_t{4} << 20;
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, kRequest) != 0) {
    ::close(fd);
    return absl::ResourceExhaustedError("cannot allocate a 4 MiB read buffer");
  }
  std::unique_ptr<void, decltype(&std::free)> buffer(raw, &std::free);
  constexpr int64_t kProgressEvery = int64_t{1} << 30;
  const auto t0 = std::chrono::steady_clock::now();
  int64_t next_progress = kProgressEvery;
  while (w.bytes < size) {
    const ssize_t n = ::pread(fd, buffer.get(), kRequest, w.bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return absl::DataLossError(
          absl::StrCat(path, ": read failed at byte ", w.bytes, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    w.bytes += n;
    if (progress && w.bytes >= next_progress) {
      progress(w.bytes);
      next_progress += kProgressEvery;
    }
    if (w.bytes % 4096 != 0) break;  // the file's end: O_DIRECT reads go on from whole blocks
  }
  w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::close(fd);
  return w;
}

}  // namespace sparseflash
