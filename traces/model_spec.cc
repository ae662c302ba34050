#include "traces/model_spec.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sparseflash {
namespace {

absl::Status Invalid(const std::string& model, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("model '", model, "': ", what));
}

}  // namespace

std::string Quantization::Name() const {
  switch (kind) {
    case QuantKind::kFp16: return "fp16";
    case QuantKind::kFp32: return "fp32";
    case QuantKind::kInt8: return absl::StrCat("int8-g", group_size);
    case QuantKind::kInt4: return absl::StrCat("int4-g", group_size);
  }
  return "?";
}

absl::Status ParseQuantization(const std::string& text, Quantization* out) {
  std::vector<std::string> parts = absl::StrSplit(text, '-');
  const std::string& kind = parts[0];
  if (kind == "fp16") out->kind = QuantKind::kFp16;
  else if (kind == "fp32") out->kind = QuantKind::kFp32;
  else if (kind == "int8") out->kind = QuantKind::kInt8;
  else if (kind == "int4") out->kind = QuantKind::kInt4;
  else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown quantization '", text, "'; known: fp16, fp32, int8[-gN], int4[-gN]"));
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
    return absl::InvalidArgumentError(absl::StrCat(
        "generator profile '", name, "': layer_active_ratio has ",
        layer_active_ratio.size(), " values, the model has ", layers, " layers"));
  }
  for (double r : layer_active_ratio) {
    if (!(r > 0 && r <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "generator profile '", name, "': layer_active_ratio ", r, " not in (0, 1]"));
    }
  }
  if (layer_skew.size() > 1 && static_cast<int>(layer_skew.size()) != layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generator profile '", name, "': layer_skew has ", layer_skew.size(),
        " entries; give one for all layers or one per layer (", layers, ")"));
  }
  if (!(persistence >= 0 && persistence < 1) || !(coactivation >= 0 && coactivation <= 1) ||
      !(predictor_recall > 0 && predictor_recall <= 1) || predicted_ratio < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generator profile '", name,
        "': persistence must be in [0,1), coactivation in [0,1], recall in (0,1]"));
  }
  return absl::OkStatus();
}

absl::Status ModelSpec::Validate() const {
  if (name.empty()) return Invalid("?", "name is empty");
  if (layers <= 0 || d_model <= 0 || d_ffn <= 0 || heads <= 0 || kv_heads <= 0 ||
      head_dim <= 0 || vocab <= 0) {
    return Invalid(name, "layers, d_model, d_ffn, heads, kv_heads, head_dim, vocab must be > 0");
  }
  if (experts < 1 || top_k < 1 || top_k > experts) {
    return Invalid(name, "need experts >= 1 and 1 <= top_k <= experts");
  }
  return generator.Validate(layers);
}

}  // namespace sparseflash
