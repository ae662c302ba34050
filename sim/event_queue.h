// The discrete-event kernel: events ordered by (time, sequence number) so equal
// timestamps run in scheduling order and identical inputs give identical runs.
// Time only moves forward. Optionally records an event log (time, label) for
// byte-for-byte determinism checks and Chrome-trace export. The heap orders
// small plain entries; each event's callback waits in a slot of its own,
// reused once it has run, so a push or pop moves no callback. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/time.h"

namespace sparseflash {

class EventQueue {
 public:
  using Callback = std::function<void()>;

  Nanos now() const { return now_; }
  // Schedules `fn` at `at` (not before now). `label` is for the log only. An
  // event past kTimeHorizon is dropped and marks the queue overflowed.
  void At(Nanos at, Callback fn, const char* label = "");
  void After(Nanos delay, Callback fn, const char* label = "") {
    At(now_ + delay, std::move(fn), label);
  }
  // Runs events until none are left or the next is after `until`.
  void RunUntil(Nanos until);
  void Run() { RunUntil({INT64_MAX}); }

  bool empty() const { return heap_.empty(); }
  // Time of the next event (now when there is none).
  Nanos next_time() const { return heap_.empty() ? now_ : heap_.front().at; }
  uint64_t events_run() const { return events_run_; }
  // Whether an event was asked for past kTimeHorizon (simulated time would
  // have overflowed): the run cannot finish and is an error.
  bool overflowed() const { return overflowed_; }
  void EnableLog() { log_enabled_ = true; }
  // "time label" lines, one per event run.
  const std::vector<std::string>& log() const { return log_; }

 private:
  // An event in the heap: its time, its order among equal times, its slot.
  struct Entry {
    Nanos at;
    uint64_t seq;
    uint32_t slot;
    bool operator>(const Entry& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  struct Pending {
    const char* label;
    Callback fn;
  };

  Nanos now_;
  uint64_t next_seq_ = 0;
  uint64_t events_run_ = 0;
  std::vector<Entry> heap_;       // a min-heap by (at, seq)
  std::vector<Pending> pending_;  // the callbacks, by slot
  std::vector<uint32_t> free_;    // slots whose events have run
  bool log_enabled_ = false;
  bool overflowed_ = false;
  std::vector<std::string> log_;
};

}  // namespace sparseflash
