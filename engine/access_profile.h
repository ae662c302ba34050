// What the engine may know about a model's activations before a run: an offline
// activation-frequency profile (PowerInfer's profiling pass; ranks neurons hot to
// cold for the hot region and for warming the cache), and, for the Belady oracle
// only, the future accesses of the run itself.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/eviction_policy.h"
#include "engine/neuron_key.h"
#include "engine/token_source.h"

namespace sparseflash {

// Which neuron set of a token counts as an access.
enum class AccessSet { kActive, kPredicted };

class ActivationProfile {
 public:
  // Counts each key's accesses over all tokens of `source`.
  static absl::StatusOr<ActivationProfile> Collect(TokenSource& source,
                                                   const NeuronIndexer& indexer, AccessSet set);
  // From per-key activation probabilities (a generator's expected activity),
  // quantized to 1/65535.
  static ActivationProfile FromProbabilities(const std::vector<float>& probability);
  uint64_t count(CacheKey key) const { return counts_[key]; }
  uint64_t tokens() const { return tokens_; }
  // All keys, most frequently accessed first (ties: lower key first).
  std::vector<CacheKey> Ranked() const;

 private:
  std::vector<uint32_t> counts_;
  uint64_t tokens_ = 0;
};

// The future of the run: for each key the tokens at which it is accessed, in
// one array (keys' runs back to back) so a lookup touches two cache lines.
class TraceOracle : public AccessOracle {
 public:
  static absl::StatusOr<std::unique_ptr<TraceOracle>> Collect(TokenSource& source,
                                                              const NeuronIndexer& indexer,
                                                              AccessSet set);
  // The run is at token `t` now.
  void SetToken(uint32_t t) { token_ = t; }
  uint32_t NextUse(CacheKey key) const override;
  void Prefetch(CacheKey key) const override { __builtin_prefetch(&span_[key], 1); }

 private:
  struct Span {
    uint32_t next;  // index in uses_ of the first use not yet passed
    uint32_t end;   // one past the key's last use
  };
  std::vector<uint32_t> uses_;      // tokens of each key's uses, key by key, ascending
  mutable std::vector<Span> span_;  // per key
  uint32_t token_ = 0;
};

// Calls fn(key) for every access of one token.
template <typename Fn>
void ForEachAccess(const TokenActivations& token, const NeuronIndexer& indexer, AccessSet set,
                   Fn&& fn) {
  for (const LayerActivations& layer : token.layers) {
    for (const NeuronSet& s : layer.experts) {
      const std::vector<uint32_t>& ids = set == AccessSet::kPredicted ? s.predicted : s.active;
      for (uint32_t id : ids) fn(indexer.Key(layer.layer, s.expert, id));
    }
  }
}

}  // namespace sparseflash
