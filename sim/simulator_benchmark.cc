// Whole-simulation speed: simulated decode tokens per second of wall time for
// TurboSparse-Mixtral-47B under powerinfer2 on the OnePlus 12, and for the
// other strategies on Mistral-7B. Each iteration is a full Simulate() (the
// offline profile, the strategy's setup and the run). BM_Simulate reads the
// trace from a file generated once; BM_SimulateDecoded from the trace held
// decoded in memory, as a sweep's runs share it (the speed targets' setting),
// after one untimed run that makes what a sweep's first run makes for all.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "common/heap_reuse.h"
#include "devices/device_catalog.h"
#include "engine/token_source.h"
#include "sim/simulator.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

std::string TracePath(const ModelSpec& model, uint64_t tokens) {
  std::string path = "/tmp/sf_bench_" + model.name + "_" + std::to_string(tokens) + ".trace";
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
    return path;
  }
  GeneratorOptions o{.seed = 1, .tokens = tokens};
  if (!WriteGeneratedTrace(model, o, path, nullptr).ok()) std::abort();
  return path;
}

SimulationConfig Config(const char* model_name, const char* strategy, uint64_t tokens) {
  SimulationConfig c;
  c.device = *LoadDevice("oneplus12");
  c.model = *LoadModel(model_name);
  c.strategy = strategy;
  c.ffn_resident = 0.5;
  c.tokens = tokens;
  if (std::string(strategy) == "in_memory") {
    c.ffn_resident = -1;
    c.memory_bytes = int64_t{19} << 30;
  }
  return c;
}

void Run(benchmark::State& state, const SimulationConfig& c) {
  for (auto _ : state) {
    absl::StatusOr<SimulationResult> r = Simulate(c);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(r->record.tokens.size());
  }
  state.counters["sim_tokens_per_s"] = benchmark::Counter(
      static_cast<double>(c.tokens * state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Simulate(benchmark::State& state, const char* model_name, const char* strategy) {
  SimulationConfig c = Config(model_name, strategy, 128);
  c.trace_path = TracePath(c.model, c.tokens);
  Run(state, c);
}

// `hot_share` (0-1): the whole FFN in memory, this share of it pinned in the
// hot region and the rest in the cold region's LRU; below 0, the default
// half of the FFN in memory. At 1 no neuron reaches the cache's policy (the
// planner's floor); at 0 every predicted neuron is an LRU hit.
void BM_SimulateDecoded(benchmark::State& state, const char* model_name, const char* strategy,
                        double hot_share = -1) {
  TuneHeapForSimulation(1);  // as a sweep does: its runs reuse each other's arrays
  SimulationConfig c = Config(model_name, strategy, 128);
  if (hot_share >= 0) {
    c.ffn_resident = 1.0;
    c.options.push_back("hot_share=" + std::to_string(hot_share));
  }
  absl::StatusOr<std::shared_ptr<const TokenTrace>> trace =
      GenerateTokenTrace(c.model, c.seed, c.tokens);
  if (!trace.ok()) std::abort();
  c.decoded = *std::move(trace);
  // One untimed run first: a sweep's runs share the decoded trace and the
  // offline profile memoized on it, so the timed runs start from both, as the
  // second and later runs of a sweep do.
  if (!Simulate(c).ok()) std::abort();
  Run(state, c);
}

BENCHMARK_CAPTURE(BM_Simulate, mixtral_powerinfer2, "turbosparse-mixtral-47b", "powerinfer2")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_Simulate, mistral_powerinfer2, "turbosparse-mistral-7b", "powerinfer2")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_Simulate, mistral_llmflash, "turbosparse-mistral-7b", "llmflash")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_Simulate, mistral_llamacpp, "turbosparse-mistral-7b", "llamacpp")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_Simulate, mistral_in_memory, "turbosparse-mistral-7b", "in_memory")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateDecoded, mixtral_powerinfer2, "turbosparse-mixtral-47b", "powerinfer2")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateDecoded, mistral_powerinfer2, "turbosparse-mistral-7b", "powerinfer2")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateDecoded, mixtral_all_hot, "turbosparse-mixtral-47b", "powerinfer2",
                  1.0)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateDecoded, mixtral_all_cold_hits, "turbosparse-mixtral-47b",
                  "powerinfer2", 0.0)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace sparseflash

BENCHMARK_MAIN();
