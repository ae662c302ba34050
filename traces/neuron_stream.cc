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
  stay_on_.resize(n);
  turn_on_.resize(n);
  in_keep_.resize(n);
  out_fire_.resize(n);
  gate_only_.resize(n);
  on_.assign((n + 63) / 64, 0);
  const double recall = p_.predicted_ratio > 0 ? p_.recall : 1.0;
  for (size_t i = 0; i < n; ++i) {
    double q = p_.propensity[i], e = envelope[i];
    const double cold = p_.persistence_cold > 0 ? p_.persistence_cold : p_.persistence;
    double rho = std::clamp(p_.persistence + (cold - p_.persistence) * (1 - e) +
                                p_.persistence_spread * (2 * rng_.Uniform() - 1),
                            0.0, 0.995);
    stay_on_[i] = static_cast<float>(e + rho * (1 - e));
    turn_on_[i] = static_cast<float>(e * (1 - rho));
    in_keep_[i] = e > 0 ? static_cast<float>(std::min(1.0, q * recall / e)) : 0.f;
    out_fire_[i] = e < 1 ? static_cast<float>(std::min(1.0, q * (1 - recall) / (1 - e))) : 0.f;
    // Expected gate-only count per neuron is gate_only_ratio * q, drawn among the
    // neurons that can hold it: the envelope minus the active (with a predictor), or
    // every inactive neuron (without).
    double room = p_.predicted_ratio > 0 ? e - q * recall : 1 - q;
    gate_only_[i] =
        room > 0 ? static_cast<float>(std::min(1.0, p_.gate_only_ratio * q / room)) : 0.f;
    if (rng_.Uniform() < e) Set(&on_, static_cast<uint32_t>(i));
  }
  next_ = active_bits_ = gate_bits_ = on_;
  // Neurons that can never be off (envelope 1) take no part in the off passes.
  auto can_be_off = [&](size_t i) { return stay_on_[i] < 1; };
  const size_t groups = (n + group_size_ - 1) / group_size_;
  group_turn_on_.assign(groups, 0.f);
  group_order_start_.assign(groups + 1, 0);
  for (size_t k = 0; k < groups; ++k) {
    group_order_start_[k] = static_cast<uint32_t>(group_order_.size());
    const size_t end = std::min(n, (k + 1) * group_size_);
    for (size_t i = k * group_size_; i < end; ++i) {
      if (!can_be_off(i) || turn_on_[i] <= 0) continue;
      group_order_.push_back({static_cast<uint32_t>(i), turn_on_[i]});
      group_turn_on_[k] = std::max(group_turn_on_[k], turn_on_[i]);
    }
    std::sort(group_order_.begin() + group_order_start_[k], group_order_.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  group_order_start_[groups] = static_cast<uint32_t>(group_order_.size());
  std::vector<float> own(n);
  for (size_t i = 0; i < n; ++i) own[i] = can_be_off(i) ? (1 - coactivation_) * turn_on_[i] : 0;
  own_turn_on_ = SparseBernoulli(own);
  if (coactivation_ > 0) group_trigger_ = SparseBernoulli(group_turn_on_);
  if (p_.predicted_ratio > 0) out_fire_draws_ = SparseBernoulli(out_fire_);
  if (p_.predicted_ratio <= 0 && p_.gate_only_ratio > 0) {
    off_gate_only_draws_ = SparseBernoulli(gate_only_);
  }
  group_draw_.assign(groups, 0.f);
  group_drawn_at_.assign(groups, 0);
  std::vector<double>().swap(p_.propensity);  // the rates above are all a step needs
}

float NeuronStream::GroupDraw(uint32_t group) {
  if (group_drawn_at_[group] != step_) {
    // Not a candidate of the trigger pass: uniform above the group's class bound.
    const float bound =
        coactivation_ > 0 ? SparseBernoulli::ClassBound(group_turn_on_[group]) : 0.f;
    group_draw_[group] = bound + (1 - bound) * static_cast<float>(rng_.Uniform());
    group_drawn_at_[group] = step_;
  }
  return group_draw_[group];
}

void NeuronStream::TurnOnTriggeredGroup(uint32_t group, float g) {
  // Members by falling turn-on probability: those above the draw follow the
  // group with probability c, or draw alone (the own pass skips them).
  for (uint32_t k = group_order_start_[group]; k < group_order_start_[group + 1]; ++k) {
    const auto [i, turn_on] = group_order_[k];
    if (turn_on <= g) break;
    const bool turns_on = Low24(rng_.Next()) < coactivation_ + (1 - coactivation_) * turn_on;
    SetIf(&next_, i, turns_on & !Test(on_, i));
  }
}

void NeuronStream::StepEnvelope() {
  if (++step_ == 0) {  // wrapped: no stale stamp may look current
    std::fill(group_drawn_at_.begin(), group_drawn_at_.end(), 0);
    step_ = 1;
  }
  Clear(&next_);
  if (coactivation_ > 0) {
    group_trigger_.ForEachCandidate(rng_, [&](uint32_t g, float u) {
      group_draw_[g] = u;
      group_drawn_at_[g] = step_;
      if (u < group_turn_on_[g]) TurnOnTriggeredGroup(g, u);
    });
  }
  own_turn_on_.ForEachCandidate(rng_, [&](uint32_t i, float u) {
    const bool turns_on = u < (1 - coactivation_) * turn_on_[i];
    SetIf(&next_, i, turns_on & !Test(on_, i) & !FollowsGroupDraw(i));
  });
  ForEachSet(on_, [&](uint32_t i) {
    // One 64-bit draw gives two uniforms: follow the group, or draw alone.
    const uint64_t r = rng_.Next();
    const float u = Low24(r) < coactivation_ ? GroupDraw(GroupOf(i)) : High24(r);
    SetIf(&next_, i, u < stay_on_[i]);
  });
  on_.swap(next_);
}

void NeuronStream::DrawSets(NeuronSet* out) {
  out->active.clear();
  out->predicted.clear();
  out->gate_only.clear();
  const bool predictor = p_.predicted_ratio > 0;
  const bool gates = p_.gate_only_ratio > 0;
  Clear(&active_bits_);
  Clear(&gate_bits_);
  ForEachSet(on_, [&](uint32_t i) {
    const uint64_t r = rng_.Next();
    if (predictor) out->predicted.push_back(i);
    const bool active = !predictor || Low24(r) < in_keep_[i];
    SetIf(&active_bits_, i, active);
    SetIf(&gate_bits_, i, !active & gates & (High24(r) < gate_only_[i]));
  });
  if (!predictor && gates) {
    // Every on neuron is active; gate-only ones come from the rest.
    off_gate_only_draws_.ForEachCandidate(rng_, [&](uint32_t i, float u) {
      SetIf(&gate_bits_, i, (u < gate_only_[i]) & !Test(on_, i));
    });
  }
  if (predictor) {
    out_fire_draws_.ForEachCandidate(rng_, [&](uint32_t i, float u) {
      SetIf(&active_bits_, i, (u < out_fire_[i]) & !Test(on_, i));
    });
  }
  AppendSet(active_bits_, &out->active);
  AppendSet(gate_bits_, &out->gate_only);
}

void NeuronStream::Step(NeuronSet* out) {
  StepEnvelope();
  DrawSets(out);
}

}  // namespace sparseflash
