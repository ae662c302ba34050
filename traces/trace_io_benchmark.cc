// Trace encoding and decoding speed, in neuron ids per second.
#include "benchmark/benchmark.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
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
        for (const auto& s : l.experts) n += s.active.size() + s.predicted.size() + s.gate_only.size();
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

}  // namespace
}  // namespace sparseflash
