#include "engine/run_setup.h"

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "engine/model_bytes.h"
#include "traces/generator.h"

namespace sparseflash {
namespace {

absl::Status CheckShape(const TraceHeader& h, const ModelSpec& m, const std::string& origin);

// At most `limit` tokens; advances the Belady oracle's clock as tokens are taken.
class RunSource : public TokenSource {
 public:
  RunSource(std::unique_ptr<TokenSource> inner, uint64_t limit, TraceOracle* oracle)
      : inner_(std::move(inner)), limit_(limit), oracle_(oracle) {}
  const TraceHeader& header() const override { return inner_->header(); }
  absl::StatusOr<const TokenActivations*> Next() override {
    if (done_ >= limit_) return nullptr;
    if (oracle_) oracle_->SetToken(static_cast<uint32_t>(done_));
    ++done_;
    return inner_->Next();
  }

 private:
  std::unique_ptr<TokenSource> inner_;
  uint64_t limit_, done_ = 0;
  TraceOracle* oracle_;
};

// Opens the run's tokens, and its offline profile.
class Sources {
 public:
  explicit Sources(const RunSetupConfig& c) : c_(c) {}
  absl::StatusOr<std::unique_ptr<TokenSource>> Run() const {
    if (c_.decoded) return MakeMemorySource(c_.decoded, c_.tokens);
    if (c_.trace_path.empty())
      return MakeGeneratorSource(c_.model, c_.seed, c_.tokens, c_.generator_threads,
                                 c_.generator_setup_threads);
    return OpenTraceSourceReadAhead(c_.trace_path);
  }
  // The offline profile, from a source disjoint from the run's tokens unless
  // "oracle" was asked for: the generator's long-run activation probabilities
  // (what profiling very many tokens converges to), or another trace.
  absl::StatusOr<std::shared_ptr<const ActivationProfile>> Profile(const NeuronIndexer& indexer,
                                                                   AccessSet set) const {
    const std::string source = ProfileSource(c_.profile);
    if (source == "generator") {
      if (absl::Status s = CheckGeneratorKnowsTheTrace(); !s.ok()) return s;
      if (c_.decoded) return c_.decoded->GeneratorProfile(c_.model);
      return std::make_shared<const ActivationProfile>(ActivationProfile::OfGenerator(c_.model));
    }
    absl::StatusOr<std::unique_ptr<TokenSource>> tokens =
        source == "oracle" ? Run() : OpenTraceSource(source);
    if (!tokens.ok()) return tokens.status();
    if (source != "oracle") {
      const std::string origin = absl::StrCat(source, " (the offline profile)");
      if (absl::Status s = CheckShape((*tokens)->header(), c_.model, origin); !s.ok()) return s;
    }
    auto collect = [&] { return ActivationProfile::Collect(**tokens, indexer, set); };
    if (source != "oracle" && c_.profiles != nullptr) {
      return c_.profiles->Get(source, indexer.key_space(), set, collect);
    }
    absl::StatusOr<ActivationProfile> profile = collect();
    if (!profile.ok()) return profile.status();
    return std::make_shared<const ActivationProfile>(*std::move(profile));
  }
  // The future accesses of the run's first `tokens` tokens (Belady): a
  // trace decoded in memory keeps them for every run on it.
  absl::StatusOr<std::shared_ptr<const TraceFuture>> Future(const NeuronIndexer& indexer,
                                                            AccessSet set, uint64_t tokens) const {
    if (c_.decoded) return c_.decoded->Future(indexer, set, tokens);
    absl::StatusOr<std::unique_ptr<TokenSource>> run = Run();
    if (!run.ok()) return run.status();
    RunSource limited(*std::move(run), tokens, nullptr);
    return TraceFuture::Collect(limited, indexer, set);
  }

 private:
  // The generator profile ranks the neurons the model's generator makes hot: a
  // recorded or imported trace's hot neurons are others, and a profile of them
  // would make a hot region of neurons picked at random.
  absl::Status CheckGeneratorKnowsTheTrace() const {
    if (c_.trace_path.empty()) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<TokenSource>> run = OpenTraceSource(c_.trace_path);
    if (!run.ok()) return run.status();
    const TraceHeader& h = (*run)->header();
    if (GeneratedFor(h, c_.model)) return absl::OkStatus();
    const std::string tool = h.provenance.tool.empty() ? "an unnamed tool" : h.provenance.tool;
    const std::string what =
        h.provenance.tool == kGeneratorTool && h.model.name == c_.model.name
            ? absl::StrCat("a trace of '", h.model.name, "' generated with another profile (",
                           kHotNeuronsParameter, " ",
                           h.provenance.parameters.at(kHotNeuronsParameter), " in the file, ",
                           HotNeuronFingerprint(c_.model),
                           " for the model: e.g. trace gen "
                           "--profile), not by the model's own generator")
            : absl::StrCat("a trace of '", h.model.name, "' made by ", tool,
                           ", not by the generator of '", c_.model.name, "'");
    return absl::InvalidArgumentError(absl::StrCat(
        c_.trace_path, ": ", what,
        ", so the generator's hot neurons are not its own. Give its offline profile: "
        "--profile FILE (a trace of the same model on other text), or --profile oracle (this "
        "trace's own tokens: an upper bound)"));
  }

  const RunSetupConfig& c_;
};

absl::Status CheckShape(const TraceHeader& h, const ModelSpec& m, const std::string& origin) {
  const TraceModelShape want = ShapeOf(m);
  if (h.model.layers != want.layers || h.model.d_ffn != want.d_ffn ||
      h.model.experts != want.experts) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": trace is for '", h.model.name, "' (", h.model.layers, " layers, d_ffn ",
        h.model.d_ffn, ", ", h.model.experts, " experts) but the model is '", m.name, "' (",
        want.layers, " layers, d_ffn ", want.d_ffn, ", ", want.experts, " experts)"));
  }
  return absl::OkStatus();
}

// Ranges of the numbers a run is given (from the command line, a sweep or code).
absl::Status CheckRanges(const RunSetupConfig& c) {
  auto bad = [](const std::string& what) { return absl::InvalidArgumentError(what); };
  if ((c.memory_bytes >= 0) == (c.ffn_resident >= 0)) {
    return bad("give exactly one of --memory and --ffn-resident");
  }
  if (c.memory_bytes > kMaxByteSize) {
    return bad(absl::StrCat("memory ", c.memory_bytes, " bytes is over the limit of ",
                            FormatBytes(kMaxByteSize)));
  }
  if (c.memory_bytes < 0 && !(c.ffn_resident <= 1)) {
    return bad(absl::StrCat("ffn-resident ", c.ffn_resident, " is not in [0, 1]"));
  }
  if (c.tokens < 1 || c.tokens > kMaxRunTokens) {
    return bad(absl::StrCat("tokens ", c.tokens, " is not in [1, ", kMaxRunTokens, "]"));
  }
  if (c.prompt_tokens < 0 || uint64_t(c.prompt_tokens) > kMaxRunTokens) {
    return bad(
        absl::StrCat("prompt tokens ", c.prompt_tokens, " is not in [0, ", kMaxRunTokens, "]"));
  }
  if (c.threads < 0 || c.threads > kMaxThreads) {
    return bad(absl::StrCat("threads ", c.threads, " is not in [0, ", kMaxThreads,
                            "] (0 = the strategy's default)"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ProfileSource(const std::string& profile) {
  return profile.empty() ? "generator" : profile;
}

absl::StatusOr<RunSetup> PrepareRun(const RunSetupConfig& c) {
  if (absl::Status s = CheckRanges(c); !s.ok()) return s;
  Sources sources(c);
  absl::StatusOr<std::unique_ptr<TokenSource>> run = sources.Run();
  if (!run.ok()) return run.status();
  const std::string origin = c.trace_path.empty() ? "generated trace" : c.trace_path;
  if (absl::Status s = CheckShape((*run)->header(), c.model, origin); !s.ok()) return s;
  RunSetup setup;
  setup.header = (*run)->header();
  setup.tokens =
      c.trace_path.empty() ? c.tokens : std::min<uint64_t>(c.tokens, setup.header.tokens);
  const AccessSet set = setup.header.has_predicted ? AccessSet::kPredicted : AccessSet::kActive;
  NeuronIndexer indexer(c.model.layers, c.model.experts, c.model.d_ffn);
  absl::StatusOr<std::shared_ptr<const ActivationProfile>> profile = sources.Profile(indexer, set);
  if (!profile.ok()) return profile.status();
  setup.profile = *std::move(profile);
  if (c.policy == "belady") {
    absl::StatusOr<std::shared_ptr<const TraceFuture>> future =
        sources.Future(indexer, set, setup.tokens);
    if (!future.ok()) return future.status();
    setup.oracle = std::make_unique<TraceOracle>(*std::move(future));
  }
  StrategyContext ctx;
  ctx.model = c.model;
  ctx.bytes = ComputeModelBytes(c.model);
  ctx.trace = setup.header;
  ctx.memory_bytes = c.memory_bytes;
  ctx.ffn_resident = c.ffn_resident;
  ctx.policy = c.policy;
  ctx.threads = c.threads;
  ctx.prompt_tokens = c.prompt_tokens;
  ctx.decode_tokens = static_cast<int>(setup.tokens);
  ctx.cpu_cores = c.cpu_cores;
  ctx.npu_present = c.npu_present;
  ctx.npu_cpu_rate_ratio = c.npu_cpu_rate_ratio;
  ctx.page_cache = c.page_cache;
  ctx.read_ahead_kb = c.read_ahead_kb;
  ctx.max_request_kb = c.max_request_kb;
  ctx.profile = setup.profile.get();
  ctx.oracle = setup.oracle.get();
  ctx.seed = c.seed;
  ctx.sharing = c.sharing;
  StrategyOptions options;
  if (absl::Status s = StrategyOptions::Parse(c.options, &options); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy(c.strategy, options, ctx);
  if (!strategy.ok()) return strategy.status();
  setup.strategy = *std::move(strategy);
  setup.options = options.used();
  setup.source = std::make_unique<RunSource>(*std::move(run), setup.tokens, setup.oracle.get());
  return setup;
}

}  // namespace sparseflash
