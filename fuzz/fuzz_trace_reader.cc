// libFuzzer harness: the binary trace reader (header, frames, records) on
// arbitrary bytes, and the statistics of what it accepts for small shapes.
#include <cstdio>

#include "traces/trace_reader.h"
#include "traces/trace_stats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FILE* f = fmemopen(const_cast<uint8_t*>(data), size, "rb");
  if (f == nullptr) return 0;
  auto reader = sparseflash::TraceReader::FromStream(f, "fuzz.trace");
  if (!reader.ok()) return 0;
  const sparseflash::TraceModelShape& m = (*reader)->header().model;
  const bool small = int64_t{m.layers} * m.experts * m.d_ffn <= (1 << 16);
  std::unique_ptr<sparseflash::TraceStatsAccumulator> stats;
  if (small) stats = std::make_unique<sparseflash::TraceStatsAccumulator>((*reader)->header());
  sparseflash::TokenActivations token;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(&token);
    if (!more.ok() || !*more) break;
    if (stats) stats->Add(token);
  }
  if (stats) stats->Finish();
  return 0;
}
