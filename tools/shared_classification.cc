#include "tools/shared_classification.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sparseflash::cli {

bool IsSchedulingOption(const std::string& key_value) {
  for (const char* key :
       {"threads=", "pipeline=", "cluster_neurons=", "io_depth=", "io_threads="}) {
    if (absl::StartsWith(key_value, key)) return true;
  }
  return false;
}

std::string ClassificationKey(const SweepJob& job) {
  std::vector<std::string> options;
  for (const std::string& o : job.options) {
    if (!IsSchedulingOption(o)) options.push_back(o);
  }
  std::sort(options.begin(), options.end());
  // Fields joined with a separator no name or number contains.
  return absl::StrJoin(
      {job.device, job.model, job.trace_file, job.strategy, job.policy, absl::StrCat(job.seed),
       job.profile, absl::StrCat(job.memory_bytes), absl::StrCat(job.memory_fraction),
       absl::StrCat(job.ffn_resident), absl::StrCat(job.prompt_tokens), absl::StrCat(job.tokens),
       absl::StrJoin(options, "\x1f")},
      "\x1e");
}

SharedClassifications::SharedClassifications(const std::vector<SweepJob>& jobs, int64_t max_bytes)
    : max_bytes_(max_bytes) {
  std::vector<std::string> keys;
  keys.reserve(jobs.size());
  for (const SweepJob& job : jobs) {
    keys.push_back(ClassificationKey(job));
    ++keys_[keys.back()].jobs_left;
  }
  key_of_job_.reserve(jobs.size());
  for (const std::string& k : keys) {
    auto it = keys_.find(k);
    key_of_job_.push_back(it->second.jobs_left > 1 ? &it->first : nullptr);
  }
  for (auto it = keys_.begin(); it != keys_.end();) {
    it = it->second.jobs_left > 1 ? std::next(it) : keys_.erase(it);
  }
}

int64_t SharedClassifications::replayed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replayed_;
}

SharedClassifications::Use::Use(SharedClassifications* shared, size_t job)
    : shared_(shared), key_(shared->key_of_job_[job]) {}

ClassificationSharing SharedClassifications::Use::Start() {
  if (key_ == nullptr) return {};
  std::lock_guard<std::mutex> lock(shared_->mu_);
  Key& k = shared_->keys_.at(*key_);
  if (k.tape != nullptr) {
    replayed_ = k.tape;
    replay_ = std::make_unique<TapeReplay>(replayed_.get());
    return {.replay = replay_.get()};
  }
  // Another job of the key is recording (this one runs beside it), the
  // strategy cannot share, or no later job of the key is left to replay.
  if (k.recording || k.unshareable || k.jobs_left < 2 ||
      shared_->kept_bytes_ >= shared_->max_bytes_) {
    return {};
  }
  k.recording = true;
  recording_ = std::make_shared<ClassificationTape>();
  return {.record = recording_.get()};
}

bool SharedClassifications::Use::Succeeded() {
  if (replay_ != nullptr) {
    if (!replay_->finished()) return false;
    std::lock_guard<std::mutex> lock(shared_->mu_);
    ++shared_->replayed_;  // counted once its result is the run's own
    return true;
  }
  if (recording_ == nullptr) return true;
  std::lock_guard<std::mutex> lock(shared_->mu_);
  Key& k = shared_->keys_.at(*key_);
  k.recording = false;
  if (recording_->empty()) {
    k.unshareable = true;
  } else if (k.tape == nullptr && k.jobs_left > 1) {
    recording_->ShrinkToFit();
    if (shared_->kept_bytes_ + recording_->bytes() > shared_->max_bytes_) return true;
    k.tape = std::move(recording_);
    shared_->kept_bytes_ += k.tape->bytes();
  }
  return true;
}

SharedClassifications::Use::~Use() {
  if (key_ == nullptr) return;
  std::lock_guard<std::mutex> lock(shared_->mu_);
  Key& k = shared_->keys_.at(*key_);
  k.recording = k.recording && recording_ == nullptr;  // a failed recording: another may record
  if (--k.jobs_left == 0 && k.tape != nullptr) {
    shared_->kept_bytes_ -= k.tape->bytes();
    k.tape.reset();
  }
}

}  // namespace sparseflash::cli
