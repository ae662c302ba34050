// Activity of a simulated run for the Chrome trace-event format (chrome://tracing,
// ui.perfetto.dev): compute tasks as complete ("X") events on their worker's lane,
// where they never overlap; flash read batches, which overlap on the one device,
// as async begin/end ("b"/"e") pairs with an id each. Every event carries the
// token (step), the layer and its size in its args. Only steps in [first, last)
// are kept, so long runs stay viewable. Appending is cheap; export writes a file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/time.h"

namespace sparseflash {

// What an event did, for its args.
struct SpanInfo {
  const char* name = "";  // must outlive the timeline (a string literal)
  int32_t layer = -1;
  int64_t bytes = 0;
  int32_t requests = 0;  // reads in a flash batch; 0 for compute
  int8_t cached = -1;    // FFN compute on neurons in memory (1) or just read (0); -1 = n/a
};

class Timeline {
 public:
  // Keeps steps in [first, last); step -1 is the prompt (prefill).
  void SetSteps(int64_t first, int64_t last) {
    first_ = first;
    last_ = last;
  }
  // Where the current step comes from (the engine), read when an event ends.
  void SetStepSource(std::function<int64_t()> step) { step_ = std::move(step); }

  int Lane(const std::string& name);
  // A complete event on `lane` (no two on one lane overlap).
  void AddSpan(int lane, const SpanInfo& info, Nanos start, Nanos end);
  // An async event on `lane` (events may overlap; each gets its own id).
  void AddAsync(int lane, const SpanInfo& info, Nanos start, Nanos end);

  size_t size() const { return events_.size(); }
  // Writes {"traceEvents": [...]} to `path`, replacing it only when complete.
  absl::Status WriteChromeTrace(const std::string& path) const;

 private:
  struct Event {
    int lane;
    bool async;
    SpanInfo info;
    Nanos start, end;
    int64_t step;
  };
  bool Keep(int64_t* step) const;

  std::vector<std::string> lanes_;
  std::vector<Event> events_;
  std::function<int64_t()> step_;
  int64_t first_ = -1, last_ = INT64_MAX;
};

}  // namespace sparseflash
