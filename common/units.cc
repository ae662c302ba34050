#include "common/units.h"

#include <cctype>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace sparseflash {
namespace {

struct Suffix {
  const char* text;
  double factor;
};

constexpr Suffix kSuffixes[] = {
    {"kib", kKiB}, {"mib", kMiB}, {"gib", kGiB}, {"tib", 1024.0 * kGiB},
    {"kb", kKB},   {"mb", kMB},   {"gb", kGB},   {"tb", 1000.0 * kGB},
    {"k", kKiB},   {"m", kMiB},   {"g", kGiB},   {"b", 1},
};

}  // namespace

absl::StatusOr<int64_t> ParseByteSize(std::string_view text) {
  std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(std::string(text)));
  double factor = 1;
  for (const Suffix& s : kSuffixes) {
    std::string_view suffix(s.text);
    if (lower.size() > suffix.size() && lower.ends_with(suffix)) {
      factor = s.factor;
      lower.resize(lower.size() - suffix.size());
      break;
    }
  }
  double value = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(lower), &value) || value < 0 ||
      !std::isfinite(value)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot read size '%s': expected a number with an optional unit "
        "(B, KB, MB, GB, KiB, MiB, GiB), e.g. 7GiB",
        text));
  }
  return static_cast<int64_t>(std::llround(value * factor));
}

std::string FormatBytes(int64_t bytes) {
  double b = static_cast<double>(bytes);
  if (bytes >= kGB) return absl::StrFormat("%.2f GB", b / kGB);
  if (bytes >= kMB) return absl::StrFormat("%.1f MB", b / kMB);
  if (bytes >= kKB) return absl::StrFormat("%.1f KB", b / kKB);
  return absl::StrFormat("%d B", bytes);
}

}  // namespace sparseflash
