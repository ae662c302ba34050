// Small file-system helpers that never throw: existence tests, whole-file reads
// that refuse directories and oversized inputs, quiet removal. Errors name the
// path and what was expected. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace sparseflash {

// True when `path` names an existing entry (a file, a folder, a dangling link).
bool PathExists(const std::string& path);
bool IsDirectory(const std::string& path);

// The whole contents of a regular file of at most `max_bytes`. `what` says what
// the file should be ("device profile", "sweep file") in the error.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, absl::string_view what,
                                          int64_t max_bytes = int64_t{64} << 20);

// Whether a catalog argument means a file: it ends in ".textproto" or names an
// existing entry (a catalog name otherwise).
bool NamesAFile(const std::string& name_or_path);

// Removes `path` if it exists; errors are ignored (for clean-up paths).
void RemoveQuietly(const std::string& path);

}  // namespace sparseflash
