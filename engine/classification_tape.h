// A run's classification of its predicted neurons, set by set in the order the
// planner met them: how many were in memory or on flash, with or without a
// non-zero gate, and the cache's counters after each set. Runs whose
// classification inputs agree (the trace, the budget, the cache and its
// policy, the predictor, the layout, the device's NPU) and that differ only in
// how the work is scheduled (threads, pipeline, cluster size, I/O depth or
// I/O threads) make
// the same decisions, so one records them and the others replay them instead
// of classifying and caching again; their results are the same either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/ffn_plan.h"
#include "engine/strategy.h"

namespace sparseflash {

// One neuron set's classification: its counts, the keys its misses brought
// into the cache, and the cache's counters after it.
struct ClassifiedSet {
  FfnCounts counts;
  int64_t fetched = 0;
  CacheCounters after;
};

class ClassificationTape {
 public:
  // Appends the classification of expert `expert`'s set in layer `layer`.
  void Append(uint32_t layer, uint32_t expert, const ClassifiedSet& set);

  // Gives back the memory the entries were appended into beyond their own.
  void ShrinkToFit() { entries_.shrink_to_fit(); }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  int64_t bytes() const { return static_cast<int64_t>(entries_.capacity() * sizeof(Entry)); }

 private:
  friend class TapeReplay;
  struct Entry {
    uint16_t layer, expert;
    uint32_t counts[4];  // resident active, resident gate-zero, missing active, missing gate-zero
    uint32_t fetched;
    uint64_t hits, accesses;
  };
  std::vector<Entry> entries_;
};

// One run's reading of a tape, in order. A set that is not the tape's next one
// (another layer or expert, or past the end) marks the replay failed: the run
// that replays it is not the run that recorded it, and its result is not used.
class TapeReplay {
 public:
  explicit TapeReplay(const ClassificationTape* tape) : tape_(tape) {}

  // The next set's classification; false (and *set cleared) on a mismatch.
  bool Next(uint32_t layer, uint32_t expert, ClassifiedSet* set);
  // Every set of the tape replayed, none mismatched.
  bool finished() const { return ok_ && at_ == tape_->size(); }

 private:
  const ClassificationTape* tape_;
  size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace sparseflash
