// The future accesses of a run, for the Belady oracle: for every neuron key the
// tokens at which it is accessed, ascending, in one array (keys' runs back to
// back). Immutable, so the runs of a sweep on one trace share it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/eviction_policy.h"
#include "engine/neuron_key.h"
#include "traces/activation.h"

namespace sparseflash {

class TokenSource;

// Which neuron set of a token counts as an access.
enum class AccessSet { kActive, kPredicted };

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

class TraceFuture {
 public:
  // The accesses of every token `source` yields.
  static absl::StatusOr<std::shared_ptr<const TraceFuture>> Collect(TokenSource& source,
                                                                    const NeuronIndexer& indexer,
                                                                    AccessSet set);
  uint32_t keys() const { return static_cast<uint32_t>(start_.size() - 1); }
  // Key k's uses are use(begin(k)) .. use(end(k) - 1).
  uint32_t begin(CacheKey k) const { return start_[k]; }
  uint32_t end(CacheKey k) const { return start_[k + 1]; }
  uint32_t use(uint32_t i) const { return uses_[i]; }  // a token number

 private:
  std::vector<uint32_t> start_;  // per key, and one past the last
  std::vector<uint32_t> uses_;
};

}  // namespace sparseflash
