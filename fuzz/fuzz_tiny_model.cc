// libFuzzer harness: the TinyStories model loader (header, shape checks and
// every tensor's bounds).
#include <string>

#include "engine/tiny/tiny_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)sparseflash::TinyModel::Parse(bytes, "fuzz.bin");
  return 0;
}
