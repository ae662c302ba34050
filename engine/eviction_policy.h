// The eviction-policy plug-in point of the neuron cache (as libCacheSim's
// find/insert/evict). A policy tracks the keys the cache holds and chooses
// victims; the cache owns sizes, the byte budget and admission. One policy per
// cache; not thread-safe (the engine runs on one thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseflash {

// A cached unit: one neuron bundle (or one hot cluster), as a dense index in
// [0, key_space) so policies can keep per-key state in arrays.
using CacheKey = uint32_t;

struct PolicyOptions {
  uint32_t key_space = 0;        // number of distinct keys
  int64_t capacity_entries = 0;  // expected entries at a full cache (S3-FIFO queue sizes)
  double small_queue_share = 0.1;  // S3-FIFO small FIFO share of the entries
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // A resident key was accessed.
  virtual void OnHit(CacheKey key) = 0;
  // A key was admitted and is now resident.
  virtual void OnInsert(CacheKey key) = 0;
  // Chooses a resident key to evict and forgets it. The cache is not empty.
  virtual CacheKey Evict() = 0;
  // The engine finished a token (window policies age their contents here).
  virtual void OnTokenEnd() {}
};

// Creates the policy registered under `name` ("lru", "fifo", "lfu", "s3fifo",
// "sieve"); an unknown name gives an error listing the known ones.
absl::StatusOr<std::unique_ptr<EvictionPolicy>> MakeEvictionPolicy(const std::string& name,
                                                                   const PolicyOptions& options);
std::vector<std::string> EvictionPolicyNames();

}  // namespace sparseflash
