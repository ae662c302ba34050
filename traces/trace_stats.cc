#include "traces/trace_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/check.h"
#include "traces/shape_limits.h"
#include "traces/skew.h"
#include "traces/trace_reader.h"

namespace sparseflash {
namespace {

constexpr int kRing = 64;

double Ratio(uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / b : 0; }

// Size of the intersection of two sorted id lists.
uint64_t CountCommon(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  uint64_t n = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++n, ++i, ++j;
    }
  }
  return n;
}
constexpr int64_t kNever = std::numeric_limits<int64_t>::min() / 2;

struct Sums {
  double active = 0, active_min = 1e9, active_max = 0;
  double jaccard = 0;
  uint64_t jaccard_n = 0;
  std::vector<double> fresh = std::vector<double>(kMaxWindow + 1);
  std::vector<double> window = std::vector<double>(kMaxWindow + 1);
  uint64_t window_n = 0;
  double predicted = 0, recalled = 0, active_total = 0, gate_only = 0;
};

}  // namespace

struct TraceStatsAccumulator::Layer {
  uint32_t n;
  std::vector<double> counts;
  std::vector<int64_t> last_active;
  std::vector<int64_t> last_window;
  std::vector<uint32_t> ring;  // neurons whose last window use was token t, at t % kRing
  uint64_t previous_active = 0;
  std::vector<std::unique_ptr<ArrayLru>> lru;
  std::vector<uint64_t> lru_hits, lru_accesses;
  Sums sums;
  std::vector<uint32_t> keys;  // scratch: this token's window set as layer keys

  explicit Layer(uint32_t neurons)
      : n(neurons),
        counts(neurons),
        last_active(neurons, kNever),
        last_window(neurons, kNever),
        ring(kRing) {
    for (double f : kStatsCacheFractions) {
      lru.push_back(std::make_unique<ArrayLru>(neurons, static_cast<uint64_t>(f * neurons)));
    }
    lru_hits.assign(lru.size(), 0);
    lru_accesses.assign(lru.size(), 0);
  }
};

TraceStatsAccumulator::TraceStatsAccumulator(const TraceHeader& header) : header_(header) {
  const TraceModelShape& m = header.model;
  // The reader bounds the shape (traces/shape_limits.h), so keys fit 32 bits.
  const uint64_t neurons = uint64_t(m.d_ffn) * uint64_t(m.experts);
  SF_CHECK(neurons * uint64_t(m.layers) <= uint64_t(kMaxNeuronKeys));
  const uint32_t n = static_cast<uint32_t>(neurons);
  warmup_ = static_cast<int>(std::min<uint64_t>(kMaxWindow, header.tokens / 4));
  for (int l = 0; l < m.layers; ++l) layers_.push_back(std::make_unique<Layer>(n));
  const uint64_t total = uint64_t{n} * m.layers;
  for (double f : kStatsCacheFractions) {
    global_lru_.push_back(
        std::make_unique<ArrayLru>(static_cast<uint32_t>(total), static_cast<uint64_t>(f * total)));
  }
  global_hits_.assign(global_lru_.size(), 0);
  global_accesses_.assign(global_lru_.size(), 0);
  expert_count_.assign(m.experts, 0);
  previous_experts_.resize(m.layers);
  kept_now_.assign(m.layers, 0);
  kept_sum_.assign(m.layers, 0);
  kept_products_.assign(size_t{static_cast<size_t>(m.layers)} * m.layers, 0);
}

TraceStatsAccumulator::~TraceStatsAccumulator() = default;

void TraceStatsAccumulator::Add(const TokenActivations& token) {
  for (const LayerActivations& layer : token.layers) AddLayer(layer, tokens_);
  if (tokens_ > 0) AddKeptShares();
  ++tokens_;
}

void TraceStatsAccumulator::AddKeptShares() {
  const size_t layers = kept_now_.size();
  for (size_t a = 0; a < layers; ++a) {
    kept_sum_[a] += kept_now_[a];
    for (size_t b = a; b < layers; ++b) {
      kept_products_[a * layers + b] += kept_now_[a] * kept_now_[b];
    }
  }
  ++kept_tokens_;
}

double TraceStatsAccumulator::KeptShareLayerCorrelation() const {
  const size_t layers = kept_now_.size();
  const double n = static_cast<double>(kept_tokens_);
  if (layers < 2 || kept_tokens_ < 2) return 0;
  auto covariance = [&](size_t a, size_t b) {
    return kept_products_[a * layers + b] / n - kept_sum_[a] / n * (kept_sum_[b] / n);
  };
  double sum = 0;
  int pairs = 0;
  for (size_t a = 0; a < layers; ++a) {
    for (size_t b = a + 1; b < layers; ++b) {
      const double var_a = covariance(a, a), var_b = covariance(b, b);
      // A layer whose share never moves (its variance zero up to rounding).
      if (!(var_a > 1e-12 && var_b > 1e-12)) continue;
      sum += covariance(a, b) / std::sqrt(var_a * var_b);
      ++pairs;
    }
  }
  return pairs > 0 ? sum / pairs : 0;
}

void TraceStatsAccumulator::AddLayer(const LayerActivations& la, uint64_t t) {
  Layer& L = *layers_[la.layer];
  Sums& s = L.sums;
  const uint32_t d = static_cast<uint32_t>(header_.model.d_ffn);
  const int64_t now = static_cast<int64_t>(t);
  const bool counted = t >= static_cast<uint64_t>(warmup_);
  uint64_t active = 0, inter = 0;
  L.keys.clear();
  std::vector<uint32_t>& experts = scratch_experts_;
  experts.clear();
  for (const NeuronSet& set : la.experts) {
    const uint32_t base = set.expert * d;
    experts.push_back(set.expert);
    for (uint32_t id : set.active) {
      uint32_t k = base + id;
      L.counts[k] += 1;
      inter += L.last_active[k] == now - 1;
      L.last_active[k] = now;
    }
    active += set.active.size();
    s.gate_only += set.gate_only.size();
    const std::vector<uint32_t>& window_ids = header_.has_predicted ? set.predicted : set.active;
    for (uint32_t id : window_ids) L.keys.push_back(base + id);
    if (header_.has_predicted) {
      s.predicted += set.predicted.size();
      s.recalled += CountCommon(set.active, set.predicted);
    }
    chosen_neurons_ += d;
    chosen_active_ += set.active.size();
  }
  s.active_total += active;
  double ratio = static_cast<double>(active) / L.n;
  s.active += ratio;
  s.active_min = std::min(s.active_min, ratio);
  s.active_max = std::max(s.active_max, ratio);
  if (t > 0) {
    uint64_t uni = active + L.previous_active - inter;
    s.jaccard += uni > 0 ? static_cast<double>(inter) / uni : 1.0;
    ++s.jaccard_n;
    kept_now_[la.layer] = Ratio(inter, L.previous_active);
  }
  L.previous_active = active;

  // Sliding-window figures over the window set.
  L.ring[t % kRing] = 0;
  std::vector<uint64_t>& age_hist = scratch_ages_;
  age_hist.assign(kMaxWindow + 2, 0);
  for (uint32_t k : L.keys) {
    int64_t age = now - L.last_window[k];
    age_hist[std::min<int64_t>(age, kMaxWindow + 1)]++;
    if (age < kRing) L.ring[L.last_window[k] % kRing]--;
    L.ring[t % kRing]++;
    L.last_window[k] = now;
  }
  if (counted) {
    uint64_t older = 0, window = 0;
    for (int k = kMaxWindow; k >= 1; --k) {
      older += age_hist[k + 1];
      s.fresh[k] += older;
    }
    for (int k = 1; k <= kMaxWindow && k <= now + 1; ++k) {
      window += L.ring[(t - k + 1) % kRing];
      s.window[k] += window;
    }
    for (int k = static_cast<int>(std::min<int64_t>(now + 1, kMaxWindow)) + 1; k <= kMaxWindow;
         ++k) {
      s.window[k] += window;
    }
    ++s.window_n;
  }
  // LRU reference hit rates: per layer, and over the whole FFN in access order.
  for (size_t c = 0; c < L.lru.size(); ++c) {
    for (uint32_t k : L.keys) {
      bool hit = L.lru[c]->Access(k);
      bool ghit = global_lru_[c]->Access(la.layer * L.n + k);
      if (counted) {
        L.lru_hits[c] += hit;
        L.lru_accesses[c]++;
        global_hits_[c] += ghit;
        global_accesses_[c]++;
      }
    }
  }
  // Expert routing.
  if (header_.model.experts > 1) {
    for (uint32_t e : experts) {
      expert_count_[e]++;
      ++expert_chosen_;
      const auto& prev = previous_experts_[la.layer];
      if (t > 0) {
        expert_kept_ += std::find(prev.begin(), prev.end(), e) != prev.end();
        ++expert_later_;
      }
    }
    previous_experts_[la.layer] = experts;
  }
}

namespace {

LayerStats Summarize(const Sums& s, const std::vector<double>& counts, uint64_t tokens, uint32_t n,
                     const std::vector<double>& lru) {
  LayerStats out;
  const double t = std::max<uint64_t>(tokens, 1);
  out.active_ratio_mean = s.active / t;
  out.active_ratio_min = tokens ? s.active_min : 0;
  out.active_ratio_max = s.active_max;
  out.share_neurons_for_50pct = ShareOfNeuronsCarrying(counts, 0.5);
  out.share_neurons_for_80pct = ShareOfNeuronsCarrying(counts, 0.8);
  out.jaccard_consecutive = s.jaccard_n ? s.jaccard / s.jaccard_n : 0;
  const double w = static_cast<double>(std::max<uint64_t>(s.window_n, 1)) * static_cast<double>(n);
  for (int k = 1; k <= kMaxWindow; ++k) {
    out.new_per_token.push_back(s.fresh[k] / w);
    out.window_cache_fraction.push_back(s.window[k] / w);
  }
  out.lru_hit_rate = lru;
  out.predicted_ratio_mean = s.predicted / (t * n);
  out.predictor_recall = s.active_total > 0 ? s.recalled / s.active_total : 0;
  out.up_down_given_gate = s.active_total > 0 ? s.active_total / (s.active_total + s.gate_only) : 0;
  return out;
}

}  // namespace

TraceStats TraceStatsAccumulator::Finish() const {
  TraceStats out;
  out.header = header_;
  out.tokens = tokens_;
  out.window_set = header_.has_predicted ? "predicted" : "active";
  out.warmup_tokens = warmup_;
  LayerStats& o = out.overall;
  o.active_ratio_min = 1;
  const double nl = std::max<size_t>(layers_.size(), 1);
  for (const auto& L : layers_) {
    std::vector<double> lru;
    for (size_t c = 0; c < L->lru.size(); ++c) {
      lru.push_back(Ratio(L->lru_hits[c], L->lru_accesses[c]));
    }
    LayerStats ls = Summarize(L->sums, L->counts, tokens_, L->n, lru);
    o.active_ratio_mean += ls.active_ratio_mean / nl;
    o.active_ratio_min = std::min(o.active_ratio_min, ls.active_ratio_mean);
    o.active_ratio_max = std::max(o.active_ratio_max, ls.active_ratio_mean);
    o.share_neurons_for_50pct += ls.share_neurons_for_50pct / nl;
    o.share_neurons_for_80pct += ls.share_neurons_for_80pct / nl;
    o.jaccard_consecutive += ls.jaccard_consecutive / nl;
    o.new_per_token.resize(kMaxWindow);
    o.window_cache_fraction.resize(kMaxWindow);
    for (int k = 0; k < kMaxWindow; ++k) {
      o.new_per_token[k] += ls.new_per_token[k] / nl;
      o.window_cache_fraction[k] += ls.window_cache_fraction[k] / nl;
    }
    o.predicted_ratio_mean += ls.predicted_ratio_mean / nl;
    o.predictor_recall += ls.predictor_recall / nl;
    o.up_down_given_gate += ls.up_down_given_gate / nl;
    out.layers.push_back(std::move(ls));
  }
  for (size_t c = 0; c < global_lru_.size(); ++c) {
    o.lru_hit_rate.push_back(Ratio(global_hits_[c], global_accesses_[c]));
  }
  if (header_.model.experts > 1) {
    for (uint64_t c : expert_count_) out.expert_share.push_back(Ratio(c, expert_chosen_));
    out.expert_persistence = Ratio(expert_kept_, expert_later_);
    out.active_ratio_in_chosen_experts = Ratio(chosen_active_, chosen_neurons_);
  }
  out.kept_share_layer_correlation = KeptShareLayerCorrelation();
  return out;
}

}  // namespace sparseflash

namespace sparseflash {

absl::StatusOr<TraceStats> ComputeTraceStats(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  TraceStatsAccumulator stats((*reader)->header());
  absl::Status s = ForEachToken(**reader, [&](const TokenActivations& t) { stats.Add(t); });
  if (!s.ok()) return s;
  return stats.Finish();
}

}  // namespace sparseflash
