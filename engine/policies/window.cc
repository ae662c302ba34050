// LLM in a Flash's sliding window: a key stays while it was accessed within the
// last `window_tokens` tokens before the current one (0: only within a token).
// When the budget is short, the least recently used key goes first.
#include <vector>

#include "common/index_list.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class SlidingWindow : public EvictionPolicy {
 public:
  SlidingWindow(uint32_t keys, int window)
      : order_(keys), last_token_(keys, 0), window_(window < 0 ? 0 : window) {}

  void OnHit(CacheKey key) override {
    order_.MoveToFront(key);
    last_token_[key] = token_;
  }
  void OnInsert(CacheKey key) override {
    order_.PushFront(key);
    last_token_[key] = token_;
  }
  CacheKey Evict() override {
    CacheKey victim = order_.back();
    order_.Unlink(victim);
    return victim;
  }
  // Preallocated rows (LLM in a Flash 3.3): when they are full, only neurons
  // the current token has not used may make room; otherwise the new one is
  // used once and not kept.
  bool HasVictim() const override { return !order_.empty() && last_token_[order_.back()] < token_; }
  void OnTokenEnd() override { ++token_; }
  bool Expire(CacheKey* key) override {
    if (order_.empty()) return false;
    CacheKey oldest = order_.back();
    if (token_ - last_token_[oldest] <= static_cast<uint32_t>(window_)) return false;
    order_.Unlink(oldest);
    *key = oldest;
    return true;
  }

 private:
  IndexList order_;  // most recent first
  std::vector<uint32_t> last_token_;
  uint32_t token_ = 0;
  int window_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeSlidingWindow(const PolicyOptions& o) {
  return std::make_unique<SlidingWindow>(o.key_space, o.window_tokens);
}

}  // namespace sparseflash
