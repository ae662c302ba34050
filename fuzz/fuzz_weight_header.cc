// libFuzzer harness: the weight-file header (its first 4 KiB).
#include "engine/weight_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)sparseflash::ParseWeightFileHeader(
      absl::string_view(reinterpret_cast<const char*>(data), size), "fuzz.sfw");
  return 0;
}
