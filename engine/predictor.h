// The activation predictor as the engine sees it: which neurons it marks active
// before the FFN runs, and what it costs. Replays the trace's recorded predictions
// when present; otherwise models the errors: each truly active neuron is kept
// with probability `recall` (a missed neuron is skipped, as in LLM in a Flash),
// and `extra` x |active| false positives are added, drawn from neurons active
// for the previous token but not this one (near-threshold neurons), uniform
// when there is no previous token. Deterministic for a seed. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "common/random.h"
#include "traces/activation.h"

namespace sparseflash {

struct PredictorOptions {
  bool use_recorded = true;  // use the trace's predicted sets when it has them
  double recall = 0.95;      // [assumption] 0.90-0.95 (PowerInfer, ProSparse)
  double extra = 0.10;       // false positives per true active neuron [assumption]
  uint64_t seed = 1;
};

class Predictor {
 public:
  // `sets` = layers x experts slots; `d_ffn` bounds uniform draws.
  Predictor(const PredictorOptions& options, bool trace_has_predicted, int sets, uint32_t d_ffn);

  // The predicted set of slot `slot` for this token, sorted.
  const std::vector<uint32_t>& Predict(int slot, const NeuronSet& set);
  bool replays_trace() const { return replay_; }

 private:
  PredictorOptions options_;
  bool replay_;
  uint32_t d_ffn_;
  Random random_;
  std::vector<std::vector<uint32_t>> previous_;  // previous token's active set per slot
  std::vector<uint32_t> out_, candidates_;
};

// True if `id` is in the sorted vector.
bool SortedContains(const std::vector<uint32_t>& sorted, uint32_t id);

}  // namespace sparseflash
