// A file that appears under its name only when Commit() succeeds. It is written
// as an anonymous file in the destination's folder (O_TMPFILE), or as a named
// "<path>.tmp.<pid>" where the file system has none, then linked into place,
// replacing what was there. A writer that fails, is destroyed or is killed
// leaves the earlier file untouched and (with O_TMPFILE) nothing behind. Every
// write, the flush, the sync and the close are checked; errors name the path.
// Not thread-safe.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sparseflash {

struct AtomicFileOptions {
  bool overwrite = true;  // false: Create() fails when `path` exists
  bool sync = true;       // fsync before the file is linked into place
};

class AtomicFile {
 public:
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path,
                                                           const AtomicFileOptions& options = {});
  ~AtomicFile();  // without Commit(), discards what was written
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // The stream to write to (for fseek and friends); Write() checks for callers.
  FILE* stream() { return file_; }
  absl::Status Write(absl::string_view bytes);
  // An error for a write made straight to stream() that failed.
  absl::Status WriteError(const std::string& what) const;
  // Flushes, syncs, closes and moves the file into place.
  absl::Status Commit();

  const std::string& path() const { return path_; }

 private:
  AtomicFile(std::string path, std::string tmp_path, FILE* file, bool sync);
  absl::Status Link();

  std::string path_;
  std::string tmp_path_;  // "" for an anonymous (O_TMPFILE) file
  FILE* file_;
  bool sync_;
  bool committed_ = false;
};

// Writes `contents` to `path` through an AtomicFile.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 const AtomicFileOptions& options = {});

}  // namespace sparseflash
