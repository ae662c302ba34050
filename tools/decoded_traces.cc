#include "tools/decoded_traces.h"

#include "absl/strings/str_cat.h"

namespace sparseflash::cli {
namespace {

// A job's trace as it names it: the generator of its model with a seed, or a
// file; and how many tokens.
std::string TraceKey(const SweepJob& job) {
  return job.trace_file.empty()
             ? absl::StrCat("generated:", job.model, "/", job.seed, "/", job.tokens)
             : absl::StrCat("file:", job.trace_file, "/", job.tokens);
}

}  // namespace

DecodedTraces::DecodedTraces(const std::vector<SweepJob>& jobs, int64_t max_bytes)
    : max_bytes_(max_bytes) {
  key_of_job_.reserve(jobs.size());
  for (const SweepJob& job : jobs) {
    key_of_job_.push_back(TraceKey(job));
    ++traces_[key_of_job_.back()].jobs_left;
  }
}

absl::StatusOr<std::shared_ptr<const TokenTrace>> DecodedTraces::Get(size_t job,
                                                                     const SimulationConfig& c) {
  std::lock_guard<std::mutex> lock(mu_);
  Trace& t = traces_.at(key_of_job_[job]);
  if (t.tokens != nullptr || t.too_large) return t.tokens;
  const int64_t room = max_bytes_ - kept_bytes_;
  absl::StatusOr<std::shared_ptr<const TokenTrace>> tokens =
      c.trace_path.empty() ? GenerateTokenTrace(c.model, c.seed, c.tokens, room)
                           : ReadTokenTrace(c.trace_path, c.tokens, room);
  if (absl::IsResourceExhausted(tokens.status())) {
    t.too_large = true;
    return nullptr;
  }
  if (!tokens.ok()) return tokens.status();
  t.tokens = *std::move(tokens);
  kept_bytes_ += t.tokens->bytes;
  return t.tokens;
}

void DecodedTraces::Release(size_t job) {
  std::lock_guard<std::mutex> lock(mu_);
  Trace& t = traces_.at(key_of_job_[job]);
  if (--t.jobs_left == 0 && t.tokens != nullptr) {
    kept_bytes_ -= t.tokens->bytes;
    t.tokens.reset();
  }
}

int64_t DecodedTraces::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_bytes_;
}

}  // namespace sparseflash::cli
