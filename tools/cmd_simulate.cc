// sparseflash simulate: one trace-driven simulated run, printed as text or JSON.
#include <algorithm>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/heap_reuse.h"
#include "common/units.h"
#include "common/worker_pool.h"
#include "devices/device_catalog.h"
#include "engine/run_summary.h"
#include "sim/simulator.h"
#include "tools/cli.h"
#include "tools/run_store.h"
#include "tools/validation.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

struct SimulateArgs {
  std::string device, model, trace, strategy = "powerinfer2", policy, memory, chrome_trace, db;
  std::string chrome_trace_tokens = "0:16";
  std::string profile = "generator";
  double ffn_resident = -1;
  int prompt_tokens = 0, threads = 0;
  uint64_t tokens = 256, seed = 1;
  std::vector<std::string> options;
  bool json = false;
};

// "A:B" with -1 <= A < B.
absl::StatusOr<std::pair<int64_t, int64_t>> ParseStepRange(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  int64_t a = 0, b = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &a) || !absl::SimpleAtoi(parts[1], &b) ||
      a < -1 || b <= a) {
    return absl::InvalidArgumentError(absl::StrCat("--chrome-trace-tokens '", text,
                                                   "': expected A:B with -1 <= A < B, e.g. 0:16"));
  }
  return std::make_pair(a, b);
}

void PrintText(const SimulationConfig& c, const SimulationResult& r, const RunSummary& s) {
  absl::PrintF("%s on %s, %s, %llu tokens\n", c.strategy, c.device.name, c.model.name,
               static_cast<unsigned long long>(s.tokens));
  absl::PrintF("  memory: resident %s + cache %s\n", FormatBytes(r.memory.resident_bytes),
               FormatBytes(r.memory.cache_bytes));
  absl::PrintF("  decode            %.2f tokens/s\n", s.decode_tokens_per_s);
  absl::PrintF("  time to first     %.1f ms\n", s.ttft_ms);
  absl::PrintF("  latency p50/p90/p99  %.1f / %.1f / %.1f ms\n", s.latency_ms_p50, s.latency_ms_p90,
               s.latency_ms_p99);
  absl::PrintF("  cache hit rate    %.2f %% (per-token miss rate p99 %.2f %%)\n", 100 * s.hit_rate,
               100 * s.miss_rate_p99);
  absl::PrintF(
      "  flash per token   %s at %.0f MB/s, %.1f reads offered; device busy %.1f ms/token\n",
      FormatBytes(static_cast<int64_t>(s.flash_bytes_per_token)),
      s.flash_throughput_bytes_per_s / 1e6, s.flash_reads_offered, s.io_ms_per_token);
  absl::PrintF("  I/O stall share   %.1f %% of the critical path\n", 100 * s.io_stall_share);
  if (r.energy_j_per_token > 0) {
    absl::PrintF("  energy            %.3f J/token (%.2f W; unit powers from the device profile)\n",
                 r.energy_j_per_token, r.energy_j_per_token * s.decode_tokens_per_s);
  }
  absl::PrintF("  mean token (ms):");
  for (int p = 0; p < kBreakdownParts; ++p) {
    absl::PrintF(" %s %.2f", BreakdownName(p), s.breakdown_ms[p]);
  }
  absl::PrintF("\n  options: ");
  std::vector<std::string> kv;
  for (const auto& [k, v] : r.options) kv.push_back(absl::StrCat(k, "=", v));
  absl::PrintF("%s\n", absl::StrJoin(kv, " "));
}

// The published figures the run repeats (validation/*.textproto), each beside
// the run's own; or, when it repeats none, the entries on its device, model and
// strategy.
void PrintPublished(const std::vector<ValidationResult>& published,
                    const std::vector<std::string>& near, size_t catalog_size, uint64_t tokens,
                    bool trace_file) {
  if (trace_file) {
    absl::PrintF(
        "  published         none: the catalog's figures are simulated on generated traces, "
        "not on a trace file\n");
    return;
  }
  if (published.empty() && near.empty()) {
    absl::PrintF(
        "  published         none for this configuration (`sparseflash validate` checks %zu "
        "published figures)\n",
        catalog_size);
    return;
  }
  if (published.empty()) {
    absl::PrintF(
        "  published         none for this configuration; for this device, model and strategy: "
        "%s (`sparseflash validate --only ID`)\n",
        absl::StrJoin(near, ", "));
    return;
  }
  for (const ValidationResult& p : published) {
    const ValidationCase& e = *p.entry;
    absl::PrintF(
        "  published         %s %s in %s (%s); this run %s, %+.1f %% (%s validate's tolerance of "
        "%.0f %%)\n",
        MetricName(e.metric), FormatMetricValue(e.metric, e.published), e.source, e.id,
        FormatMetricValue(e.metric, p.simulated), 100 * p.error, p.within() ? "within" : "outside",
        100 * e.tolerance);
    if (e.config.tokens != tokens) {
      absl::PrintF("                    (this run decodes %llu tokens, validate %llu)\n",
                   static_cast<unsigned long long>(tokens),
                   static_cast<unsigned long long>(e.config.tokens));
    }
    if (!p.within()) absl::PrintF("                    why: %s\n", p.Explanation());
  }
}

int RunSimulate(const SimulateArgs& a) {
  TuneHeapForSimulation(1);  // its per-neuron arrays in huge pages: a third fewer seconds
  SimulationConfig c;
  absl::StatusOr<DeviceProfile> device = LoadDevice(a.device);
  if (!device.ok()) return ReportError(device.status());
  absl::StatusOr<ModelSpec> model = LoadModel(a.model);
  if (!model.ok()) return ReportError(model.status());
  c.device = *device;
  c.model = *model;
  c.trace_path = a.trace;
  c.strategy = a.strategy;
  c.options = a.options;
  c.policy = a.policy;
  if (!a.memory.empty()) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(a.memory);
    if (!bytes.ok()) return ReportError(bytes.status());
    c.memory_bytes = *bytes;
  }
  c.ffn_resident = a.ffn_resident;
  c.prompt_tokens = a.prompt_tokens;
  c.tokens = a.tokens;
  c.threads = a.threads;
  c.seed = a.seed;
  // One core is the simulation's own; the generator runs ahead of it on the
  // others (with all of them, it slowed the simulation it feeds by about 10 %).
  c.generator_threads = std::max(1, HardwareThreads() - 1);
  // Its streams are made while the simulation builds its offline profile and
  // cache, which leaves the simulation waiting for the first token: with every core.
  c.generator_setup_threads = HardwareThreads();
  c.profile = a.profile;
  Timeline timeline;
  if (!a.chrome_trace.empty()) {
    absl::StatusOr<std::pair<int64_t, int64_t>> steps = ParseStepRange(a.chrome_trace_tokens);
    if (!steps.ok()) return ReportError(steps.status());
    timeline.SetSteps(steps->first, steps->second);
    c.timeline = &timeline;
  }
  if (!a.json)
    c.progress = [](uint64_t done, uint64_t total) { Progress("simulate", done, total); };
  absl::StatusOr<SimulationResult> r = Simulate(c);
  if (!r.ok()) return ReportError(r.status());
  RunSummary s = Summarize(r->record);
  if (!r->warning.empty()) std::fprintf(stderr, "warning: %s\n", r->warning.c_str());
  if (!a.chrome_trace.empty()) {
    if (absl::Status st = timeline.WriteChromeTrace(a.chrome_trace); !st.ok()) {
      return ReportError(st);
    }
  }
  const nlohmann::ordered_json figures = RunFigures(c, s, r->memory, r->options, ExtrasOf(*r));
  if (!a.db.empty()) {
    absl::StatusOr<int64_t> id =
        StoreRun(a.db, MakeRunRow(MakeRunConfig(c), "simulated", figures, r->record));
    if (!id.ok()) return ReportError(id.status());
    std::fprintf(stderr, "stored as run %lld in %s\n", static_cast<long long>(*id), a.db.c_str());
  }
  absl::StatusOr<std::vector<ValidationCase>> catalog = LoadValidationCatalog({});
  if (!catalog.ok()) return ReportError(catalog.status());
  const std::vector<ValidationResult> published = PublishedForRun(*catalog, c, *r);
  if (a.json) {
    nlohmann::ordered_json out = figures;
    out["published"] = nlohmann::ordered_json::array();
    for (const ValidationResult& p : published) out["published"].push_back(ValidationResultJson(p));
    std::cout << out.dump(2) << "\n";
  } else {
    PrintText(c, *r, s);
    PrintPublished(published, EntriesNear(*catalog, c), catalog->size(), c.tokens,
                   !c.trace_path.empty());
  }
  if (!a.chrome_trace.empty()) {
    std::fprintf(stderr,
                 "wrote %s (%zu events of tokens %s); open it in ui.perfetto.dev or "
                 "chrome://tracing\n",
                 a.chrome_trace.c_str(), timeline.size(), a.chrome_trace_tokens.c_str());
  }
  return 0;
}

}  // namespace

void AddSimulateCommand(CLI::App& app, Dispatch& dispatch) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* sim = app.add_subcommand(
      "simulate", "Trace-driven simulation of one configuration (device, model, strategy, budget)");
  sim->add_option("--device", a->device, "Device: catalog name or profile .textproto")->required();
  sim->add_option("--model", a->model, "Model: catalog name or .textproto")->required();
  sim->add_option("--trace", a->trace,
                  "Trace file (default: the model's synthetic trace, generated with --seed)");
  sim->add_option("--strategy", a->strategy, "powerinfer2 | llmflash | llamacpp | in_memory")
      ->capture_default_str();
  auto* memory = sim->add_option("--memory", a->memory,
                                 "Whole-process memory budget (e.g. 7GiB, 6.7GB, 512MiB)");
  auto* ffn = sim->add_option("--ffn-resident", a->ffn_resident,
                              "Size the cache to hold this fraction of the FFN weights (0..1)")
                  ->check(InRange(0, 1));
  memory->excludes(ffn);
  ffn->excludes(memory);
  sim->add_option("--policy", a->policy,
                  "Cache policy: lru fifo lfu s3fifo sieve window static belady "
                  "(default: the strategy's)");
  sim->add_option("--prompt-tokens", a->prompt_tokens, "Prompt length to prefill")
      ->capture_default_str()
      ->check(InRange(0, kMaxTokensOption));
  sim->add_option("--tokens", a->tokens, "Decode tokens (at most the trace's)")
      ->capture_default_str()
      ->check(InRange(1, kMaxTokensOption));
  sim->add_option("--threads", a->threads, "Compute threads (default: the strategy's)")
      ->check(InRange(1, kMaxThreads));
  sim->add_option("--option", a->options,
                  "Strategy option key=value (repeatable), e.g. pipeline=matrix, window=5");
  sim->add_option("--profile", a->profile,
                  "Offline activation profile (hot neurons): generator (the model's generator "
                  "profile, disjoint from the run's tokens), oracle (the run's own tokens: an "
                  "upper bound), or a trace file to profile")
      ->capture_default_str();
  sim->add_option("--seed", a->seed, "Seed of the generated trace and the predictor model")
      ->capture_default_str()
      ->check(InRange(0, 1.8e19));
  sim->add_flag("--json", a->json, "Print one JSON object");
  sim->add_option("--db", a->db, "Also store the run in this results database (SQLite)");
  sim->add_option("--chrome-trace", a->chrome_trace,
                  "Write the run's timeline as Chrome-trace JSON to this file");
  sim->add_option("--chrome-trace-tokens", a->chrome_trace_tokens,
                  "Decode tokens A:B (from A, before B) the timeline keeps; -1 is the prompt")
      ->capture_default_str();
  sim->callback([&dispatch, a] {
    dispatch.action = [a] {
      if (a->memory.empty() && a->ffn_resident < 0) {
        return ReportError(
            absl::InvalidArgumentError("simulate needs --memory BYTES or --ffn-resident FRACTION"));
      }
      return RunSimulate(*a);
    };
  });
}

}  // namespace sparseflash::cli
