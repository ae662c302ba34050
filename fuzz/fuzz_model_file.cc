// libFuzzer harness: model files (protobuf text format) through parsing,
// validation, byte accounting and the weight-file plan.
#include <string>

#include "engine/model_bytes.h"
#include "engine/weight_file.h"
#include "traces/model_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sparseflash::ModelSpec> m = sparseflash::ModelCatalog::Parse(text, "fuzz");
  if (!m.ok()) return 0;
  const sparseflash::ModelBytes b = sparseflash::ComputeModelBytes(*m);
  (void)b.resident_bytes(1024);
  (void)sparseflash::PlanWeightFile(*m, sparseflash::LayoutKind::kBundle);
  return 0;
}
