#include "tools/cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sparseflash::cli {

int ReportError(const absl::Status& status) {
  std::fprintf(stderr, "sparseflash: %s\n", std::string(status.message()).c_str());
  return absl::IsInvalidArgument(status) || absl::IsNotFound(status) ? 2 : 1;
}

void Progress(const std::string& what, uint64_t done, uint64_t total) {
  static const bool tty = isatty(STDERR_FILENO);
  static auto last = std::chrono::steady_clock::now() - std::chrono::hours(1);
  auto now = std::chrono::steady_clock::now();
  const bool final = done == total;
  if (!final && now - last < (tty ? std::chrono::milliseconds(100) : std::chrono::seconds(5))) {
    return;
  }
  last = now;
  double pct = total ? 100.0 * done / total : 100.0;
  if (tty) {
    std::fprintf(stderr, "\r%s: %llu/%llu (%.0f%%)%s", what.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                 pct, final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s: %llu/%llu (%.0f%%)\n", what.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), pct);
  }
}

CLI::Validator InRange(double lo, double hi) {
  const std::string range = absl::StrFormat("[%g, %g]", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        if (!absl::SimpleAtod(text, &v) || !(v >= lo && v <= hi)) {
          return absl::StrFormat("value %s is not a number in %s", text, range);
        }
        return "";
      },
      absl::StrCat("in ", range));
}

std::string ShippedData(const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path here = fs::path("data") / relative;
  std::error_code ec;
  if (fs::exists(here, ec)) return here.string();
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path().parent_path() / "data" / relative;
    if (fs::exists(beside, ec)) return beside.string();
  }
  return here.string();
}

std::string FormatDuration(double s) {
  if (s < 60) return absl::StrFormat("%.0fs", s);
  if (s < 3600) {
    return absl::StrFormat("%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  }
  return absl::StrFormat("%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
}

ProgressBar::ProgressBar(std::string what)
    : what_(std::move(what)),
      tty_(isatty(STDERR_FILENO)),
      last_(std::chrono::steady_clock::now() - std::chrono::hours(1)) {}

void ProgressBar::operator()(int64_t done, int64_t total, double elapsed_s) {
  const auto now = std::chrono::steady_clock::now();
  const bool final = done == total;
  if (!final && now - last_ < (tty_ ? std::chrono::milliseconds(200) : std::chrono::seconds(5))) {
    return;
  }
  last_ = now;
  const double rate = elapsed_s > 0 ? done / elapsed_s : 0;
  const std::string left = rate > 0 ? FormatDuration((total - done) / rate) : "?";
  const double share = total ? static_cast<double>(done) / total : 1;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(share * kWidth);
    absl::FPrintF(stderr, "\r%s [%s%s] %d/%d  %.1f runs/s  %s left   %s", what_,
                  std::string(filled, '#'), std::string(kWidth - filled, '.'), done, total, rate,
                  left, final ? "\n" : "");
  } else {
    absl::FPrintF(stderr, "%s: %d/%d (%.0f%%), %.1f runs/s, %s left\n", what_, done, total,
                  100 * share, rate, left);
  }
}

}  // namespace sparseflash::cli
