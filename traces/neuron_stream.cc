#include "traces/neuron_stream.h"

#include <algorithm>

#include "traces/skew.h"

namespace sparseflash {
namespace {

void Set(std::vector<uint64_t>* bits, uint32_t i) { (*bits)[i >> 6] |= uint64_t{1} << (i & 63); }

// How far a neuron's persistence moves up on a steady token and down on a
// shifting one: the share it keeps on, e + rho (1 - e), moves by `swing` of
// itself, as far as rho stays in [0, 1]. Symmetric, so the mean persistence
// and the stationary probability e are the chain's without the swing.
double ReuseSwing(double e, double rho, double swing) {
  if (swing <= 0 || e >= 1) return 0;
  const double keep = e + rho * (1 - e);
  return std::min({swing * keep / (1 - e), rho, 1 - rho});
}

}  // namespace

NeuronStream::NeuronStream(NeuronStreamParams p, uint64_t seed)
    : predictor_(p.predicted_ratio > 0), gates_(p.gate_only_ratio > 0), rng_(seed) {
  const size_t n = p.propensity.size();
  const size_t padded = (n + 63) / 64 * 64;
  std::vector<double> envelope = p.propensity;
  if (predictor_) {
    for (double& e : envelope) e *= p.predicted_ratio;
    CapPreservingMean(&envelope, 1.0);
  }
  ChainThresholds& t = thresholds_;
  const int regimes = p.reuse_swing > 0 ? 2 : 1;
  for (int r = 0; r < regimes; ++r) {
    t.stay_on[r].assign(padded, 0);
    t.turn_on[r].assign(padded, 0);
  }
  for (std::vector<int32_t>* v : {&t.in_keep, &t.out_fire, &t.gate_only}) v->assign(padded, 0);
  t.coactivation = ChainThreshold(p.coactivation);
  t.group_size = static_cast<uint32_t>(std::max(1, p.group_size));
  on_.assign(padded / 64, 0);
  const double recall = predictor_ ? p.recall : 1.0;
  const double cold = p.persistence_cold > 0 ? p.persistence_cold : p.persistence;
  for (size_t i = 0; i < n; ++i) {
    const double q = p.propensity[i], e = envelope[i];
    const double rho = std::clamp(p.persistence + (cold - p.persistence) * (1 - e) +
                                      p.persistence_spread * (2 * rng_.Uniform() - 1),
                                  0.0, 0.995);
    const double swing = ReuseSwing(e, rho, p.reuse_swing);
    for (int r = 0; r < regimes; ++r) {
      const double rho_r = rho + (r == 0 ? swing : -swing);
      t.stay_on[r][i] = ChainThreshold(e + rho_r * (1 - e));
      t.turn_on[r][i] = ChainThreshold(e * (1 - rho_r));
    }
    t.in_keep[i] = e > 0 ? ChainThreshold(q * recall / e) : 0;
    t.out_fire[i] = e < 1 ? ChainThreshold(q * (1 - recall) / (1 - e)) : 0;
    // Expected gate-only count per neuron is gate_only_ratio * q, drawn among the
    // neurons that can hold it: the envelope minus the active (with a predictor), or
    // every inactive neuron (without).
    const double room = predictor_ ? e - q * recall : 1 - q;
    t.gate_only[i] = room > 0 ? ChainThreshold(p.gate_only_ratio * q / room) : 0;
    if (rng_.Uniform() < e) Set(&on_, static_cast<uint32_t>(i));
  }
  next_ = on_;
}

void NeuronStream::PrefetchStep(bool shifting) const {
  PrefetchStepStart(thresholds_, shifting, predictor_, gates_);
}

void NeuronStream::Step(NeuronSet* out, bool shifting) {
  // Five 32-bit keys from three 64-bit draws: this token's draws for every neuron.
  const uint64_t r0 = rng_.Next(), r1 = rng_.Next(), r2 = rng_.Next();
  const ChainKeys keys{.follow = static_cast<uint32_t>(r0),
                       .own = static_cast<uint32_t>(r0 >> 32),
                       .group = static_cast<uint32_t>(r1),
                       .set_a = static_cast<uint32_t>(r1 >> 32),
                       .set_b = static_cast<uint32_t>(r2),
                       .shifting = shifting};
  // The sets as bitsets too, written in place: a planner reads them without
  // marking the ids again.
  NeuronBits& bits = out->bits;
  bits.present = true;
  bits.active.resize(on_.size());
  bits.gate_only.resize(on_.size());
  // The ids go through the thread's buffers (room for every neuron), not the
  // stream's: a model has hundreds of streams, and the ids are copied out at once.
  static thread_local std::vector<uint32_t> on_ids, active_ids, gate_ids;
  for (std::vector<uint32_t>* ids : {&on_ids, &active_ids, &gate_ids}) {
    if (ids->size() < on_.size() * 64 + kChainIdSlack) ids->resize(on_.size() * 64 + kChainIdSlack);
  }
  const StepCounts counts = StepToken(thresholds_, keys, predictor_, gates_, on_.data(),
                                      {.on = next_.data(),
                                       .active = bits.active.data(),
                                       .gate_only = bits.gate_only.data(),
                                       .on_ids = predictor_ ? on_ids.data() : nullptr,
                                       .active_ids = active_ids.data(),
                                       .gate_only_ids = gate_ids.data()});
  on_.swap(next_);
  out->predicted.assign(on_ids.data(), on_ids.data() + (predictor_ ? counts.on : 0));
  out->active.assign(active_ids.data(), active_ids.data() + counts.active);
  out->gate_only.assign(gate_ids.data(), gate_ids.data() + counts.gate_only);
  if (predictor_) {
    bits.predicted = on_;
  } else {
    bits.predicted.clear();
  }
}

}  // namespace sparseflash
