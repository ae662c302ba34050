// Trace encoding and decoding speed, in neuron ids per second, and trace
// generation speed, in tokens per second (with the generator's construction)
// and in time per token (without), and one chain step's speed in neurons per
// second.
#include "benchmark/benchmark.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/neuron_stream.h"
#include "traces/test_util.h"
#include "traces/trace_reader.h"

namespace sparseflash {
namespace {

const std::string& BenchTrace(uint64_t* ids) {
  static std::string path = testing::TempPath("bench.trace");
  static uint64_t count = [] {
    ModelSpec m = *ModelCatalog::Builtin().Find("bamboo-7b");
    (void)WriteGeneratedTrace(m, {.seed = 1, .tokens = 200}, path);
    auto reader = TraceReader::Open(path);
    uint64_t n = 0;
    (void)ForEachToken(**reader, [&](const TokenActivations& t) {
      for (const auto& l : t.layers)
        for (const auto& s : l.experts)
          n += s.active.size() + s.predicted.size() + s.gate_only.size();
    });
    return n;
  }();
  *ids = count;
  return path;
}

void BM_ReadTrace(benchmark::State& state) {
  uint64_t ids = 0;
  const std::string& path = BenchTrace(&ids);
  for (auto _ : state) {
    auto reader = TraceReader::Open(path);
    uint64_t sum = 0;
    (void)ForEachToken(**reader, [&](const TokenActivations& t) { sum += t.layers.size(); });
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * ids);
}
BENCHMARK(BM_ReadTrace)->Unit(benchmark::kMillisecond);

void BM_WriteTrace(benchmark::State& state) {
  uint64_t ids = 0;
  const std::string& path = BenchTrace(&ids);
  std::vector<TokenActivations> tokens;
  auto reader = TraceReader::Open(path);
  (void)ForEachToken(**reader, [&](const TokenActivations& t) { tokens.push_back(t); });
  std::string out = testing::TempPath("bench_out.trace");
  for (auto _ : state) {
    auto writer = TraceWriter::Create(out, (*reader)->header());
    for (const auto& t : tokens) (void)(*writer)->Append(t);
    (void)(*writer)->Finish();
  }
  state.SetItemsProcessed(state.iterations() * ids);
}
BENCHMARK(BM_WriteTrace)->Unit(benchmark::kMillisecond);

void BM_GenerateTrace(benchmark::State& state, const char* model_name) {
  const ModelSpec model = *ModelCatalog::Builtin().Find(model_name);
  const uint64_t tokens = 64;
  uint64_t ids = 0;
  for (auto _ : state) {
    TraceGenerator generator(model, {.seed = 1, .tokens = tokens});
    TokenActivations token;
    while (generator.Next(&token)) {
      for (const auto& l : token.layers)
        for (const auto& s : l.experts) ids += s.active.size();
    }
  }
  benchmark::DoNotOptimize(ids);
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(tokens * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_GenerateTrace, mistral, "turbosparse-mistral-7b")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GenerateTrace, mixtral, "turbosparse-mixtral-47b")
    ->Unit(benchmark::kMillisecond);

// One generated token per iteration, the generator made (and its streams, on
// its first token) outside the timing: the steady-state cost of a token, on
// the argument's number of threads.
void BM_GenerateToken(benchmark::State& state, const char* model_name) {
  const ModelSpec model = *ModelCatalog::Builtin().Find(model_name);
  TraceGenerator generator(
      model, {.seed = 1, .tokens = uint64_t{1} << 40, .threads = static_cast<int>(state.range(0))});
  TokenActivations token;
  generator.Next(&token);  // makes the streams
  for (auto _ : state) {
    generator.Next(&token);
    benchmark::DoNotOptimize(token.layers.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_GenerateToken, mistral, "turbosparse-mistral-7b")
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GenerateToken, mixtral, "turbosparse-mixtral-47b")
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);

// One token's step of `streams` neuron populations of 14,336 neurons each (a
// 7B model's layer), in neurons per second: one stream's thresholds (400 KB)
// stay in the core's L2, 32 streams' (a whole 7B model, 13 MB) do not. The
// same rate at both says the step is bound by its arithmetic (the draws'
// hashes), not by memory.
void BM_StepNeuronStreams(benchmark::State& state) {
  const int streams = static_cast<int>(state.range(0));
  NeuronStreamParams params;
  params.propensity.assign(14336, 0.1);
  params.persistence = 0.6;
  params.coactivation = 0.3;
  params.predicted_ratio = 1.5;
  params.recall = 0.95;
  params.gate_only_ratio = 0.2;
  params.reuse_swing = 0.2;
  std::vector<NeuronStream> population;
  for (int i = 0; i < streams; ++i) population.emplace_back(params, i + 1);
  NeuronSet set;
  for (auto _ : state) {
    for (NeuronStream& s : population) s.Step(&set);
    benchmark::DoNotOptimize(set.active.data());
  }
  state.SetItemsProcessed(state.iterations() * streams * 14336);
}
BENCHMARK(BM_StepNeuronStreams)->ArgName("streams")->Arg(1)->Arg(4)->Arg(32)->Arg(64);

}  // namespace
}  // namespace sparseflash
