// The activation process of one FFN neuron population (a dense layer, or one
// expert of an MoE layer). Each neuron follows a two-state Markov chain whose
// stationary probability is its "envelope" propensity (the predictor's view,
// or the true propensity when there is no predictor) with lag-1 persistence rho
// (higher on a steady token, lower on a shifting one: `reuse_swing`);
// each token a neuron takes its friend group's shared draw with probability c
// (else its own), so friends co-fire. The true active set is drawn inside the
// envelope so that each neuron's marginal is its true propensity and the
// predictor's recall is as set. A step draws for every neuron at once, a
// vector of neurons at a time (see chain_step.h).
// Not thread-safe; deterministic for a given seed on every platform.
#pragma once

#include <cstdint>
#include <vector>

#include "common/random.h"
#include "traces/activation.h"
#include "traces/chain_step.h"
#include "traces/model_spec.h"

namespace sparseflash {

struct NeuronStreamParams {
  std::vector<double> propensity;  // true firing probability per neuron id
  double persistence = 0.5;
  double persistence_spread = 0;
  double persistence_cold = 0;  // 0 = as persistence
  double coactivation = 0;
  int group_size = 8;
  double predicted_ratio = 0;  // 0: no predictor sets
  double recall = 1;
  double gate_only_ratio = 0;  // 0: no gate-only sets
  // Relative swing of the share of on neurons a token keeps: up on a steady
  // token, down on a shifting one (the generator says which, for all layers at
  // once); 0: every token alike.
  double reuse_swing = 0;
};

class NeuronStream {
 public:
  NeuronStream(NeuronStreamParams params, uint64_t seed);

  // Advances one token, a steady or a `shifting` one, and writes the sets, as
  // ids and as bitsets, into `out` (expert id untouched).
  void Step(NeuronSet* out, bool shifting = false);
  // Asks for what the next Step (of that kind of token) reads first: called
  // while another stream steps, it hides the wait for this one's data.
  void PrefetchStep(bool shifting) const;

 private:
  bool predictor_;
  bool gates_;
  Random rng_;
  ChainThresholds thresholds_;
  std::vector<uint64_t> on_, next_;  // bit per neuron
};

}  // namespace sparseflash
