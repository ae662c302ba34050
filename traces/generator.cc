#include "traces/generator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "traces/read_ahead_generator.h"
#include "traces/skew.h"
#include "traces/trace_writer.h"

namespace sparseflash {

namespace {

// The slot of a layer's expert in the seeds of its stream and router.
uint64_t StreamSlot(int layer, int expert) { return uint64_t(layer) * 1024 + expert; }
uint64_t RouterSlot(int layer) { return 0x5eed0000 + layer; }
// The slot of the draws that make each token steady or shifting.
constexpr uint64_t kTokenRegimeSlot = 0x70ce0000;

// The firing probabilities of a layer's neurons (each expert's alike), hottest
// first: the layer's active ratio and skew.
std::vector<double> PropensitiesByRank(const ModelSpec& model, int layer) {
  const GeneratorProfile& g = model.generator;
  const int n = model.d_ffn;
  const double ratio = g.layer_active_ratio[layer];
  return g.layer_skew.empty() ? PropensitiesPowerLaw(n, ratio, g.top80_share)
                              : PropensitiesFromAnchors(
                                    n, ratio, g.layer_skew[g.layer_skew.size() == 1 ? 0 : layer]);
}

// Each neuron's true firing probability in one stream: its layer's
// probabilities by rank, scattered over the index space by a per-stream
// permutation (hot neurons are a property of the model: `identity` is the
// stream's identity seed).
std::vector<double> NeuronPropensities(const std::vector<double>& by_rank, uint64_t identity) {
  const int n = static_cast<int>(by_rank.size());
  Random rng(MixSeed(identity, 0xa11ce));
  std::vector<uint32_t> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  for (int i = n - 1; i > 0; --i) std::swap(order[i], order[rng.Below(i + 1)]);
  std::vector<double> propensity(n);
  for (int r = 0; r < n; ++r) propensity[order[r]] = by_rank[r];
  return propensity;
}

std::unique_ptr<ExpertRouter> MakeRouter(const ModelSpec& model, int layer, uint64_t seed) {
  const GeneratorProfile& g = model.generator;
  const uint64_t identity = ModelIdentitySeed(model.name);
  return std::make_unique<ExpertRouter>(model.experts, model.top_k, g.expert_popularity_skew,
                                        g.expert_persistence, MixSeed(identity, RouterSlot(layer)),
                                        MixSeed(seed, RouterSlot(layer)));
}

}  // namespace

TraceModelShape ShapeOf(const ModelSpec& model) {
  return {model.name,    model.layers, model.d_ffn,
          model.experts, model.top_k,  model.ffn_type == FfnType::kGated};
}

TraceGenerator::~TraceGenerator() = default;

TraceGenerator::TraceGenerator(const ModelSpec& model, const GeneratorOptions& options)
    : model_(model),
      options_(options),
      token_regimes_(MixSeed(options.seed, kTokenRegimeSlot)),
      pool_(std::clamp(options.threads, 1, model.layers)) {
  const GeneratorProfile& g = model.generator;
  header_.model = ShapeOf(model);
  header_.tokens = options.tokens;
  header_.has_predicted = options.with_predicted && g.predicted_ratio > 0;
  header_.has_gate_only = model.ffn_type == FfnType::kGated && g.gate_only_ratio > 0;
  header_.provenance.generator = g.name;
  header_.provenance.seed = options.seed;
  header_.provenance.tool = kGeneratorTool;
  header_.provenance.parameters = {{"persistence", absl::StrCat(g.persistence)},
                                   {"persistence_spread", absl::StrCat(g.persistence_spread)},
                                   {"persistence_cold", absl::StrCat(g.persistence_cold)},
                                   {"coactivation", absl::StrCat(g.coactivation)},
                                   {"predicted_ratio", absl::StrCat(g.predicted_ratio)},
                                   {"predictor_recall", absl::StrCat(g.predictor_recall)},
                                   {"gate_only_ratio", absl::StrCat(g.gate_only_ratio)},
                                   {"expert_persistence", absl::StrCat(g.expert_persistence)},
                                   {"reuse_swing", absl::StrCat(g.reuse_swing)},
                                   {"sources", g.sources},
                                   {kHotNeuronsParameter, HotNeuronFingerprint(model)}};
}

void TraceGenerator::MakeStreams() {
  streams_.resize(size_t{static_cast<size_t>(model_.layers)} * model_.experts);
  if (model_.is_moe()) routers_.resize(model_.layers);
  const auto make = [&](int begin, int end) {
    for (int l = begin; l < end; ++l) MakeLayerStreams(l);
  };
  if (options_.setup_threads > pool_.threads()) {
    WorkerPool(std::min(options_.setup_threads, model_.layers)).ForEachChunk(model_.layers, make);
  } else {
    pool_.ForEachChunk(model_.layers, make);
  }
}

void TraceGenerator::MakeLayerStreams(int l) {
  // Which neurons and experts are hot is a property of the model, the same for
  // every seed (an offline profile must find the same hot neurons as the run);
  // the seed drives only the token-to-token dynamics.
  const uint64_t identity = ModelIdentitySeed(model_.name);
  const std::vector<double> by_rank = PropensitiesByRank(model_, l);
  for (int e = 0; e < model_.experts; ++e) {
    const uint64_t slot = StreamSlot(l, e);
    streams_[l * model_.experts + e] = std::make_unique<NeuronStream>(
        StreamParams(by_rank, MixSeed(identity, slot)), MixSeed(options_.seed, slot));
  }
  if (model_.is_moe()) routers_[l] = MakeRouter(model_, l, options_.seed);
}

uint64_t ModelIdentitySeed(const std::string& name) { return StableHash64(name); }

std::string HotNeuronFingerprint(const ModelSpec& model) {
  const GeneratorProfile& g = model.generator;
  // Every number in full (%.17g reads back exactly), each field tagged, so no
  // two different inputs print alike.
  std::string text = absl::StrFormat(
      "name=%s;layers=%d;d_ffn=%d;experts=%d;top_k=%d;top80=%.17g;experts_skew=%.17g", model.name,
      model.layers, model.d_ffn, model.experts, model.top_k, g.top80_share,
      g.expert_popularity_skew);
  absl::StrAppend(&text, ";ratios=");
  for (double r : g.layer_active_ratio) absl::StrAppendFormat(&text, "%.17g,", r);
  absl::StrAppend(&text, ";skew=");
  for (const std::vector<SkewAnchor>& layer : g.layer_skew) {
    for (const SkewAnchor& a : layer) {
      absl::StrAppendFormat(&text, "%.17g:%.17g,", a.neuron_fraction, a.activation_share);
    }
    absl::StrAppend(&text, "/");
  }
  return absl::StrFormat("%016x", StableHash64(text));
}

bool GeneratedFor(const TraceHeader& header, const ModelSpec& model) {
  if (header.provenance.tool != kGeneratorTool || header.model.name != model.name) return false;
  auto it = header.provenance.parameters.find(kHotNeuronsParameter);
  return it == header.provenance.parameters.end() || it->second == HotNeuronFingerprint(model);
}

NeuronStreamParams TraceGenerator::StreamParams(const std::vector<double>& by_rank,
                                                uint64_t identity) const {
  const GeneratorProfile& g = model_.generator;
  NeuronStreamParams p;
  p.propensity = NeuronPropensities(by_rank, identity);
  p.persistence = g.persistence;
  p.persistence_spread = g.persistence_spread;
  p.persistence_cold = g.persistence_cold;
  p.coactivation = g.coactivation;
  p.group_size = g.coactivation_group;
  p.predicted_ratio = header_.has_predicted ? g.predicted_ratio : 0;
  p.recall = g.predictor_recall;
  p.gate_only_ratio = header_.has_gate_only ? g.gate_only_ratio : 0;
  p.reuse_swing = g.reuse_swing;
  return p;
}

std::vector<float> ExpectedActivity(const ModelSpec& model) {
  const uint64_t identity = ModelIdentitySeed(model.name);
  std::vector<float> out;
  out.reserve(size_t{static_cast<size_t>(model.layers)} * model.experts * model.d_ffn);
  for (int l = 0; l < model.layers; ++l) {
    std::unique_ptr<ExpertRouter> router = model.is_moe() ? MakeRouter(model, l, 0) : nullptr;
    const std::vector<double> by_rank = PropensitiesByRank(model, l);
    for (int e = 0; e < model.experts; ++e) {
      const double share = router ? router->Share(e) : 1.0;
      for (double p : NeuronPropensities(by_rank, MixSeed(identity, StreamSlot(l, e)))) {
        out.push_back(static_cast<float>(p * share));
      }
    }
  }
  return out;
}

bool TraceGenerator::Next(TokenActivations* token) {
  if (next_token_ >= options_.tokens) return false;
  if (streams_.empty()) MakeStreams();
  token->token = next_token_++;
  // Steady or shifting, the same for every layer: a token that changes the
  // context changes what every layer keeps.
  shifting_ = (token_regimes_.Next() & 1) != 0;
  token->layers.resize(model_.layers);
  pool_.ForEachChunk(model_.layers, [&](int begin, int end) {
    for (int l = begin; l < end; ++l) StepLayer(l, &token->layers[l]);
  });
  return true;
}

void TraceGenerator::StepLayer(int l, LayerActivations* layer) {
  layer->layer = l;
  if (!model_.is_moe()) {
    layer->experts.resize(1);
    layer->experts[0].expert = 0;
    streams_[l]->Step(&layer->experts[0], shifting_);
    return;
  }
  const std::vector<uint32_t>& chosen = routers_[l]->Next();
  layer->experts.resize(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    // The next routed expert's first thresholds come from DRAM while this one steps.
    if (i + 1 < chosen.size()) {
      streams_[l * model_.experts + chosen[i + 1]]->PrefetchStep(shifting_);
    }
    layer->experts[i].expert = chosen[i];
    streams_[l * model_.experts + chosen[i]]->Step(&layer->experts[i], shifting_);
  }
}

}  // namespace sparseflash

namespace sparseflash {

absl::Status WriteGeneratedTrace(const ModelSpec& model, const GeneratorOptions& options,
                                 const std::string& path,
                                 const std::function<void(uint64_t)>& progress, bool overwrite) {
  // The next tokens are generated while this one is encoded and compressed.
  ReadAheadGenerator generator(model, options);
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer =
      TraceWriter::Create(path, generator.header(), {.overwrite = overwrite});
  if (!writer.ok()) return writer.status();
  while (const TokenActivations* token = generator.Next()) {
    if (absl::Status s = (*writer)->Append(*token); !s.ok()) return s;
    if (progress && (token->token + 1) % 16 == 0) progress(token->token + 1);
  }
  if (progress) progress(options.tokens);
  return (*writer)->Finish();
}

}  // namespace sparseflash
