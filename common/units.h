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

// Parses "7GiB", "6.5GB", "512MiB", "4096", "4k" (k/m/g = binary). Fails on anything else.
absl::StatusOr<int64_t> ParseByteSize(std::string_view text);

// "6.60 GB (6.15 GiB)"-style rendering with decimal and binary units.
std::string FormatBytes(int64_t bytes);

// Rounds `bytes` up to a multiple of `alignment` (alignment > 0).
constexpr int64_t AlignUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace sparseflash
