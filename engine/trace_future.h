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

// A key's uses within kSpan tokens from `base` as a bit mask, so most
// next-use questions are a shift and a bit scan, without a load from the uses
// array (a run of up to kSpan tokens never reloads it).
struct alignas(32) UseWindow {  // aligned: one cache line per lookup
  static constexpr uint32_t kSpan = 128;
  uint64_t mask[kSpan / 64];  // bit i: a use at token base + i (bit 0 set unless none left)
  uint32_t base;              // the first use not yet passed when filled (UINT32_MAX: none)
  uint32_t next;              // index of the first use at or after base + kSpan
};
static_assert(sizeof(UseWindow) == 32);

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
  // Refills key `key`'s window `w` from its first use at or after token `t`,
  // searching from use index w.next; returns that use (UINT32_MAX: none).
  uint32_t Fill(UseWindow& w, CacheKey key, uint32_t t) const;
  // Every key's window from token 0: the same for every run on this future,
  // so made once, with it.
  const std::vector<UseWindow>& first_windows() const { return first_windows_; }

 private:
  std::vector<uint32_t> start_;  // per key, and one past the last
  std::vector<uint32_t> uses_;
  std::vector<UseWindow> first_windows_;  // per key
};

}  // namespace sparseflash
