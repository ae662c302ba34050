#include "tools/cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

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

}  // namespace sparseflash::cli
