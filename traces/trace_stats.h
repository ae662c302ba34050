// Statistics of an activation trace, so a user can check a trace before trusting
// a sweep: active ratio, hot-neuron skew, consecutive-token similarity, neurons
// new to a sliding window and the window's size, LRU hit rates, predictor
// quality, MoE expert use and how the layers' reuse moves together. Fed one
// token at a time (memory is O(neurons + layers^2), not O(tokens)). Window and cache figures use
// the predicted sets when the trace has them (that is what a window or cache holds) and the active
// sets otherwise. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "traces/activation.h"
#include "traces/array_lru.h"

namespace sparseflash {

inline constexpr int kStatsWindows[] = {1, 2, 4, 8, 16};
inline constexpr double kStatsCacheFractions[] = {0.1, 0.25, 0.5};
inline constexpr int kMaxWindow = 32;

struct LayerStats {
  double active_ratio_mean = 0, active_ratio_min = 0, active_ratio_max = 0;
  double share_neurons_for_50pct = 0, share_neurons_for_80pct = 0;
  double jaccard_consecutive = 0;
  std::vector<double> new_per_token;          // index k-1, k = 1..kMaxWindow
  std::vector<double> window_cache_fraction;  // index k-1
  std::vector<double> lru_hit_rate;           // per kStatsCacheFractions
  double predicted_ratio_mean = 0;            // |predicted| / neurons
  double predictor_recall = 0;                // |active ∩ predicted| / |active|
  double up_down_given_gate = 0;              // |active| / (|active| + |gate_only|)
};

struct TraceStats {
  TraceHeader header;
  uint64_t tokens = 0;
  std::string window_set;  // "predicted" or "active"
  int warmup_tokens = 0;   // tokens skipped by the window statistics
  LayerStats overall;
  std::vector<LayerStats> layers;
  std::vector<double> expert_share;  // MoE: share of selections per expert
  double expert_persistence = 0;     // MoE: share of chosen experts kept from the token before
  double active_ratio_in_chosen_experts = 0;  // MoE
  // How much a token's reuse is shared by the layers: the correlation, across
  // tokens, of two layers' shares of active neurons kept from the token
  // before, averaged over pairs of layers (0 with fewer than two layers).
  double kept_share_layer_correlation = 0;

  nlohmann::json ToJson() const;
  std::string ToText() const;
};

class TraceStatsAccumulator {
 public:
  explicit TraceStatsAccumulator(const TraceHeader& header);
  ~TraceStatsAccumulator();
  void Add(const TokenActivations& token);
  TraceStats Finish() const;

 private:
  struct Layer;
  void AddLayer(const LayerActivations& layer, uint64_t t);
  void AddKeptShares();
  double KeptShareLayerCorrelation() const;

  TraceHeader header_;
  uint64_t tokens_ = 0;
  int warmup_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::unique_ptr<ArrayLru>> global_lru_;
  std::vector<uint64_t> global_hits_, global_accesses_;
  std::vector<uint64_t> expert_count_;
  uint64_t expert_kept_ = 0, expert_chosen_ = 0, expert_later_ = 0;
  std::vector<std::vector<uint32_t>> previous_experts_;
  uint64_t chosen_neurons_ = 0, chosen_active_ = 0;
  // Each layer's share of active neurons kept this token (from the second
  // token), and the running sums of the shares, of their squares and of their
  // products by pair of layers ([a * layers + b]).
  std::vector<double> kept_now_;
  std::vector<double> kept_sum_, kept_products_;
  uint64_t kept_tokens_ = 0;
  std::vector<uint32_t> scratch_experts_;  // reused by AddLayer
  std::vector<uint64_t> scratch_ages_;
};

}  // namespace sparseflash

namespace sparseflash {

// Reads the trace at `path` and computes its statistics.
absl::StatusOr<TraceStats> ComputeTraceStats(const std::string& path);

}  // namespace sparseflash
