#include "engine/predictor.h"

#include <algorithm>

namespace sparseflash {

bool SortedContains(const std::vector<uint32_t>& sorted, uint32_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

Predictor::Predictor(const PredictorOptions& options, bool trace_has_predicted, int sets,
                     uint32_t d_ffn)
    : options_(options),
      replay_(options.use_recorded && trace_has_predicted),
      d_ffn_(d_ffn),
      random_(options.seed),
      previous_(replay_ ? 0 : sets) {}

const std::vector<uint32_t>& Predictor::Predict(int slot, const NeuronSet& set) {
  if (replay_) return set.predicted;
  out_.clear();
  for (uint32_t id : set.active) {
    if (random_.Bernoulli(options_.recall)) out_.push_back(id);
  }
  // False positives: previously active, now inactive neurons first.
  std::vector<uint32_t>& prev = previous_[slot];
  candidates_.clear();
  std::set_difference(prev.begin(), prev.end(), set.active.begin(), set.active.end(),
                      std::back_inserter(candidates_));
  const size_t extra = static_cast<size_t>(options_.extra * set.active.size() + 0.5);
  for (size_t i = 0; i < extra; ++i) {
    uint32_t id;
    if (!candidates_.empty()) {
      size_t pick = random_.Below(static_cast<uint32_t>(candidates_.size()));
      id = candidates_[pick];
      candidates_[pick] = candidates_.back();
      candidates_.pop_back();
    } else {
      id = random_.Below(d_ffn_);
    }
    out_.push_back(id);
  }
  std::sort(out_.begin(), out_.end());
  out_.erase(std::unique(out_.begin(), out_.end()), out_.end());
  prev = set.active;
  return out_;
}

}  // namespace sparseflash
