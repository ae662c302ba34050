// Runs one eviction policy over a request stream held in memory, as
// libCacheSim's cachesim does over a trace: every request looks its key up and
// a miss is admitted (evicting as needed); the sliding-window policies age at
// each change of the request's time (a token). Only the request loop is timed,
// so the speed can be set beside another simulator's on the same stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/request_stream.h"

namespace sparseflash {

struct StreamCacheResult {
  std::string policy;
  int64_t capacity_bytes = 0;
  uint64_t requests = 0;
  uint64_t misses = 0;
  double loop_seconds = 0;  // wall time of the request loop alone

  double miss_ratio() const { return requests ? double(misses) / double(requests) : 0; }
};

// The bytes of every distinct object of the stream (its working set).
int64_t WorkingSetBytes(const RequestStream& stream);

// `policy` is a registered eviction policy name (belady reads the stream's next uses).
absl::StatusOr<StreamCacheResult> RunPolicyOnStream(const RequestStream& stream,
                                                    const std::string& policy,
                                                    int64_t capacity_bytes);

// LRU's misses at every cache size in one pass (Mattson's stack distances,
// counted with a Fenwick tree over request positions): element e of the result
// is the misses of an LRU cache holding e entries, for e in [0, key_space]
// (equal-sized objects: a cache of B bytes holds B / object_bytes entries).
std::vector<uint64_t> LruMissesByEntries(const RequestStream& stream);

}  // namespace sparseflash
