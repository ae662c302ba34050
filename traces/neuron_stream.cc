#include "traces/neuron_stream.h"

#include <algorithm>

#include "traces/skew.h"

namespace sparseflash {

NeuronStream::NeuronStream(NeuronStreamParams params, uint64_t seed)
    : p_(std::move(params)), rng_(seed) {
  const size_t n = p_.propensity.size();
  envelope_ = p_.propensity;
  if (p_.predicted_ratio > 0) {
    for (double& e : envelope_) e *= p_.predicted_ratio;
    CapPreservingMean(&envelope_, 1.0);
  }
  stay_on_.resize(n);
  turn_on_.resize(n);
  in_keep_.resize(n);
  out_fire_.resize(n);
  gate_only_.resize(n);
  on_.resize(n);
  const double recall = p_.predicted_ratio > 0 ? p_.recall : 1.0;
  for (size_t i = 0; i < n; ++i) {
    double q = p_.propensity[i], e = envelope_[i];
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
    gate_only_[i] = room > 0 ? static_cast<float>(std::min(1.0, p_.gate_only_ratio * q / room))
                             : 0.f;
    on_[i] = rng_.Uniform() < e;
  }
  group_draw_.resize((n + p_.group_size - 1) / std::max(1, p_.group_size));
}

void NeuronStream::StepEnvelope() {
  for (float& g : group_draw_) g = static_cast<float>(rng_.Uniform());
  const size_t n = on_.size();
  const int group = std::max(1, p_.group_size);
  const float coactivation = static_cast<float>(p_.coactivation);
  for (size_t i = 0; i < n; ++i) {
    // One 64-bit draw gives two 24-bit uniforms: follow the group, or draw alone.
    const uint64_t r = rng_.Next();
    const float pick = static_cast<float>(r & 0xffffff) * 0x1.0p-24f;
    const float own = static_cast<float>(r >> 40) * 0x1.0p-24f;
    const float u = pick < coactivation ? group_draw_[i / group] : own;
    on_[i] = u < (on_[i] ? stay_on_[i] : turn_on_[i]);
  }
}

void NeuronStream::DrawSets(NeuronSet* out) {
  out->active.clear();
  out->predicted.clear();
  out->gate_only.clear();
  const bool predictor = p_.predicted_ratio > 0;
  const bool gates = p_.gate_only_ratio > 0;
  for (uint32_t i = 0; i < on_.size(); ++i) {
    bool active;
    if (on_[i]) {
      if (predictor) out->predicted.push_back(i);
      active = !predictor || rng_.Uniform() < in_keep_[i];
    } else {
      active = predictor && out_fire_[i] > 0 && rng_.Uniform() < out_fire_[i];
    }
    if (active) {
      out->active.push_back(i);
    } else if (gates && (on_[i] || !predictor) && gate_only_[i] > 0 &&
               rng_.Uniform() < gate_only_[i]) {
      out->gate_only.push_back(i);
    }
  }
}

void NeuronStream::Step(NeuronSet* out) {
  StepEnvelope();
  DrawSets(out);
}

}  // namespace sparseflash
