// Spans of simulated activity (a read on the flash device, a task on a worker)
// for the Chrome trace viewer's JSON format ("X" complete events, one track per
// lane). Appending is cheap; export writes a file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/time.h"

namespace sparseflash {

class Timeline {
 public:
  // `lane` and `name` must outlive the timeline (string literals or lane names).
  void Add(int lane, const char* name, Nanos start, Nanos end, int64_t step);
  int Lane(const std::string& name);

  size_t size() const { return spans_.size(); }
  // Writes {"traceEvents": [...]} to `path` (via a temporary file).
  absl::Status WriteChromeTrace(const std::string& path) const;

 private:
  struct Span {
    int lane;
    const char* name;
    Nanos start, end;
    int64_t step;
  };
  std::vector<std::string> lanes_;
  std::vector<Span> spans_;
};

}  // namespace sparseflash
