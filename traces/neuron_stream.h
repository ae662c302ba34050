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

  // Advances one token and writes the sets, as ids and as bitsets, into `out`
  // (expert id untouched).
  void Step(NeuronSet* out);

 private:
  void StepEnvelope();
  void DrawSets(NeuronSet* out);
  // Off neurons of a group whose shared draw `g` fell below their turn-on
  // probability; marks every member that took the draw in `followed_`.
  void TurnOnTriggeredGroup(uint32_t group, float g);
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
  // A neuron's rates for its on steps, side by side: a step reads them together.
  struct Rates {
    float stay_on;    // P(on | on)
    float in_keep;    // P(true | in the envelope)
    float gate_only;  // P(gate-only | not true)
  };
  std::vector<Rates> rates_;
  // A friend group's state, in one place: a trigger or a shared draw reads it all.
  struct Group {
    float turn_on = 0;         // its members' largest turn_on
    float draw = 0;            // its shared draw at step drawn_at
    uint32_t drawn_at = 0;     // a step_
    uint32_t order_start = 0;  // its first member in group_order_
  };
  std::vector<Group> groups_;  // and one past the last, for its order_start
  // Members that can be off with their turn_on, by falling turn_on.
  std::vector<std::pair<uint32_t, float>> group_order_;
  // Rare events, drawn in time proportional to their number (see SparseBernoulli).
  SparseBernoulli own_turn_on_;    // off -> on by a neuron's own draw: (1 - c) turn_on
  SparseBernoulli group_trigger_;  // a group's shared draw below its turn_on
  SparseBernoulli out_fire_draws_;
  SparseBernoulli off_gate_only_draws_;  // without a predictor: inactive neurons
  std::vector<uint64_t> on_, next_, active_bits_, gate_bits_;  // bit per neuron
  std::vector<uint64_t> followed_;  // this step: members that took their group's draw
  std::vector<uint32_t> on_ids_;    // the set bits of on_, in increasing order
  uint32_t step_ = 0;
};

}  // namespace sparseflash
