// Throughput of the real sparse FFN kernel, in bundle bytes per second on one
// core: a TurboSparse-Mistral-7B-shaped layer (d_model 4096, INT4 or INT8 g32,
// gated), every gate positive; bundles spread over 512 MiB so they come from
// DRAM, or over 2 MiB so they stay in cache (the kernel's compute-bound rate).
#include <benchmark/benchmark.h>

#include <vector>

#include "common/random.h"
#include "engine/real/sparse_ffn_kernel.h"

namespace sparseflash {
namespace {

void BM_SparseFfn(benchmark::State& state) {
  const FfnKernelShape s{
      .d_model = 4096, .group = 32, .bits = static_cast<int>(state.range(0)), .gated = true};
  const int64_t arena_bundles = (state.range(1) << 20) / s.bundle_bytes();
  std::vector<uint8_t> arena(arena_bundles * s.bundle_bytes(), 0x99);  // nibbles 9: weight +1
  for (int64_t k = 0; k < arena_bundles; ++k) {
    for (int m = 0; m < 3; ++m) {
      uint16_t* scales = reinterpret_cast<uint16_t*>(arena.data() + k * s.bundle_bytes() +
                                                     m * s.row_bytes() + s.d_model * s.bits / 8);
      for (int g = 0; g < s.d_model / s.group; ++g) scales[g] = FloatToHalf(0.01f);
    }
  }
  Random rng(3);
  std::vector<const uint8_t*> active(2048);
  std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f);
  for (auto _ : state) {
    state.PauseTiming();
    for (auto& p : active) p = arena.data() + rng.Below(arena_bundles) * s.bundle_bytes();
    state.ResumeTiming();
    SparseFfn(s, active.data(), static_cast<int>(active.size()), x.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * active.size() * s.bundle_bytes());
  state.SetLabel(SparseFfnTarget());
}
BENCHMARK(BM_SparseFfn)
    ->ArgNames({"bits", "arena_mib"})
    ->ArgsProduct({{4, 8}, {512, 2}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sparseflash

BENCHMARK_MAIN();
