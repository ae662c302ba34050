// LLM in a Flash's sliding window with selective persistence: a key accessed
// within the last `window_tokens` tokens before the current one is kept; keys
// that left the window stay while there is room ("selective persistence": what
// DRAM allows beyond the window) and leave in the order of the smallest weight
// (the offline profile's frequency when given, so the most used neurons
// persist), oldest first among equals. When even the window does not fit, the
// least recently used key of it goes, but never one the current token used.
#include <vector>

#include "engine/policies/access_log.h"
#include "engine/policies/policies.h"
#include "engine/policies/weight_queue.h"

namespace sparseflash {
namespace {

class SlidingWindow : public EvictionPolicy {
 public:
  SlidingWindow(uint32_t keys, int window, std::vector<float> weight)
      : order_(keys),
        last_token_(keys, 0),
        archive_(keys, weight),
        window_(window < 0 ? 0 : window) {}

  void OnHit(CacheKey key) override {
    if (archive_.contains(key)) {
      archive_.Remove(key);
      order_.Add(key);
    } else {
      order_.Append(key);
    }
    last_token_[key] = token_;
  }
  void Prefetch(CacheKey key) const override {
    order_.Prefetch(key);
    archive_.Prefetch(key);
    __builtin_prefetch(&last_token_[key], 1);
  }
  bool UsesHints() const override { return true; }
  void OnInsert(CacheKey key) override {
    order_.Add(key);
    last_token_[key] = token_;
  }
  CacheKey Evict() override {
    if (!archive_.empty()) return archive_.Pop();
    return order_.PopFront();
  }
  // Preallocated rows (LLM in a Flash 3.3): a key the current token used never
  // makes room; the new one is then used once and not kept.
  bool HasVictim() const override {
    return !archive_.empty() || (!order_.empty() && last_token_[order_.Front()] < token_);
  }
  bool may_withhold_victims() const override { return true; }
  // Keys leaving the window move to the archive; they stay until room is needed.
  void OnTokenEnd() override {
    ++token_;
    while (!order_.empty()) {
      // The keys a few entries on are about to be tested and pushed: ask for their state.
      if (const CacheKey ahead = order_.Peek(8); ahead != AccessLog::kNoKey) {
        __builtin_prefetch(&last_token_[ahead]);
        archive_.Prefetch(ahead);
      }
      if (token_ - last_token_[order_.Front()] <= uint32_t(window_)) break;
      archive_.Push(order_.PopFront());
    }
  }

 private:
  AccessLog order_;  // keys in the window, least recent first
  std::vector<uint32_t> last_token_;
  WeightQueue archive_;  // keys that left the window, lightest first
  uint32_t token_ = 0;
  int window_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeSlidingWindow(const PolicyOptions& o) {
  return std::make_unique<SlidingWindow>(o.key_space, o.window_tokens, o.key_weight);
}

}  // namespace sparseflash
