// One token's step of a neuron population's activation chains, computed densely
// over every neuron with SIMD (Highway, dispatched at run time): the draws are
// counter-based, a hash of the neuron (or its friend group) and a per-step key,
// so a vector of neurons draws at once and any SIMD width gives the same bits.
// A plain scalar version gives the same bits for any friend-group size.
//
// Probabilities are 30-bit fixed point (p x 2^30, 0 and 2^30 exact); a draw is
// the top 30 bits of a 32-bit hash; an event is `draw < threshold`. Per-neuron
// arrays are padded with zeros to a whole number of 64-neuron words: a padded
// neuron never turns on.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace sparseflash {

constexpr int kChainProbabilityBits = 30;

// p in [0, 1] as a threshold (clamped). Non-negative, so adding a half and
// truncating rounds to nearest; inline, with no libm call: a stream sets
// several thresholds for each of its neurons.
inline int32_t ChainThreshold(double p) {
  return static_cast<int32_t>(std::clamp(p, 0.0, 1.0) * (1 << kChainProbabilityBits) + 0.5);
}

// Each neuron's transition and set probabilities, as thresholds. A token is
// steady (index 0) or shifting (1), the same for every layer: the transitions
// of a shifting token keep fewer of the on neurons. Without that swing the
// shifting ones are empty and every token steps as a steady one.
struct ChainThresholds {
  std::array<std::vector<int32_t>, 2> stay_on;  // P(on | on)
  std::array<std::vector<int32_t>, 2> turn_on;  // P(on | off)
  std::vector<int32_t> in_keep;                 // P(active | on), with a predictor
  std::vector<int32_t> out_fire;                // P(active | off), with a predictor
  std::vector<int32_t> gate_only;               // P(gate-only | may be gate-only)
  int32_t coactivation = 0;                     // P(a neuron takes its group's shared draw)
  uint32_t group_size = 8;

  size_t words() const { return stay_on[0].size() / 64; }
  // The transitions a token steps by (shifting ones only where they exist).
  int regime(bool shifting) const { return shifting && !stay_on[1].empty() ? 1 : 0; }
};

// What varies from step to step: the keys of the five draws (follow the
// group, own draw, the group's shared draw, and the two set draws), and
// whether the token is a shifting one.
struct ChainKeys {
  uint32_t follow = 0, own = 0, group = 0, set_a = 0, set_b = 0;
  bool shifting = false;
};

// The sets of a step, from its on bits. With a predictor (the on neurons are
// the predicted set) a neuron is active with in_keep (on) or out_fire (off);
// without, the on neurons are the active set. Gate-only: neurons not active,
// on ones with a predictor and off ones without, with gate_only (when `gates`).
struct SetCounts {
  size_t active = 0, gate_only = 0;
};

// Room past the last id that StepToken's id arrays need: a vector store may
// write a whole vector there.
constexpr size_t kChainIdSlack = 16;

// Where StepToken writes: bitsets of t.words() words, and the ids of their set
// bits in increasing order into arrays with room for every neuron plus
// kChainIdSlack (on_ids may be null: not wanted).
struct StepSinks {
  uint64_t* on = nullptr;
  uint64_t* active = nullptr;
  uint64_t* gate_only = nullptr;
  uint32_t* on_ids = nullptr;
  uint32_t* active_ids = nullptr;
  uint32_t* gate_only_ids = nullptr;
};
struct StepCounts {
  size_t on = 0, active = 0, gate_only = 0;
};

// One token's step, in one pass over the neurons: the next on bits (a neuron
// takes its group's shared draw with probability `coactivation`, else its own,
// and is on next if the draw falls below its stay_on (on now) or turn_on (off
// now) threshold), then the sets drawn from them, and the ids of all three;
// with a predictor the gate-only draws follow, for the few neurons on and not
// active alone. The same bits as StepChainsScalar followed by DrawSetBitsScalar.
StepCounts StepToken(const ChainThresholds& t, const ChainKeys& keys, bool predictor, bool gates,
                     const uint64_t* on, const StepSinks& out);

// Asks for the thresholds a step (StepToken) reads first, so that they are on
// their way while the caller does other work (steps another population).
void PrefetchStepStart(const ChainThresholds& t, bool shifting, bool predictor, bool gates);

// The reference, one neuron at a time (also any group size): the next on bits
// (returns their count), and the sets drawn from on bits.
size_t StepChainsScalar(const ChainThresholds& t, const ChainKeys& keys, const uint64_t* on,
                        uint64_t* next);
SetCounts DrawSetBitsScalar(const ChainThresholds& t, const ChainKeys& keys, bool predictor,
                            bool gates, const uint64_t* on, uint64_t* active, uint64_t* gate_only);

// The SIMD target the dispatched versions run on.
const char* ChainStepTarget();

}  // namespace sparseflash
