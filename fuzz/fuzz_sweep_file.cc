// libFuzzer harness: sweep files (protobuf text format) through parsing, name
// and range checks and grid expansion.
#include <string>

#include "tools/sweep_grid.h"

// Grids of up to 100,000 configurations are valid and take seconds to expand;
// the refusal past a limit is the same code at any limit, so a small one keeps
// each input fast.
constexpr int64_t kMaxConfigurations = 1000;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sparseflash::cli::SweepPlan> plan =
      sparseflash::cli::ParseSweep(text, "fuzz.textproto", "/nonexistent", kMaxConfigurations);
  if (plan.ok()) {
    for (const auto& job : plan->jobs) (void)job.Label();
  }
  return 0;
}
