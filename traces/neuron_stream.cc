#include "traces/neuron_stream.h"

#include <algorithm>
#include <bit>

#include "traces/skew.h"

namespace sparseflash {
namespace {

bool Test(const std::vector<uint64_t>& bits, uint32_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }
void Set(std::vector<uint64_t>* bits, uint32_t i) { (*bits)[i >> 6] |= uint64_t{1} << (i & 63); }
// Sets bit i when `on`, without a branch.
void SetIf(std::vector<uint64_t>* bits, uint32_t i, bool on) {
  (*bits)[i >> 6] |= uint64_t{on} << (i & 63);
}
void Clear(std::vector<uint64_t>* bits) { std::fill(bits->begin(), bits->end(), 0); }

// Calls f(i) for every set bit, in increasing order.
template <typename F>
void ForEachSet(const std::vector<uint64_t>& bits, F&& f) {
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint64_t word = bits[w]; word != 0; word &= word - 1) {
      f(static_cast<uint32_t>(w * 64 + std::countr_zero(word)));
    }
  }
}

void AppendSet(const std::vector<uint64_t>& bits, std::vector<uint32_t>* out) {
  ForEachSet(bits, [&](uint32_t i) { out->push_back(i); });
}

// Calls f(ids[k], data[ids[k]]) for each k, fetching the data a few ids ahead:
// the ids are sparse, so each one's data is a cache miss of its own.
template <typename T, typename F>
void ForEachPrefetched(const std::vector<uint32_t>& ids, const std::vector<T>& data, F&& f) {
  constexpr size_t kAhead = 8;
  const size_t n = ids.size();
  for (size_t k = 0; k < n; ++k) {
    if (k + kAhead < n) __builtin_prefetch(&data[ids[k + kAhead]]);
    f(ids[k], data[ids[k]]);
  }
}

// Two 24-bit uniforms in [0, 1) from one 64-bit draw.
float Low24(uint64_t r) { return static_cast<float>(r & 0xffffff) * 0x1.0p-24f; }
float High24(uint64_t r) { return static_cast<float>(r >> 40) * 0x1.0p-24f; }

}  // namespace

NeuronStream::NeuronStream(NeuronStreamParams params, uint64_t seed)
    : p_(std::move(params)),
      rng_(seed),
      group_size_(static_cast<uint32_t>(std::max(1, p_.group_size))),
      group_shift_(std::has_single_bit(group_size_) ? std::countr_zero(group_size_) : -1),
      coactivation_(static_cast<float>(p_.coactivation)) {
  const size_t n = p_.propensity.size();
  std::vector<double> envelope = p_.propensity;
  if (p_.predicted_ratio > 0) {
    for (double& e : envelope) e *= p_.predicted_ratio;
    CapPreservingMean(&envelope, 1.0);
  }
  rates_.resize(n);
  std::vector<float> turn_on(n);   // P(on | off)
  std::vector<float> out_fire(n);  // P(true | outside envelope)
  on_.assign((n + 63) / 64, 0);
  const double recall = p_.predicted_ratio > 0 ? p_.recall : 1.0;
  for (size_t i = 0; i < n; ++i) {
    double q = p_.propensity[i], e = envelope[i];
    const double cold = p_.persistence_cold > 0 ? p_.persistence_cold : p_.persistence;
    double rho = std::clamp(p_.persistence + (cold - p_.persistence) * (1 - e) +
                                p_.persistence_spread * (2 * rng_.Uniform() - 1),
                            0.0, 0.995);
    Rates& r = rates_[i];
    r.stay_on = static_cast<float>(e + rho * (1 - e));
    turn_on[i] = static_cast<float>(e * (1 - rho));
    r.in_keep = e > 0 ? static_cast<float>(std::min(1.0, q * recall / e)) : 0.f;
    out_fire[i] = e < 1 ? static_cast<float>(std::min(1.0, q * (1 - recall) / (1 - e))) : 0.f;
    // Expected gate-only count per neuron is gate_only_ratio * q, drawn among the
    // neurons that can hold it: the envelope minus the active (with a predictor), or
    // every inactive neuron (without).
    double room = p_.predicted_ratio > 0 ? e - q * recall : 1 - q;
    r.gate_only = room > 0 ? static_cast<float>(std::min(1.0, p_.gate_only_ratio * q / room)) : 0.f;
    if (rng_.Uniform() < e) Set(&on_, static_cast<uint32_t>(i));
  }
  next_ = active_bits_ = gate_bits_ = on_;
  // Neurons that can never be off (envelope 1) take no part in the off passes.
  auto can_be_off = [&](size_t i) { return rates_[i].stay_on < 1; };
  const size_t groups = (n + group_size_ - 1) / group_size_;
  groups_.assign(groups + 1, Group{});
  std::vector<float> group_turn_on(groups, 0.f);
  for (size_t k = 0; k < groups; ++k) {
    groups_[k].order_start = static_cast<uint32_t>(group_order_.size());
    const size_t end = std::min(n, (k + 1) * group_size_);
    for (size_t i = k * group_size_; i < end; ++i) {
      if (!can_be_off(i) || turn_on[i] <= 0) continue;
      group_order_.push_back({static_cast<uint32_t>(i), turn_on[i]});
      group_turn_on[k] = std::max(group_turn_on[k], turn_on[i]);
    }
    groups_[k].turn_on = group_turn_on[k];
    std::sort(group_order_.begin() + groups_[k].order_start, group_order_.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  groups_[groups].order_start = static_cast<uint32_t>(group_order_.size());
  std::vector<float> own(n);
  for (size_t i = 0; i < n; ++i) own[i] = can_be_off(i) ? (1 - coactivation_) * turn_on[i] : 0;
  own_turn_on_ = SparseBernoulli(own);
  if (coactivation_ > 0) group_trigger_ = SparseBernoulli(group_turn_on);
  if (p_.predicted_ratio > 0) out_fire_draws_ = SparseBernoulli(out_fire);
  if (p_.predicted_ratio <= 0 && p_.gate_only_ratio > 0) {
    std::vector<float> gate_only(n);
    for (size_t i = 0; i < n; ++i) gate_only[i] = rates_[i].gate_only;
    off_gate_only_draws_ = SparseBernoulli(gate_only);
  }
  followed_.assign(on_.size(), 0);
  AppendSet(on_, &on_ids_);
  std::vector<double>().swap(p_.propensity);  // the rates above are all a step needs
}

float NeuronStream::GroupDraw(uint32_t group) {
  Group& state = groups_[group];
  if (state.drawn_at != step_) {
    // Not a candidate of the trigger pass: uniform above the group's class bound.
    const float bound = coactivation_ > 0 ? SparseBernoulli::ClassBound(state.turn_on) : 0.f;
    state.draw = bound + (1 - bound) * static_cast<float>(rng_.Uniform());
    state.drawn_at = step_;
  }
  return state.draw;
}

void NeuronStream::TurnOnTriggeredGroup(uint32_t group, float g) {
  // Members by falling turn-on probability: those above the draw follow the
  // group with probability c, or draw alone (the own pass skips them).
  for (uint32_t k = groups_[group].order_start; k < groups_[group + 1].order_start; ++k) {
    const auto [i, turn_on] = group_order_[k];
    if (turn_on <= g) break;
    const bool turns_on = Low24(rng_.Next()) < coactivation_ + (1 - coactivation_) * turn_on;
    SetIf(&next_, i, turns_on & !Test(on_, i));
    Set(&followed_, i);
  }
}

void NeuronStream::StepEnvelope() {
  if (++step_ == 0) {  // wrapped: no stale stamp may look current
    for (Group& state : groups_) state.drawn_at = 0;
    step_ = 1;
  }
  Clear(&next_);
  Clear(&followed_);
  if (coactivation_ > 0) {
    group_trigger_.ForEachCandidate(
        rng_,
        [&](uint32_t g, float u, float group_turn_on) {
          groups_[g].draw = u;
          groups_[g].drawn_at = step_;
          if (u < group_turn_on) TurnOnTriggeredGroup(g, u);
        },
        [&](uint32_t g, int distance) {
          // The group's state first, its members once the state has arrived.
          if (distance == 2) {
            __builtin_prefetch(&groups_[g], 1);
          } else {
            __builtin_prefetch(&group_order_[groups_[g].order_start]);
          }
        });
  }
  // `own` is (1 - c) turn_on: the neuron's own draw, unless it followed its group.
  own_turn_on_.ForEachCandidatePrefetched(rng_, [&](uint32_t i, float u, float own) {
    SetIf(&next_, i, (u < own) & !Test(on_, i) & !Test(followed_, i));
  });
  ForEachPrefetched(on_ids_, rates_, [&](uint32_t i, const Rates& rates) {
    // One 64-bit draw gives two uniforms: follow the group, or draw alone.
    const uint64_t r = rng_.Next();
    const float u = Low24(r) < coactivation_ ? GroupDraw(GroupOf(i)) : High24(r);
    SetIf(&next_, i, u < rates.stay_on);
  });
  on_.swap(next_);
  on_ids_.clear();
  AppendSet(on_, &on_ids_);
}

void NeuronStream::DrawSets(NeuronSet* out) {
  out->active.clear();
  out->predicted.clear();
  out->gate_only.clear();
  const bool predictor = p_.predicted_ratio > 0;
  const bool gates = p_.gate_only_ratio > 0;
  Clear(&active_bits_);
  Clear(&gate_bits_);
  if (predictor) out->predicted = on_ids_;
  ForEachPrefetched(on_ids_, rates_, [&](uint32_t i, const Rates& rates) {
    const uint64_t r = rng_.Next();
    const bool active = !predictor || Low24(r) < rates.in_keep;
    SetIf(&active_bits_, i, active);
    SetIf(&gate_bits_, i, !active & gates & (High24(r) < rates.gate_only));
  });
  if (!predictor && gates) {
    // Every on neuron is active; gate-only ones come from the rest.
    off_gate_only_draws_.ForEachCandidatePrefetched(
        rng_, [&](uint32_t i, float u, float gate_only) {
          SetIf(&gate_bits_, i, (u < gate_only) & !Test(on_, i));
        });
  }
  if (predictor) {
    out_fire_draws_.ForEachCandidatePrefetched(rng_, [&](uint32_t i, float u, float out_fire) {
      SetIf(&active_bits_, i, (u < out_fire) & !Test(on_, i));
    });
  }
  AppendSet(active_bits_, &out->active);
  AppendSet(gate_bits_, &out->gate_only);
  // The same sets as bitsets: a planner reads them without marking the ids again.
  NeuronBits& bits = out->bits;
  bits.present = true;
  bits.active = active_bits_;
  bits.gate_only = gate_bits_;
  if (predictor) {
    bits.predicted = on_;
  } else {
    bits.predicted.clear();
  }
}

void NeuronStream::Step(NeuronSet* out) {
  StepEnvelope();
  DrawSets(out);
}

}  // namespace sparseflash
