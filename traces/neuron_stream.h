// The activation process of one FFN neuron population (a dense layer, or one
// expert of an MoE layer). Each neuron follows a two-state Markov chain whose
// stationary probability is its "envelope" propensity (the predictor's view,
// or the true propensity when there is no predictor) with lag-1 persistence rho;
// neurons of one friend group share their random draws with probability c, so
// friends co-fire. The true active set is drawn inside the envelope so that each
// neuron's marginal is its true propensity and the predictor's recall is as set.
// A step costs time in proportion to the neurons that are on or change, not to
// the population: off neurons turn on, fire outside the envelope or stay
// gate-only through SparseBernoulli's skips, with the same distributions as a
// draw per neuron per step.
// Not thread-safe; deterministic for a given seed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/random.h"
#include "traces/activation.h"
#include "traces/model_spec.h"
#include "traces/sparse_bernoulli.h"

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
};

class NeuronStream {
 public:
  NeuronStream(NeuronStreamParams params, uint64_t seed);

  // Advances one token and writes the sets into `out` (expert id untouched).
  void Step(NeuronSet* out);

 private:
  void StepEnvelope();
  void DrawSets(NeuronSet* out);
  // Off neurons of a group whose shared draw `g` fell below their turn-on
  // probability.
  void TurnOnTriggeredGroup(uint32_t group, float g);
  // Whether off neuron i's turn-on was drawn by TurnOnTriggeredGroup this step.
  bool FollowsGroupDraw(uint32_t i) const {
    const uint32_t group = GroupOf(i);
    return group_drawn_at_[group] == step_ && group_draw_[group] < turn_on_[i];
  }
  uint32_t GroupOf(uint32_t i) const {
    return group_shift_ >= 0 ? i >> group_shift_ : i / group_size_;
  }
  // The group's shared draw this token: drawn now unless the trigger pass drew it.
  float GroupDraw(uint32_t group);

  NeuronStreamParams p_;  // without the propensities, once construction is done
  Random rng_;
  uint32_t group_size_;
  int group_shift_;  // log2(group_size_) when a power of two, else -1
  float coactivation_;
  std::vector<float> stay_on_, turn_on_, in_keep_, gate_only_;
  std::vector<float> out_fire_;       // P(true | outside envelope)
  std::vector<float> group_turn_on_;  // per group: its members' largest turn_on
  // Members that can be off with their turn_on, by falling turn_on.
  std::vector<std::pair<uint32_t, float>> group_order_;
  std::vector<uint32_t> group_order_start_;  // per group, and one past the last
  // Rare events, drawn in time proportional to their number (see SparseBernoulli).
  SparseBernoulli own_turn_on_;    // off -> on by a neuron's own draw: (1 - c) turn_on
  SparseBernoulli group_trigger_;  // a group's shared draw below group_turn_on_
  SparseBernoulli out_fire_draws_;
  SparseBernoulli off_gate_only_draws_;  // without a predictor: inactive neurons
  std::vector<uint64_t> on_, next_, active_bits_, gate_bits_;  // bit per neuron
  std::vector<float> group_draw_;
  std::vector<uint32_t> group_drawn_at_;  // the step_ of group_draw_
  uint32_t step_ = 0;
};

}  // namespace sparseflash
