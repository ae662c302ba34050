// Name -> factory table of strategies: a new strategy is one file and one line here.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/model_bytes.h"
#include "engine/strategies/strategies.h"
#include "traces/generator.h"

namespace sparseflash {
namespace {

struct Registration {
  const char* name;
  absl::StatusOr<std::unique_ptr<Strategy>> (*make)(StrategyOptions&, const StrategyContext&);
};

constexpr Registration kStrategies[] = {
    {"powerinfer2", MakePowerInfer2},
    {"llmflash", MakeLlmFlash},
    {"llamacpp", MakeLlamaCpp},
    {"in_memory", MakeInMemory},
};

}  // namespace

// --threads overrides the option, so the recorded option is the value used.
int ReadThreads(StrategyOptions& options, const StrategyContext& context, int fallback) {
  if (context.threads > 0) options.Set("threads", absl::StrCat(context.threads));
  return options.Int("threads", std::max(1, fallback), 1, kMaxThreads);
}

std::string ReadPolicy(StrategyOptions& options, const StrategyContext& context,
                       const std::string& fallback) {
  if (!context.policy.empty()) options.Set("policy", context.policy);
  return options.String("policy", fallback);
}

PredictorOptions ReadPredictorOptions(StrategyOptions& options, const StrategyContext& context) {
  PredictorOptions p;
  if (context.model.gate_threshold) {  // the gate itself says which neurons are active
    p.recall = 1;
    p.extra = 0;
  }
  p.recall = options.Double("predictor_recall", p.recall, 0.01, 1);
  p.extra = options.Double("predictor_extra", p.extra, 0, 100);
  p.seed = context.seed;
  return p;
}

namespace {
// True for attention read from flash, false for pinned in DRAM.
absl::StatusOr<bool> ParseAttentionInFlash(const std::string& where) {
  if (where == "dram" || where == "flash") return where == "flash";
  return absl::InvalidArgumentError(absl::StrCat(
      "'", where,
      "' is not one of dram, flash (where attention's weights live: pinned in DRAM, or read "
      "from flash one layer ahead of their use)"));
}
}  // namespace

LayerReads ReadAttentionPlacement(StrategyOptions& options, const ModelSpec& model,
                                  const ModelBytes& bytes) {
  if (!options.Parsed("attention", "dram", ParseAttentionInFlash)) return LayerReads{};
  return LayerReads{.bytes_per_layer = bytes.attention_bytes / model.layers,
                    .request_bytes = 512 * 1024,
                    .lookahead_layers = 1};
}

int64_t ResidentWithAttention(int64_t resident, const LayerReads& attention_reads,
                              const ModelBytes& bytes) {
  if (attention_reads.bytes_per_layer <= 0) return resident;
  return resident - bytes.attention_bytes + attention_reads.buffer_bytes();
}

std::vector<std::string> StrategyNames() {
  std::vector<std::string> names;
  for (const Registration& r : kStrategies) names.push_back(r.name);
  return names;
}

absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(const std::string& name,
                                                       StrategyOptions& options,
                                                       const StrategyContext& context) {
  for (const Registration& r : kStrategies) {
    if (name == r.name) return r.make(options, context);
  }
  return absl::NotFoundError(absl::StrCat(
      "unknown strategy '", name, "'; known strategies: ", absl::StrJoin(StrategyNames(), ", ")));
}

namespace {

// For resolving a "belady" run's options: a future where nothing recurs.
class NoFuture : public AccessOracle {
 public:
  uint32_t NextUse(CacheKey) const override { return ~uint32_t{0}; }
};

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ResolveStrategyOptions(
    const std::string& name, const StrategySettings& settings, const ModelSpec& model) {
  StrategyOptions options;
  if (absl::Status s = StrategyOptions::Parse(settings.options, &options); !s.ok()) return s;
  // Options do not depend on the layer count or FFN width (bundle sizes come from
  // d_model and the quantization), so a one-layer, 64-neuron stand-in resolves
  // them in microseconds instead of building a 47B model's cache.
  ModelSpec small = model;
  small.layers = 1;
  small.d_ffn = std::min(model.d_ffn, 64);
  small.generator.layer_active_ratio.resize(1, 0.1);
  StrategyContext ctx;
  ctx.model = small;
  ctx.bytes = ComputeModelBytes(small);
  ctx.trace.model = ShapeOf(small);
  ctx.memory_bytes = int64_t{1} << 50;  // every strategy fits
  ctx.decode_tokens = 1;
  ctx.policy = settings.policy;
  ctx.threads = settings.threads;
  ctx.cpu_cores = settings.cpu_cores;
  ctx.npu_present = settings.npu_present;
  ctx.page_cache = settings.page_cache;
  ctx.read_ahead_kb = settings.read_ahead_kb;
  ctx.max_request_kb = settings.max_request_kb;
  const ActivationProfile profile = ActivationProfile::FromProbabilities(
      std::vector<float>(static_cast<size_t>(small.layers * small.neurons_per_layer()), 0.1f));
  ctx.profile = &profile;
  const NoFuture no_future;
  if (settings.policy == "belady") ctx.oracle = &no_future;
  absl::StatusOr<std::unique_ptr<Strategy>> made = MakeStrategy(name, options, ctx);
  if (!made.ok() && !absl::IsResourceExhausted(made.status())) return made.status();
  return options.used();
}

absl::Status CheckStrategyOptions(const std::string& name, const std::vector<std::string>& items,
                                  const ModelSpec& model, bool npu_present) {
  return ResolveStrategyOptions(name, {.options = items, .npu_present = npu_present}, model)
      .status();
}

}  // namespace sparseflash
