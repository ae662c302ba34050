// libFuzzer harness: the oracleGeneral reader behind `trace cachesim` on
// arbitrary bytes, and every eviction policy over what it accepts, at a cache
// of a few objects and of half the working set.
#include <cstdio>
#include <cstdlib>

#include "engine/request_stream.h"
#include "engine/stream_cachesim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FILE* f = fmemopen(const_cast<uint8_t*>(data), size, "rb");
  if (f == nullptr) return 0;
  absl::StatusOr<sparseflash::RequestStream> stream =
      sparseflash::ReadOracleGeneral(f, static_cast<int64_t>(size), "fuzz.oracleGeneral");
  std::fclose(f);
  if (!stream.ok()) return 0;
  const int64_t working_set = sparseflash::WorkingSetBytes(*stream);
  for (const char* policy : {"lru", "fifo", "lfu", "sieve", "s3fifo", "belady"}) {
    for (int64_t capacity : {int64_t{3} * stream->object_bytes, working_set / 2}) {
      absl::StatusOr<sparseflash::StreamCacheResult> r =
          sparseflash::RunPolicyOnStream(*stream, policy, capacity);
      // Every request is a hit or a miss, and a cache can miss at most once per request.
      if (r.ok() && (r->requests != stream->requests() || r->misses > r->requests)) std::abort();
    }
  }
  return 0;
}
