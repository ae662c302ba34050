#include "common/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sparseflash {

bool PathExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, absl::string_view what,
                                          int64_t max_bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open ", what, ": ", std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory; expected a ", what, " file"));
  }
  if (S_ISREG(st.st_mode) && st.st_size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", st.st_size, " bytes, over the ",
                                                   max_bytes, "-byte limit for a ", what));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open ", what, ": ", std::strerror(errno)));
  }
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (static_cast<int64_t>(text.size()) > max_bytes) break;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat(path, ": read error in ", what));
  if (static_cast<int64_t>(text.size()) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": over the ", max_bytes, "-byte limit for a ", what));
  }
  return text;
}

bool NamesAFile(const std::string& name_or_path) {
  return name_or_path.ends_with(".textproto") || PathExists(name_or_path);
}

void RemoveQuietly(const std::string& path) { ::unlink(path.c_str()); }

}  // namespace sparseflash
