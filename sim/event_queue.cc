#include "sim/event_queue.h"

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace sparseflash {

void EventQueue::At(Nanos at, Callback fn, const char* label) {
  SF_CHECK(at >= now_);  // events cannot be scheduled in the past
  if (at < now_) at = now_;
  heap_.push({at, next_seq_++, label, std::move(fn)});
}

void EventQueue::RunUntil(Nanos until) {
  while (!heap_.empty() && heap_.top().at <= until) {
    Event e = std::move(const_cast<Event&>(heap_.top()));
    heap_.pop();
    now_ = e.at;
    ++events_run_;
    if (log_enabled_) log_.push_back(absl::StrCat(now_.ns, " ", e.label));
    e.fn();
  }
}

}  // namespace sparseflash
