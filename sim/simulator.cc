#include "sim/simulator.h"

#include "absl/strings/str_cat.h"
#include "engine/access_profile.h"
#include "engine/model_bytes.h"
#include "engine/token_source.h"
#include "sim/event_queue.h"
#include "sim/sim_compute.h"
#include "sim/sim_flash.h"
#include "traces/generator.h"

namespace sparseflash {
namespace {

class SimClock : public Clock {
 public:
  explicit SimClock(const EventQueue* q) : q_(q) {}
  Nanos Now() const override { return q_->now(); }

 private:
  const EventQueue* q_;
};

// Opens the run's tokens (twice more when a profile or an oracle is needed).
class Sources {
 public:
  explicit Sources(const SimulationConfig& c) : c_(c) {}
  absl::StatusOr<std::unique_ptr<TokenSource>> Run() const {
    if (c_.trace_path.empty()) return MakeGeneratorSource(c_.model, c_.seed, c_.tokens);
    return OpenTraceSource(c_.trace_path);
  }
  // The offline profile: for a generated trace, the generator's long-run
  // activation probabilities (what profiling very many tokens converges to);
  // a recorded trace is its own profile.
  absl::StatusOr<ActivationProfile> Profile(const NeuronIndexer& indexer, AccessSet set) const {
    if (c_.trace_path.empty()) {
      TraceGenerator generator(c_.model, {.seed = c_.seed, .tokens = 0});
      return ActivationProfile::FromProbabilities(generator.ExpectedActivity());
    }
    absl::StatusOr<std::unique_ptr<TokenSource>> source = OpenTraceSource(c_.trace_path);
    if (!source.ok()) return source.status();
    return ActivationProfile::Collect(**source, indexer, set);
  }

 private:
  const SimulationConfig& c_;
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

// A token source that stops after `limit` tokens.
class Limited : public TokenSource {
 public:
  Limited(std::unique_ptr<TokenSource> inner, uint64_t limit)
      : inner_(std::move(inner)), limit_(limit) {}
  const TraceHeader& header() const override { return inner_->header(); }
  absl::StatusOr<bool> Next(TokenActivations* t) override {
    if (done_ >= limit_) return false;
    ++done_;
    return inner_->Next(t);
  }

 private:
  std::unique_ptr<TokenSource> inner_;
  uint64_t limit_, done_ = 0;
};

// Advances the Belady oracle's clock as the engine takes tokens.
class OracleClock : public TokenSource {
 public:
  OracleClock(TokenSource* inner, TraceOracle* oracle) : inner_(inner), oracle_(oracle) {}
  const TraceHeader& header() const override { return inner_->header(); }
  absl::StatusOr<bool> Next(TokenActivations* t) override {
    if (oracle_) oracle_->SetToken(token_++);
    return inner_->Next(t);
  }

 private:
  TokenSource* inner_;
  TraceOracle* oracle_;
  uint32_t token_ = 0;
};

}  // namespace

absl::StatusOr<SimulationResult> Simulate(const SimulationConfig& c) {
  if (absl::Status s = c.device.Validate(c.device.name); !s.ok()) return s;
  if ((c.memory_bytes >= 0) == (c.ffn_resident >= 0)) {
    return absl::InvalidArgumentError("give exactly one of --memory and --ffn-resident");
  }
  Sources sources(c);
  absl::StatusOr<std::unique_ptr<TokenSource>> run = sources.Run();
  if (!run.ok()) return run.status();
  const std::string origin = c.trace_path.empty() ? "generated trace" : c.trace_path;
  if (absl::Status s = CheckShape((*run)->header(), c.model, origin); !s.ok()) return s;
  const TraceHeader header = (*run)->header();
  const uint64_t tokens =
      c.trace_path.empty() ? c.tokens : std::min<uint64_t>(c.tokens, header.tokens);
  const AccessSet set = header.has_predicted ? AccessSet::kPredicted : AccessSet::kActive;
  NeuronIndexer indexer(c.model.layers, c.model.experts, c.model.d_ffn);

  absl::StatusOr<ActivationProfile> profile = sources.Profile(indexer, set);
  if (!profile.ok()) return profile.status();
  std::unique_ptr<TraceOracle> oracle;
  if (c.policy == "belady") {
    absl::StatusOr<std::unique_ptr<TokenSource>> future = sources.Run();
    if (!future.ok()) return future.status();
    Limited limited(*std::move(future), tokens);
    absl::StatusOr<std::unique_ptr<TraceOracle>> made = TraceOracle::Collect(limited, indexer, set);
    if (!made.ok()) return made.status();
    oracle = *std::move(made);
  }

  StrategyContext ctx;
  ctx.model = c.model;
  ctx.bytes = ComputeModelBytes(c.model);
  ctx.trace = header;
  ctx.memory_bytes = c.memory_bytes;
  ctx.ffn_resident = c.ffn_resident;
  ctx.policy = c.policy;
  ctx.threads = c.threads;
  ctx.prompt_tokens = c.prompt_tokens;
  ctx.decode_tokens = static_cast<int>(tokens);
  ctx.cpu_cores = c.device.total_cores();
  ctx.npu_present = c.device.npu.present;
  ctx.profile = &*profile;
  ctx.oracle = oracle.get();
  ctx.seed = c.seed;
  StrategyOptions options;
  if (absl::Status s = StrategyOptions::Parse(c.options, &options); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy(c.strategy, options, ctx);
  if (!strategy.ok()) return strategy.status();

  SimulationResult result;
  result.resources = (*strategy)->resources();
  result.memory = (*strategy)->memory();
  result.options = options.used();
  EventQueue queue;
  if (c.event_log) queue.EnableLog();
  SimClock clock(&queue);
  absl::StatusOr<std::unique_ptr<SimComputeBackend>> compute =
      SimComputeBackend::Create(&queue, c.device, result.resources, c.timeline);
  if (!compute.ok()) return compute.status();
  std::string io_class = result.resources.io_core_class;
  if (io_class.empty() && (*compute)->cpu_workers() > 0) io_class = (*compute)->worker_class(0);
  SimFlashDevice flash(&queue, c.device, io_class, c.timeline, result.resources.io_issuers);
  Limited limited(*std::move(run), tokens);
  OracleClock source(&limited, oracle.get());
  Engine engine(Env{&clock, &flash, compute->get()}, strategy->get(), &source,
                EngineOptions{.prompt_tokens = c.prompt_tokens, .max_tokens = tokens});
  if (c.timeline) {
    engine.set_observer([&](int64_t, NodeId, const WorkNode&) {});
  }
  engine.Start();
  uint64_t reported = 0;
  while (!queue.empty() && !engine.finished()) {
    queue.RunUntil(queue.now() + Milliseconds(100));
    if (c.progress && engine.record().tokens.size() != reported) {
      reported = engine.record().tokens.size();
      c.progress(reported, tokens);
    }
  }
  if (!engine.status().ok()) return engine.status();
  if (!engine.finished()) return absl::InternalError("simulation stalled: no event left");
  result.record = engine.record();
  result.events = queue.events_run();
  result.event_log = queue.log();
  result.worker_busy = (*compute)->busy_times();
  return result;
}

}  // namespace sparseflash
