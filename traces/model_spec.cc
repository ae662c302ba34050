#include "traces/model_spec.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "traces/shape_limits.h"

namespace sparseflash {
namespace {

absl::Status Invalid(const std::string& model, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("model '", model, "': ", what));
}

}  // namespace

std::string Quantization::Name() const {
  switch (kind) {
    case QuantKind::kFp16:
      return "fp16";
    case QuantKind::kFp32:
      return "fp32";
    case QuantKind::kInt8:
      return absl::StrCat("int8-g", group_size);
    case QuantKind::kInt4:
      return absl::StrCat("int4-g", group_size);
  }
  return "?";
}

absl::Status ParseQuantization(const std::string& text, Quantization* out) {
  std::vector<std::string> parts = absl::StrSplit(text, '-');
  const std::string& kind = parts[0];
  if (kind == "fp16")
    out->kind = QuantKind::kFp16;
  else if (kind == "fp32")
    out->kind = QuantKind::kFp32;
  else if (kind == "int8")
    out->kind = QuantKind::kInt8;
  else if (kind == "int4")
    out->kind = QuantKind::kInt4;
  else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown quantization '", text, "'; known: fp16, fp32, int8[-gN], int4[-gN]"));
  }
  out->group_size = 0;
  if (out->kind == QuantKind::kInt8 || out->kind == QuantKind::kInt4) {
    out->group_size = 32;
    int g = 0;
    if (parts.size() == 2 && parts[1].size() > 1 && parts[1][0] == 'g' &&
        absl::SimpleAtoi(parts[1].substr(1), &g) && g > 0) {
      out->group_size = g;
    } else if (parts.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad quantization '", text, "'; expected e.g. int4-g32"));
    }
  }
  return absl::OkStatus();
}

absl::Status GeneratorProfile::Validate(int layers) const {
  if (static_cast<int>(layer_active_ratio.size()) != layers) {
    return absl::InvalidArgumentError(
        absl::StrCat("generator profile '", name, "': layer_active_ratio has ",
                     layer_active_ratio.size(), " values, the model has ", layers, " layers"));
  }
  for (double r : layer_active_ratio) {
    if (!(r > 0 && r <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("generator profile '", name, "': layer_active_ratio ", r, " not in (0, 1]"));
    }
  }
  if (layer_skew.size() > 1 && static_cast<int>(layer_skew.size()) != layers) {
    return absl::InvalidArgumentError(
        absl::StrCat("generator profile '", name, "': layer_skew has ", layer_skew.size(),
                     " entries; give one for all layers or one per layer (", layers, ")"));
  }
  auto in = [](double v, double lo, double hi) { return v >= lo && v <= hi; };  // false for NaN
  if (!in(persistence, 0, 0.999999) || !in(persistence_spread, 0, 1) ||
      !in(persistence_cold, 0, 0.999999) || !in(coactivation, 0, 1) || !in(reuse_swing, 0, 1) ||
      !in(predictor_recall, 1e-9, 1) || !in(predicted_ratio, 0, 100) ||
      !in(gate_only_ratio, 0, 1) || !in(expert_persistence, 0, 1) ||
      !in(expert_popularity_skew, 0, 100) || !in(top80_share, 1e-6, 1) || coactivation_group < 1 ||
      coactivation_group > (1 << 16)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generator profile '", name,
        "': persistence and persistence_cold must be in [0,1), persistence_spread, "
        "coactivation, reuse_swing, gate_only_ratio and expert_persistence in [0,1], "
        "predictor_recall in "
        "(0,1], top80_share in (0,1], predicted_ratio and expert_popularity_skew in [0,100], "
        "coactivation_group in [1, 65536]"));
  }
  for (const std::vector<SkewAnchor>& anchors : layer_skew) {
    for (const SkewAnchor& a : anchors) {
      if (!in(a.neuron_fraction, 0, 1) || !in(a.activation_share, 0, 1)) {
        return absl::InvalidArgumentError(
            absl::StrCat("generator profile '", name, "': skew anchors must lie in [0,1] x [0,1]"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ModelSpec::Validate() const {
  if (name.empty()) return Invalid("?", "name is empty");
  if (layers <= 0 || d_model <= 0 || d_ffn <= 0 || heads <= 0 || kv_heads <= 0 || head_dim <= 0 ||
      vocab <= 0) {
    return Invalid(name, "layers, d_model, d_ffn, heads, kv_heads, head_dim, vocab must be > 0");
  }
  if (std::string e = ShapeLimitError(layers, d_ffn, experts, top_k); !e.empty()) {
    return Invalid(name, e);
  }
  if (d_model > (1 << 20) || heads > (1 << 16) || kv_heads > heads || head_dim > (1 << 16) ||
      vocab > (1 << 24) || context < 1 || context > (1 << 24)) {
    return Invalid(name,
                   "need d_model <= 2^20, kv_heads <= heads <= 2^16, head_dim <= 2^16, vocab <= "
                   "2^24 and context in [1, 2^24]");
  }
  const int g = quantization.group_size;
  const bool grouped =
      quantization.kind == QuantKind::kInt4 || quantization.kind == QuantKind::kInt8;
  if (grouped && (g < 1 || g > d_model)) {
    return Invalid(name, absl::StrCat("quantization group size ", g, " not in [1, d_model]"));
  }
  if (predictor_rank < 0 || predictor_bytes < 0 || runtime_bytes < 0) {
    return Invalid(name, "predictor_rank, predictor_bytes and runtime_bytes must be >= 0");
  }
  if (gate_threshold && ffn_type != FfnType::kGated) {
    return Invalid(name,
                   "gate_threshold needs a gated FFN (ffn_type GATED): it thresholds the gate");
  }
  return generator.Validate(layers);
}

}  // namespace sparseflash
