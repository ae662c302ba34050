// Which of a sweep's runs share their planner's classification
// (engine/classification_tape.h). Jobs that differ only in scheduling (their
// compute threads and the options pipeline, cluster_neurons, io_depth and
// io_threads) have
// one key; the first of a key's jobs to run records a tape, and the key's later
// jobs replay it while another of them is still to come. A recorded tape is
// kept only while all kept tapes stay under a byte cap: a run without a tape
// classifies for itself, so the cap bounds memory, never changes a result.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/classification_tape.h"
#include "engine/strategy.h"
#include "tools/sweep_grid.h"

namespace sparseflash::cli {

// The options that only schedule a run's work (they never change which
// neurons it finds where).
bool IsSchedulingOption(const std::string& key_value);

// The key of what job's classification depends on: every field of the job
// but its grid's name, its threads and its scheduling options.
std::string ClassificationKey(const SweepJob& job);

class SharedClassifications {
 public:
  static constexpr int64_t kDefaultMaxBytes = int64_t{512} << 20;

  explicit SharedClassifications(const std::vector<SweepJob>& jobs,
                                 int64_t max_bytes = kDefaultMaxBytes);

  // One job's use of its key's tape, from its start to its end (the destructor:
  // a tape is dropped after its key's last job).
  class Use {
   public:
    Use(SharedClassifications* shared, size_t job);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

    // What the run does: record a tape, replay one, or neither.
    ClassificationSharing Start();
    bool replaying() const { return replay_ != nullptr; }
    // After the run succeeded: keeps a tape it recorded for the key's later
    // jobs. False when what it replayed did not match its tape (then its
    // result is not the run's own, and must not be stored).
    bool Succeeded();

   private:
    SharedClassifications* shared_;
    const std::string* key_;  // null: the job shares with no other
    std::shared_ptr<ClassificationTape> recording_;
    std::shared_ptr<const ClassificationTape> replayed_;
    std::unique_ptr<TapeReplay> replay_;
  };

  // Runs that replayed a whole tape and succeeded so far.
  int64_t replayed() const;

 private:
  struct Key {
    int64_t jobs_left = 0;  // jobs of the key not yet ended
    std::shared_ptr<const ClassificationTape> tape;
    bool recording = false;
    bool unshareable = false;  // its strategy recorded nothing
  };

  const int64_t max_bytes_;
  std::vector<const std::string*> key_of_job_;  // null for a job alone on its key
  mutable std::mutex mu_;
  // Guarded by mu_.
  std::map<std::string, Key> keys_;
  int64_t kept_bytes_ = 0;
  int64_t replayed_ = 0;
};

}  // namespace sparseflash::cli
