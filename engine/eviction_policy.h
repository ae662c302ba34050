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

// The future of the access stream, for the Belady oracle: the token at which
// `key` is next accessed after the current one (UINT32_MAX if never).
class AccessOracle {
 public:
  virtual ~AccessOracle() = default;
  virtual uint32_t NextUse(CacheKey key) const = 0;
  // Hints that NextUse(key) is asked soon.
  virtual void Prefetch(CacheKey key) const {}
};

struct PolicyOptions {
  uint32_t key_space = 0;          // number of distinct keys
  int64_t capacity_entries = 0;    // expected entries at a full cache
  int64_t capacity_bytes = 0;      // the cache's bytes (S3-FIFO queue sizes); 0 = capacity_entries
  int64_t entry_bytes = 1;         // typical entry size (S3-FIFO queue sizes)
  double small_queue_share = 0.1;  // S3-FIFO small FIFO share of the bytes
  double ghost_queue_share = 0.9;  // S3-FIFO ghost FIFO size as a share of the bytes
  int move_to_main_threshold = 2;  // S3-FIFO hits in the small FIFO that promote a key
  int window_tokens = 4;           // sliding window: keys unused for this many tokens leave
  // Per key, how much it is worth keeping (e.g. the offline profile's frequency);
  // the window keeps the heaviest keys beyond its tokens. Empty = all equal.
  std::vector<float> key_weight;
  const AccessOracle* oracle = nullptr;  // required by "belady"
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // A resident key was accessed.
  virtual void OnHit(CacheKey key) = 0;
  // Hints that `key` is accessed soon (hit or inserted): a policy may load its state.
  virtual void Prefetch(CacheKey key) const {}
  // Whether Prefetch loads anything worth the caller's time to ask (a policy
  // whose per-key state is large and read at random, e.g. Belady's).
  virtual bool UsesHints() const { return false; }
  // A key was admitted and is now resident.
  virtual void OnInsert(CacheKey key) = 0;
  // Chooses a resident key to evict and forgets it. The cache is not empty.
  virtual CacheKey Evict() = 0;
  // False when no resident key may leave now (the sliding window keeps what the
  // current token uses); the missed key is then not cached.
  virtual bool HasVictim() const { return true; }
  // Whether HasVictim() can ever be false; constant for a policy, so a cache of
  // a policy that always has one skips asking.
  virtual bool may_withhold_victims() const { return false; }
  // The engine finished a token (window policies age their contents here).
  virtual void OnTokenEnd() {}
  // After OnTokenEnd: a key that must leave now (forgotten by the policy), if any.
  virtual bool Expire(CacheKey* key) { return false; }
  // False for static policies: a miss is served but never cached. Constant for a policy.
  virtual bool admits_misses() const { return true; }
};

// Creates the policy registered under `name` (see EvictionPolicyNames()); an
// unknown name gives an error listing the known ones.
absl::StatusOr<std::unique_ptr<EvictionPolicy>> MakeEvictionPolicy(const std::string& name,
                                                                   const PolicyOptions& options);
std::vector<std::string> EvictionPolicyNames();

}  // namespace sparseflash
