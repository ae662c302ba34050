#include "sim/event_queue.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace sparseflash {

void EventQueue::At(Nanos at, Callback fn, const char* label) {
  SF_CHECK(at >= now_);  // events cannot be scheduled in the past
  if (at > kTimeHorizon) {
    overflowed_ = true;
    return;
  }
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    pending_[slot] = {label, std::move(fn)};
  } else {
    slot = static_cast<uint32_t>(pending_.size());
    pending_.push_back({label, std::move(fn)});
  }
  heap_.push_back({at, next_seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void EventQueue::RunUntil(Nanos until) {
  while (!heap_.empty() && heap_.front().at <= until) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Entry e = heap_.back();
    heap_.pop_back();
    // Moved out before it runs: the callback may schedule events that grow pending_.
    Callback fn = std::move(pending_[e.slot].fn);
    const char* label = pending_[e.slot].label;
    free_.push_back(e.slot);
    now_ = e.at;
    ++events_run_;
    if (log_enabled_) log_.push_back(absl::StrCat(now_.ns, " ", label));
    fn();
  }
}

}  // namespace sparseflash
