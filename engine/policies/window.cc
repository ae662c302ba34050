// LLM in a Flash's sliding window with selective persistence: a key accessed
// within the last `window_tokens` tokens before the current one is kept; keys
// that left the window stay while there is room ("selective persistence": what
// DRAM allows beyond the window) and leave in the order of the smallest weight
// (the offline profile's frequency when given, so the most used neurons
// persist), oldest first among equals. When even the window does not fit, the
// least recently used key of it goes, but never one the current token used.
#include <queue>
#include <tuple>
#include <vector>

#include "common/index_list.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class SlidingWindow : public EvictionPolicy {
 public:
  SlidingWindow(uint32_t keys, int window, std::vector<float> weight)
      : order_(keys),
        last_token_(keys, 0),
        archived_(keys, 0),
        stamp_(keys, 0),
        weight_(std::move(weight)),
        window_(window < 0 ? 0 : window) {}

  void OnHit(CacheKey key) override {
    if (archived_[key]) {
      archived_[key] = 0;  // its archive entry is now stale
      order_.PushFront(key);
    } else {
      order_.MoveToFront(key);
    }
    last_token_[key] = token_;
  }
  void OnInsert(CacheKey key) override {
    order_.PushFront(key);
    last_token_[key] = token_;
  }
  CacheKey Evict() override {
    if (CacheKey key; PopArchive(&key)) return key;
    CacheKey victim = order_.back();
    order_.Unlink(victim);
    return victim;
  }
  // Preallocated rows (LLM in a Flash 3.3): a key the current token used never
  // makes room; the new one is then used once and not kept.
  bool HasVictim() const override {
    return live_archived_ > 0 || (!order_.empty() && last_token_[order_.back()] < token_);
  }
  // Keys leaving the window move to the archive; they stay until room is needed.
  void OnTokenEnd() override {
    ++token_;
    while (!order_.empty() && token_ - last_token_[order_.back()] > uint32_t(window_)) {
      const CacheKey key = order_.back();
      order_.Unlink(key);
      archived_[key] = 1;
      ++live_archived_;
      archive_.push({Weight(key), ++seq_, key});
      stamp_[key] = seq_;
    }
  }

 private:
  float Weight(CacheKey key) const { return key < weight_.size() ? weight_[key] : 0.0f; }

  // The archived key of smallest weight (oldest first), skipping stale entries.
  bool PopArchive(CacheKey* key) {
    while (!archive_.empty()) {
      const auto [w, seq, k] = archive_.top();
      archive_.pop();
      if (!archived_[k] || stamp_[k] != seq) continue;
      archived_[k] = 0;
      --live_archived_;
      *key = k;
      return true;
    }
    return false;
  }

  using Entry = std::tuple<float, uint64_t, CacheKey>;  // weight, age, key
  IndexList order_;  // keys in the window, most recent first
  std::vector<uint32_t> last_token_;
  std::vector<uint8_t> archived_;
  std::vector<uint64_t> stamp_;  // the live archive entry of each key
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> archive_;
  std::vector<float> weight_;
  uint64_t seq_ = 0;
  int64_t live_archived_ = 0;
  uint32_t token_ = 0;
  int window_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeSlidingWindow(const PolicyOptions& o) {
  return std::make_unique<SlidingWindow>(o.key_space, o.window_tokens, o.key_weight);
}

}  // namespace sparseflash
