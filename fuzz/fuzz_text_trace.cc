// libFuzzer harness: the text trace parser (A/P/G/T lines) for a dense and a
// mixture-of-experts shape, checking every token it emits is well formed.
#include <cstdlib>
#include <sstream>
#include <string>

#include "traces/text_format.h"

namespace {

void Check(const sparseflash::TokenActivations& t, const sparseflash::TraceModelShape& shape) {
  if (static_cast<int>(t.layers.size()) != shape.layers) std::abort();
  for (size_t l = 0; l < t.layers.size(); ++l) {
    if (t.layers[l].layer != l || static_cast<int>(t.layers[l].experts.size()) > shape.top_k) {
      std::abort();
    }
    for (const auto& set : t.layers[l].experts) {
      for (uint32_t id : set.active) {
        if (id >= static_cast<uint32_t>(shape.d_ffn)) std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const sparseflash::TraceModelShape shape =
      data[0] % 2 ? sparseflash::TraceModelShape{"moe", 3, 64, 8, 2, true}
                  : sparseflash::TraceModelShape{"dense", 4, 192, 1, 1, false};
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  (void)sparseflash::ParseTextTrace(in, "fuzz.txt", shape,
                                    [&](const sparseflash::TokenActivations& t) {
                                      Check(t, shape);
                                      return absl::OkStatus();
                                    });
  return 0;
}
