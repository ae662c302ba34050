#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/files.h"

namespace sparseflash {
namespace {

std::string FolderOf(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

absl::Status Errno(const std::string& path, const std::string& what, int err) {
  const std::string why = std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": ", what, " failed: ", why, "; nothing was replaced"));
  }
  return absl::UnavailableError(absl::StrCat(path, ": ", what, " failed: ", why));
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string tmp_path, FILE* file, bool sync)
    : path_(std::move(path)), tmp_path_(std::move(tmp_path)), file_(file), sync_(sync) {}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_ && !tmp_path_.empty()) ::unlink(tmp_path_.c_str());
}

absl::StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path,
                                                               const AtomicFileOptions& o) {
  if (IsDirectory(path)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a file"));
  }
  if (!o.overwrite && PathExists(path)) {
    return absl::AlreadyExistsError(absl::StrCat(path, ": exists; pass --force to replace it"));
  }
  const std::string folder = FolderOf(path);
  std::string tmp;
  int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    tmp = absl::StrCat(path, ".tmp.", ::getpid());
    fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  }
  if (fd < 0) return Errno(path, "creating the file", errno);
  FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    const int err = errno;
    ::close(fd);
    if (!tmp.empty()) ::unlink(tmp.c_str());
    return Errno(path, "opening a stream", err);
  }
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, tmp, file, o.sync));
}

absl::Status AtomicFile::WriteError(const std::string& what) const {
  return Errno(path_, what, errno);
}

absl::Status AtomicFile::Write(absl::string_view bytes) {
  if (file_ == nullptr) return absl::FailedPreconditionError(path_ + ": already committed");
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return WriteError("writing");
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (file_ == nullptr) return absl::FailedPreconditionError(path_ + ": already committed");
  if (std::fflush(file_) != 0 || std::ferror(file_)) return WriteError("writing");
  if (sync_ && ::fsync(::fileno(file_)) != 0) return WriteError("syncing");
  if (tmp_path_.empty()) {
    if (absl::Status s = Link(); !s.ok()) return s;
  }
  FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) return WriteError("closing");
  if (!tmp_path_.empty() && std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    return WriteError("moving the file into place");
  }
  committed_ = true;
  return absl::OkStatus();
}

// An anonymous file gets a name beside its destination, then replaces it.
absl::Status AtomicFile::Link() {
  const std::string proc = absl::StrCat("/proc/self/fd/", ::fileno(file_));
  const std::string named = absl::StrCat(path_, ".tmp.", ::getpid());
  ::unlink(named.c_str());
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, named.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    return WriteError("linking the file");
  }
  tmp_path_ = named;  // renamed into place by Commit(), removed on failure
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 const AtomicFileOptions& options) {
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path, options);
  if (!file.ok()) return file.status();
  if (absl::Status s = (*file)->Write(contents); !s.ok()) return s;
  return (*file)->Commit();
}

}  // namespace sparseflash
