#include "common/units.h"

#include <cctype>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace sparseflash {
namespace {

struct Suffix {
  const char* text;
  double factor;
};

// Longest first, so "gib" is not read as "b".
constexpr Suffix kSuffixes[] = {
    {"kib", kKiB}, {"mib", kMiB}, {"gib", kGiB}, {"tib", 1024.0 * kGiB},
    {"kb", kKB},   {"mb", kMB},   {"gb", kGB},   {"tb", 1000.0 * kGB},
    {"b", 1},
};

constexpr char kUnits[] = "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (of 1024)";

}  // namespace

absl::StatusOr<int64_t> ParseByteSize(std::string_view text) {
  const std::string lowered = absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  absl::string_view lower = lowered;  // the number and any unit left once a suffix is cut
  double factor = 1;
  for (const Suffix& s : kSuffixes) {
    const absl::string_view suffix(s.text);
    if (lower.size() > suffix.size() && absl::EndsWith(lower, suffix)) {
      factor = s.factor;
      lower.remove_suffix(suffix.size());
      break;
    }
  }
  double value = 0;
  size_t unit = lower.size();
  while (unit > 0 && std::isalpha(static_cast<unsigned char>(lower[unit - 1]))) --unit;
  if (unit < lower.size() && unit > 0 &&
      absl::SimpleAtod(absl::StripAsciiWhitespace(lower.substr(0, unit)), &value)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "size '%s': unit '%s' is ambiguous or unknown; write one of %s, e.g. 10GB or 10GiB", text,
        lower.substr(unit), kUnits));
  }
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(lower), &value) || !std::isfinite(value) ||
      value < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot read size '%s': expected a non-negative number with an optional unit (%s), "
        "e.g. 7GiB",
        text, kUnits));
  }
  const double bytes = value * factor;
  if (bytes > static_cast<double>(kMaxByteSize)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("size '%s' is too large: at most %s", text, FormatBytes(kMaxByteSize)));
  }
  return static_cast<int64_t>(std::llround(bytes));
}

std::string FormatBytes(int64_t bytes) {
  double b = static_cast<double>(bytes);
  if (bytes >= kGB) return absl::StrFormat("%.2f GB", b / kGB);
  if (bytes >= kMB) return absl::StrFormat("%.1f MB", b / kMB);
  if (bytes >= kKB) return absl::StrFormat("%.1f KB", b / kKB);
  return absl::StrFormat("%d B", bytes);
}

}  // namespace sparseflash
