#include "engine/real/mapped_weights.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sparseflash {

absl::StatusOr<std::unique_ptr<MappedWeights>> MappedWeights::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a non-empty regular file"));
  }
  // As llama.cpp does: the kernel doubles the file's read-ahead window.
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": cannot map ", st.st_size, " bytes: ", std::strerror(err)));
  }
  return std::unique_ptr<MappedWeights>(
      new MappedWeights(static_cast<const uint8_t*>(p), static_cast<int64_t>(st.st_size)));
}

MappedWeights::~MappedWeights() {
  ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

void PageFaultFlash::Submit(const FlashRead& read) {
  CompletionSink* sink = sink_;
  const uint64_t tag = read.tag;
  queue_->Post([sink, tag] { sink->OnReadDone(tag, true); });
}

}  // namespace sparseflash
