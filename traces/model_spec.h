// Plain C++ view of a catalog model: shape, FFN type, quantization and the
// default trace-generator profile. Built once from traces/model.proto at the edge
// (model_catalog.cc); everything else uses these structs. Value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace sparseflash {

enum class QuantKind { kFp16, kInt8, kInt4, kFp32 };

struct Quantization {
  QuantKind kind = QuantKind::kFp16;
  int group_size = 0;              // weights per FP16 scale (INT4/INT8)
  bool scales_resident = false;    // scales kept in DRAM instead of in bundles
  int64_t bundle_align_bytes = 0;  // flash padding of one neuron bundle; 0 = none

  // "int4-g16", "fp16", ...
  std::string Name() const;
  bool operator==(const Quantization&) const = default;
};

// Parses "fp16", "fp32", "int8", "int4", optionally with "-gN" (default g32).
absl::Status ParseQuantization(const std::string& text, Quantization* out);

struct SkewAnchor {
  double neuron_fraction = 0;
  double activation_share = 0;
  bool operator==(const SkewAnchor&) const = default;
};

struct GeneratorProfile {
  std::string name;
  std::vector<double> layer_active_ratio;  // one per layer
  // One per layer, or one for all layers; empty: power law from top80_share.
  std::vector<std::vector<SkewAnchor>> layer_skew;
  double top80_share = 0.4;
  double persistence = 0.5;
  double persistence_spread = 0;
  double persistence_cold = 0;  // 0 = same as persistence
  double coactivation = 0;
  int coactivation_group = 8;
  double predicted_ratio = 0;  // 0 = no predictor sets in the trace
  double predictor_recall = 1;
  double gate_only_ratio = 0;
  double expert_persistence = 0;
  double expert_popularity_skew = 0;
  double reuse_swing = 0;  // 0 = every token keeps alike
  std::string sources;

  absl::Status Validate(int layers) const;
  bool operator==(const GeneratorProfile&) const = default;
};

enum class FfnType { kGated, kUpDown };

struct ModelSpec {
  std::string name;
  std::string display_name;
  int layers = 0;
  int d_model = 0;
  int d_ffn = 0;  // per expert
  int experts = 1;
  int top_k = 1;
  FfnType ffn_type = FfnType::kGated;
  std::string activation;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int vocab = 0;
  bool tied_embeddings = false;
  int context = 2048;
  Quantization quantization;
  int predictor_rank = 0;
  int64_t predictor_bytes = 0;  // published total; overrides the rank when > 0
  int64_t runtime_bytes = 0;
  // The active set is the gate's output above a threshold (CATS/CHESS): the
  // gate runs densely every token, only up and down sparsely. Gated FFNs only.
  bool gate_threshold = false;
  GeneratorProfile generator;
  std::string sources;

  bool is_moe() const { return experts > 1; }
  int ffn_matrices() const { return ffn_type == FfnType::kGated ? 3 : 2; }
  int64_t neurons_per_layer() const { return int64_t{d_ffn} * experts; }
  absl::Status Validate() const;
  bool operator==(const ModelSpec&) const = default;
};

}  // namespace sparseflash
