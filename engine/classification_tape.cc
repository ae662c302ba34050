#include "engine/classification_tape.h"

namespace sparseflash {

// A set's counts are at most its expert's d_ffn, and layers and experts are
// at most kMaxLayers and kMaxExperts (traces/shape_limits.h): they fit.
void ClassificationTape::Append(uint32_t layer, uint32_t expert, const ClassifiedSet& set) {
  const FfnCounts& counts = set.counts;
  entries_.push_back({.layer = static_cast<uint16_t>(layer),
                      .expert = static_cast<uint16_t>(expert),
                      .counts = {static_cast<uint32_t>(counts.resident_active),
                                 static_cast<uint32_t>(counts.resident_gate_zero),
                                 static_cast<uint32_t>(counts.missing_active),
                                 static_cast<uint32_t>(counts.missing_gate_zero)},
                      .fetched = static_cast<uint32_t>(set.fetched),
                      .hits = set.after.hits,
                      .accesses = set.after.accesses});
}

bool TapeReplay::Next(uint32_t layer, uint32_t expert, ClassifiedSet* set) {
  if (!ok_ || at_ >= tape_->size() || tape_->entries_[at_].layer != layer ||
      tape_->entries_[at_].expert != expert) {
    ok_ = false;
    *set = ClassifiedSet{};
    return false;
  }
  const ClassificationTape::Entry& e = tape_->entries_[at_++];
  *set = {.counts = {.resident_active = e.counts[0],
                     .resident_gate_zero = e.counts[1],
                     .missing_active = e.counts[2],
                     .missing_gate_zero = e.counts[3]},
          .fetched = e.fetched,
          .after = {.hits = e.hits, .accesses = e.accesses}};
  return true;
}

}  // namespace sparseflash
