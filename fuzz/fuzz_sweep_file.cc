// libFuzzer harness: sweep files (protobuf text format) through parsing, name
// and range checks and grid expansion.
#include <string>

#include "tools/sweep_grid.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sparseflash::cli::SweepPlan> plan =
      sparseflash::cli::ParseSweep(text, "fuzz.textproto", "/nonexistent");
  if (plan.ok()) {
    for (const auto& job : plan->jobs) (void)job.Label();
  }
  return 0;
}
