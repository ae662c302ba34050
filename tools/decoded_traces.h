// A sweep's traces held decoded in memory and shared by its runs: a generated
// trace (model, seed, tokens) or a trace file (path, tokens) made once, since
// generating or decoding costs more than simulating. A trace is dropped after
// the last job that names it, and one that would take the decoded traces past
// a byte budget is not kept: its runs read it a few tokens at a time, as a
// single run does, with the same results. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/token_source.h"
#include "sim/simulator.h"
#include "tools/sweep_grid.h"

namespace sparseflash::cli {

class DecodedTraces {
 public:
  static constexpr int64_t kDefaultMaxBytes = int64_t{2} << 30;

  explicit DecodedTraces(const std::vector<SweepJob>& jobs, int64_t max_bytes = kDefaultMaxBytes);

  // The tokens of job `job` (resolved as `config`), made on first use; null
  // when they do not fit in the budget (the run then reads them itself).
  absl::StatusOr<std::shared_ptr<const TokenTrace>> Get(size_t job, const SimulationConfig& config);
  // Job `job` is done: its trace is dropped if no later job names it.
  void Release(size_t job);

  int64_t kept_bytes() const;

 private:
  struct Trace {
    int64_t jobs_left = 0;
    std::shared_ptr<const TokenTrace> tokens;
    bool too_large = false;  // over the budget left when first made: not tried again
  };

  const int64_t max_bytes_;
  std::vector<std::string> key_of_job_;
  mutable std::mutex mu_;
  // Guarded by mu_ (held while a trace is made: the runs that need it wait).
  std::map<std::string, Trace> traces_;
  int64_t kept_bytes_ = 0;
};

}  // namespace sparseflash::cli
