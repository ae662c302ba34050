#include "traces/model_catalog.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/embedded_file.h"
#include "common/files.h"
#include "common/textproto.h"
#include "traces/model.pb.h"

namespace sparseflash {

extern const EmbeddedFile kModelFiles[];
extern const int kModelFiles_count;

namespace {

Quantization FromProto(const proto::Quantization& q) {
  Quantization out;
  switch (q.kind()) {
    case proto::Quantization::INT4:
      out.kind = QuantKind::kInt4;
      break;
    case proto::Quantization::INT8:
      out.kind = QuantKind::kInt8;
      break;
    case proto::Quantization::FP32:
      out.kind = QuantKind::kFp32;
      break;
    default:
      out.kind = QuantKind::kFp16;
      break;
  }
  out.group_size = q.group_size();
  out.scales_resident = q.scales_resident();
  out.bundle_align_bytes = q.bundle_align_bytes();
  return out;
}

GeneratorProfile FromProto(const proto::GeneratorProfile& g) {
  GeneratorProfile out;
  out.name = g.name();
  out.layer_active_ratio.assign(g.layer_active_ratio().begin(), g.layer_active_ratio().end());
  if (g.mean_active_ratio() > 0 && !out.layer_active_ratio.empty()) {
    double sum = 0;
    for (double r : out.layer_active_ratio) sum += r;
    double scale = g.mean_active_ratio() * out.layer_active_ratio.size() / sum;
    for (double& r : out.layer_active_ratio) r *= scale;
  }
  for (const proto::LayerSkew& skew : g.layer_skew()) {
    std::vector<SkewAnchor>& anchors = out.layer_skew.emplace_back();
    for (const proto::SkewAnchor& a : skew.anchors()) {
      anchors.push_back({a.neuron_fraction(), a.activation_share()});
    }
  }
  if (g.top80_share() > 0) out.top80_share = g.top80_share();
  out.persistence = g.persistence();
  out.persistence_spread = g.persistence_spread();
  out.persistence_cold = g.persistence_cold();
  out.coactivation = g.coactivation();
  if (g.coactivation_group() > 0) out.coactivation_group = g.coactivation_group();
  out.predicted_ratio = g.predicted_ratio();
  if (g.predictor_recall() > 0) out.predictor_recall = g.predictor_recall();
  out.gate_only_ratio = g.gate_only_ratio();
  out.expert_persistence = g.expert_persistence();
  out.expert_popularity_skew = g.expert_popularity_skew();
  out.reuse_swing = g.reuse_swing();
  out.sources = g.sources();
  return out;
}

ModelSpec FromProto(const proto::ModelSpec& m) {
  ModelSpec out;
  out.name = m.name();
  out.display_name = m.display_name().empty() ? m.name() : m.display_name();
  out.layers = m.layers();
  out.d_model = m.d_model();
  out.d_ffn = m.d_ffn();
  out.experts = std::max(1, m.experts());
  out.top_k = std::max(1, m.top_k());
  out.ffn_type = m.ffn_type() == proto::ModelSpec::UP_DOWN ? FfnType::kUpDown : FfnType::kGated;
  out.activation = m.activation();
  out.heads = m.heads();
  out.kv_heads = m.kv_heads();
  out.head_dim = m.head_dim();
  out.vocab = m.vocab();
  out.tied_embeddings = m.tied_embeddings();
  if (m.context() > 0) out.context = m.context();
  out.quantization = FromProto(m.quantization());
  out.predictor_rank = m.predictor_rank();
  out.predictor_bytes = m.predictor_bytes();
  out.runtime_bytes = m.runtime_bytes();
  out.gate_threshold = m.gate_threshold();
  out.generator = FromProto(m.generator());
  out.sources = m.sources();
  return out;
}

}  // namespace

absl::StatusOr<ModelSpec> ModelCatalog::Parse(const std::string& text, const std::string& source) {
  proto::ModelSpec proto;
  if (absl::Status s = ParseTextProto(text, source, &proto); !s.ok()) return s;
  ModelSpec spec = FromProto(proto);
  if (absl::Status s = spec.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  return spec;
}

const ModelCatalog& ModelCatalog::Builtin() {
  static const ModelCatalog* catalog = [] {
    auto* c = new ModelCatalog;
    for (int i = 0; i < kModelFiles_count; ++i) {
      absl::StatusOr<ModelSpec> spec = Parse(kModelFiles[i].contents, kModelFiles[i].name);
      if (!spec.ok()) {
        std::fprintf(stderr, "built-in model catalog is broken: %s\n",
                     std::string(spec.status().message()).c_str());
        std::abort();
      }
      c->models_.Add(*std::move(spec));
    }
    return c;
  }();
  return *catalog;
}

absl::StatusOr<ModelSpec> LoadModel(const std::string& name_or_path) {
  if (NamesAFile(name_or_path)) {
    absl::StatusOr<std::string> text = ReadWholeFile(name_or_path, "model file");
    if (!text.ok()) return text.status();
    return ModelCatalog::Parse(*text, name_or_path);
  }
  return ModelCatalog::Builtin().Find(name_or_path);
}

}  // namespace sparseflash
