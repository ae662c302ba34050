// Small value types shared by every module: byte counts and human-readable sizes.
// Time lives in common/time.h. Thread-compatible value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace sparseflash {

inline constexpr int64_t kKiB = 1024;
inline constexpr int64_t kMiB = 1024 * kKiB;
inline constexpr int64_t kGiB = 1024 * kMiB;
inline constexpr int64_t kKB = 1000;
inline constexpr int64_t kMB = 1000 * kKB;
inline constexpr int64_t kGB = 1000 * kMB;

// The largest size a budget or file may have: 1 PiB.
inline constexpr int64_t kMaxByteSize = int64_t{1} << 50;

// Parses "7GiB", "6.5GB", "512MiB", "4096" (bytes). Units are unambiguous: KB, MB,
// GB, TB are powers of 1000, KiB .. TiB powers of 1024; "10G" or "4k" is an error
// that says so, as is anything negative, not finite or over kMaxByteSize.
absl::StatusOr<int64_t> ParseByteSize(std::string_view text);

// "6.60 GB (6.15 GiB)"-style rendering with decimal and binary units.
std::string FormatBytes(int64_t bytes);

// Rounds `bytes` up to a multiple of `alignment` (alignment > 0).
constexpr int64_t AlignUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace sparseflash
