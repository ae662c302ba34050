// The activation process of one FFN neuron population (a dense layer, or one
// expert of an MoE layer). Each neuron follows a two-state Markov chain whose
// stationary probability is its "envelope" propensity (the predictor's view,
// or the true propensity when there is no predictor) with lag-1 persistence rho;
// neurons of one friend group share their random draws with probability c, so
// friends co-fire. The true active set is drawn inside the envelope so that each
// neuron's marginal is its true propensity and the predictor's recall is as set.
// Not thread-safe; deterministic for a given seed.
#pragma once

#include <cstdint>
#include <vector>

#include "common/random.h"
#include "traces/activation.h"
#include "traces/model_spec.h"

namespace sparseflash {

struct NeuronStreamParams {
  std::vector<double> propensity;  // true firing probability per neuron id
  double persistence = 0.5;
  double persistence_spread = 0;
  double persistence_cold = 0;  // 0 = as persistence
  double coactivation = 0;
  int group_size = 8;
  double predicted_ratio = 0;   // 0: no predictor sets
  double recall = 1;
  double gate_only_ratio = 0;   // 0: no gate-only sets
};

class NeuronStream {
 public:
  NeuronStream(NeuronStreamParams params, uint64_t seed);

  // Advances one token and writes the sets into `out` (expert id untouched).
  void Step(NeuronSet* out);
  // Each neuron's long-run probability of being active.
  const std::vector<double>& propensity() const { return p_.propensity; }

 private:
  void StepEnvelope();
  void DrawSets(NeuronSet* out);

  NeuronStreamParams p_;
  Random rng_;
  std::vector<double> envelope_;   // stationary probability of the envelope chain
  std::vector<float> stay_on_;     // P(on -> on)
  std::vector<float> turn_on_;     // P(off -> on)
  std::vector<float> in_keep_;     // P(true | in envelope)
  std::vector<float> out_fire_;    // P(true | outside envelope)
  std::vector<float> gate_only_;   // P(gate-only | not active)
  std::vector<uint8_t> on_;
  std::vector<float> group_draw_;
};

}  // namespace sparseflash
