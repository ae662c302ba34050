// Throughput of the real sparse FFN kernel, in bundle bytes per second on one
// core: a TurboSparse-Mistral-7B-shaped layer (d_model 4096, INT4 or INT8 g32,
// gated), every gate positive; bundles spread over 512 MiB so they come from
// DRAM, or over 2 MiB so they stay in cache (the kernel's compute-bound rate).
// BM_DenseGemv computes consecutive rows as a dense matrix (attention, the
// head). BM_BundleRead reads the same bundles (prefetching as the kernel does) and
// only sums them: the DRAM read bandwidth one core gets on this access
// pattern, the kernel's ceiling.
// BM_DramRead sums 512 MiB of weight memory in order on one core, as `device
// calibrate` measures the DRAM read: the denominator of the kernel's targets
// (a share of the DRAM read bandwidth per core), in the same run.
// arena_mib 4096 adds the page walks of scattered reads over gigabytes of
// weights. path 0 is what SparseFfn picks on this CPU, 1 the portable Highway path;
// contiguous 1 takes consecutive bundles (a dense matrix's rows), 0 random ones
// (the active neurons of a sparse layer). BM_SparseFfnDensity takes a layer's
// active set as a run hands it over (ascending, a share `density` of the
// bundles) and reads the same bundles plainly beside the kernel.
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "common/random.h"
#include "engine/real/bundle_prefetch.h"
#include "engine/real/sparse_ffn_kernel.h"
#include "engine/real/weight_memory.h"

namespace sparseflash {
namespace {

// `mib` MiB of bundles whose every weight is +1 with scale 0.01.
struct Arena {
  FfnKernelShape shape;
  int64_t bundles = 0;
  std::unique_ptr<uint8_t, decltype(&std::free)> bytes{nullptr, &std::free};
  const uint8_t* data() const { return bytes.get(); }
};

// `huge`: the engine's weight memory (AllocateWeightMemory: 2 MiB pages where
// the kernel has them); else 4 KiB pages (MADV_NOHUGEPAGE).
Arena MakeArena(int bits, int64_t mib, bool huge = false, int group = 32) {
  Arena a;
  a.shape = FfnKernelShape{.d_model = 4096, .group = group, .bits = bits, .gated = true};
  const FfnKernelShape& s = a.shape;
  a.bundles = (mib << 20) / s.bundle_bytes();
  const int64_t bytes = WeightMemoryBytes(a.bundles * s.bundle_bytes());
  if (huge) {
    a.bytes.reset(AllocateWeightMemory(bytes).release());
  } else {
    a.bytes.reset(static_cast<uint8_t*>(std::aligned_alloc(size_t{1} << 21, bytes)));
    madvise(a.bytes.get(), bytes, MADV_NOHUGEPAGE);
  }
  FillUnitBundles(s, a.bytes.get(), a.bundles);
  return a;
}

// Random bundles, or (`contiguous`) consecutive ones from a random start, as a
// dense matrix's rows lie.
void PickBundles(const Arena& a, Random& rng, std::vector<const uint8_t*>& active,
                 bool contiguous = false) {
  const int64_t n = static_cast<int64_t>(active.size());
  const int64_t start = rng.Below(static_cast<uint32_t>(a.bundles - n));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t b = contiguous ? start + k : rng.Below(a.bundles);
    active[k] = a.data() + b * a.shape.bundle_bytes();
  }
}

// A layer's active set as the engine hands it to the kernel: ascending
// addresses from a random start, each bundle taken with probability
// `density_pct` %, until `active` is full (100: consecutive bundles).
void PickLayerBundles(const Arena& a, Random& rng, std::vector<const uint8_t*>& active,
                      int density_pct) {
  const int64_t n = static_cast<int64_t>(active.size());
  const int64_t span = n * 100 / density_pct + 64 * 100 / density_pct;  // room for the draw
  const int64_t start = rng.Below(static_cast<uint32_t>(std::max<int64_t>(1, a.bundles - span)));
  int64_t k = 0;
  for (int64_t b = start; k < n && b < a.bundles; ++b) {
    if (density_pct >= 100 || rng.Below(100) < static_cast<uint32_t>(density_pct)) {
      active[k++] = a.data() + b * a.shape.bundle_bytes();
    }
  }
  for (; k < n; ++k) active[k] = active[k - 1];  // past the arena's end (not seen at these sizes)
}

// Reads every byte of the bundles in `active`, prefetching as the kernel does,
// and only sums them: what one core reads of that access pattern.
uint64_t SumBundles(const Arena& a, const std::vector<const uint8_t*>& active) {
  const int64_t words = a.shape.bundle_bytes() / 8;
  const int count = static_cast<int>(active.size());
  const BundlePrefetcher prefetch(active.data(), count, a.shape.bundle_bytes());
  uint64_t sum = 0;
  for (int k = 0; k < count; ++k) {
    const uint8_t* b = active[k];
    prefetch.Before(k);  // as the kernel does
    uint64_t lane[8] = {};
    for (int64_t w = 0; w + 8 <= words; w += 8) {
      for (int l = 0; l < 8; ++l) {
        uint64_t v;
        std::memcpy(&v, b + (w + l) * 8, 8);
        lane[l] += v;
      }
    }
    for (uint64_t v : lane) sum += v;
  }
  return sum;
}

// One call of the kernel on `path` (portable or the dispatched one) over `active`.
void RunKernel(const FfnKernelShape& s, bool portable, const std::vector<const uint8_t*>& active,
               const std::vector<float>& x, std::vector<float>& out) {
  const int count = static_cast<int>(active.size());
  if (portable) {
    SparseFfnPortable(s, active.data(), count, x.data(), out.data());
  } else {
    SparseFfn(s, active.data(), count, x.data(), out.data());
  }
  benchmark::DoNotOptimize(out.data());
}

// What a timed pass does with its 2,048 bundles.
enum class BundleWork { kKernel, kPortableKernel, kRead };

// Times `work` over 2,048 bundles of `a`, drawn anew before each pass
// (untimed) by `pick(rng, active)`, in bundle bytes per second.
template <typename Pick>
void TimeBundles(benchmark::State& state, const Arena& a, BundleWork work, Pick&& pick) {
  const FfnKernelShape& s = a.shape;
  Random rng(3);
  std::vector<const uint8_t*> active(2048);
  std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f);
  for (auto _ : state) {
    state.PauseTiming();
    pick(rng, active);
    state.ResumeTiming();
    if (work == BundleWork::kRead) {
      benchmark::DoNotOptimize(SumBundles(a, active));
    } else {
      RunKernel(s, work == BundleWork::kPortableKernel, active, x, out);
    }
  }
  state.SetBytesProcessed(state.iterations() * active.size() * s.bundle_bytes());
  state.SetLabel(work == BundleWork::kRead             ? "read"
                 : work == BundleWork::kPortableKernel ? SparseFfnPortableTarget()
                                                       : SparseFfnTarget(s));
}

void BM_SparseFfn(benchmark::State& state) {
  const Arena a = MakeArena(static_cast<int>(state.range(0)), state.range(1), state.range(4) == 1);
  const bool contiguous = state.range(3) == 1;
  TimeBundles(state, a, state.range(2) == 1 ? BundleWork::kPortableKernel : BundleWork::kKernel,
              [&](Random& rng, std::vector<const uint8_t*>& active) {
                PickBundles(a, rng, active, contiguous);
              });
}
BENCHMARK(BM_SparseFfn)
    ->ArgNames({"bits", "arena_mib", "path", "contiguous", "huge"})
    ->ArgsProduct({{4, 8}, {4096, 512, 2}, {0, 1}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// The cost of one small call, bundles in cache: `bundles` random bundles of a
// 2 MiB arena per call (arena_mib 2048: new random bundles from DRAM each
// call, bytes per second comparable with BM_SparseFfn). With few bundles the
// time is the call's own setup (preparing x, zeroing and folding the
// accumulators), which a pipeline of 128-neuron clusters pays once per
// cluster. path as BM_SparseFfn.
void BM_SparseFfnCall(benchmark::State& state) {
  const Arena a = MakeArena(static_cast<int>(state.range(0)), state.range(3));
  const FfnKernelShape& s = a.shape;
  Random rng(3);
  std::vector<const uint8_t*> active(static_cast<size_t>(state.range(1)));
  PickBundles(a, rng, active);
  std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f);
  const bool portable = state.range(2) == 1;
  const bool from_dram = state.range(3) > 2;
  for (auto _ : state) {
    if (from_dram) {
      state.PauseTiming();
      PickBundles(a, rng, active);
      state.ResumeTiming();
    }
    RunKernel(s, portable, active, x, out);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * active.size() * s.bundle_bytes());
  state.SetLabel(portable ? SparseFfnPortableTarget() : SparseFfnTarget(s));
}
BENCHMARK(BM_SparseFfnCall)
    ->ArgNames({"bits", "bundles", "path", "arena_mib"})
    ->ArgsProduct({{4, 8}, {1, 16, 128}, {0, 1}, {2}})
    ->ArgsProduct({{4}, {128, 1024}, {0}, {2048}})
    ->Unit(benchmark::kMicrosecond);

// The dense GEMV (attention, the head, dense matrices) over 2048 bundles' rows
// (half the arena when smaller)
// in order from a random start, on the path DenseGemv picks (path 0) or the
// portable one (1), for weight groups of 16, 32 or 64.
void BM_DenseGemv(benchmark::State& state) {
  const Arena a = MakeArena(static_cast<int>(state.range(0)), state.range(1), false,
                            static_cast<int>(state.range(3)));
  const bool portable = state.range(2) == 1;
  const FfnKernelShape& s = a.shape;
  const int64_t bundles = std::min<int64_t>(2048, a.bundles / 2), rows = bundles * 3;
  Random rng(3);
  std::vector<float> x(s.d_model, 0.5f), y(rows);
  for (auto _ : state) {
    const uint8_t* base =
        a.data() + rng.Below(static_cast<uint32_t>(a.bundles - bundles)) * s.bundle_bytes();
    if (portable) {
      DenseGemvPortable(s, base, rows, x.data(), y.data());
    } else {
      DenseGemv(s, base, rows, x.data(), y.data());
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * bundles * s.bundle_bytes());
  state.SetLabel(portable ? SparseFfnPortableTarget() : SparseFfnTarget(s));
}
BENCHMARK(BM_DenseGemv)
    ->ArgNames({"bits", "arena_mib", "path", "group"})
    ->ArgsProduct({{4, 8}, {4096, 2}, {0, 1}, {16, 32, 64}})
    ->Unit(benchmark::kMicrosecond);

// A real run's sparse FFN tasks between other work: calls of `bundles` random
// bundles (a 128-neuron cluster's active ones) over an arena of `arena_mib`
// (a 7B model's neuron cache), each call after a dense GEMV over `stream_mib`
// of other weights in order (a layer's attention; untimed), against the same
// calls back to back (stream_mib 0). INT4 g16, as TurboSparse-Mistral-7B.
// huge as BM_SparseFfn: with 4 KiB pages the stream evicts the arena's page
// tables from the caches and each scattered bundle waits for its page walk.
void BM_SparseFfnBetweenStreams(benchmark::State& state) {
  const Arena a = MakeArena(4, state.range(1), state.range(3) == 1, 16);
  const int64_t stream_mib = state.range(2);
  const Arena other = MakeArena(4, stream_mib > 0 ? 1024 : 2, false, 16);
  const FfnKernelShape& s = a.shape;
  const int64_t stream_bundles = (stream_mib << 20) / s.bundle_bytes();
  Random rng(3);
  std::vector<const uint8_t*> active(static_cast<size_t>(state.range(0)));
  std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f), y(stream_bundles * 3 + 1);
  int64_t at = 0;
  for (auto _ : state) {
    state.PauseTiming();
    PickBundles(a, rng, active);
    if (stream_bundles > 0) {
      if (at + stream_bundles > other.bundles) at = 0;
      DenseGemv(s, other.data() + at * s.bundle_bytes(), stream_bundles * 3, x.data(), y.data());
      benchmark::DoNotOptimize(y.data());
      at += stream_bundles;
    }
    state.ResumeTiming();
    RunKernel(s, false, active, x, out);
  }
  state.SetBytesProcessed(state.iterations() * active.size() * s.bundle_bytes());
  state.SetLabel(SparseFfnTarget(s));
}
BENCHMARK(BM_SparseFfnBetweenStreams)
    ->ArgNames({"bundles", "arena_mib", "stream_mib", "huge"})
    ->ArgsProduct({{16, 140, 1024}, {3456}, {0, 24}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

void BM_BundleRead(benchmark::State& state) {
  const Arena a = MakeArena(static_cast<int>(state.range(0)), 512, state.range(1) == 1);
  TimeBundles(state, a, BundleWork::kRead, [&](Random& rng, std::vector<const uint8_t*>& active) {
    PickBundles(a, rng, active);
  });
}
BENCHMARK(BM_BundleRead)
    ->ArgNames({"bits", "huge"})
    ->ArgsProduct({{4, 8}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// The kernel (read 0) and the plain read of the same bundles (read 1) over a
// layer's active set at `density` % of its bundles, in ascending order, on
// huge pages over 4 GiB (a 7B model's weights): the access pattern sets what
// one core reads, from about a tenth of a layer active (TurboSparse) to all
// of it (a dense matrix). INT4 or INT8 g32, the path SparseFfn picks.
void BM_SparseFfnDensity(benchmark::State& state) {
  const Arena a = MakeArena(static_cast<int>(state.range(0)), 4096, true);
  const int density = static_cast<int>(state.range(1));
  TimeBundles(state, a, state.range(2) == 1 ? BundleWork::kRead : BundleWork::kKernel,
              [&](Random& rng, std::vector<const uint8_t*>& active) {
                PickLayerBundles(a, rng, active, density);
              });
}
BENCHMARK(BM_SparseFfnDensity)
    ->ArgNames({"bits", "density", "read"})
    ->ArgsProduct({{4, 8}, {10, 25, 50, 75, 100}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

void BM_DramRead(benchmark::State& state) {
  constexpr int64_t kBytes = int64_t{512} << 20;
  WeightMemory memory = AllocateWeightMemory(kBytes);
  if (!memory) {
    state.SkipWithError("cannot allocate 512 MiB of weight memory");
    return;
  }
  const size_t count = static_cast<size_t>(kBytes / 8);
  uint64_t* words = reinterpret_cast<uint64_t*>(memory.get());
  for (size_t i = 0; i < count; ++i) words[i] = i;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (size_t i = 0; i < count; ++i) sum += words[i];
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(BM_DramRead)->Unit(benchmark::kMillisecond);

// A layer's active bundles split over two threads that wait for each other at
// the layer's end (join 1), as a real run computes a layer, against the same
// two threads computing halves of the same size without waiting (join 0), as
// calibration measures the kernel with every core busy. The waits spin, so
// the gap is what a layer loses to the slower of its halves, not to waking a
// thread. Bytes per second per core, the two threads' mean. Bundles per layer:
// TurboSparse-Mistral-7B's active set (~10 % of 14,336) and twice that; INT4
// g32 on huge pages over `arena_mib` (4,608: the whole model's weights).
void BM_SparseFfnSplitLayer(benchmark::State& state) {
  const Arena a = MakeArena(4, state.range(1), true);
  const FfnKernelShape& s = a.shape;
  const size_t half = static_cast<size_t>(state.range(0) / 2);
  const bool join = state.range(2) == 1;
  // Sixty-four layers' halves drawn ahead, used in turn.
  constexpr int kLayers = 64;
  Random rng(3);
  std::vector<std::vector<const uint8_t*>> halves(2 * kLayers, std::vector<const uint8_t*>(half));
  for (auto& h : halves) PickBundles(a, rng, h);
  std::atomic<int64_t> started{0}, finished{0};
  std::atomic<bool> stop{false};
  std::thread helper([&] {
    std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f);
    for (int64_t layer = 1; !stop.load(std::memory_order_relaxed); ++layer) {
      if (join) {
        while (started.load(std::memory_order_acquire) < layer) {
          if (stop.load(std::memory_order_relaxed)) return;
        }
      }
      RunKernel(s, false, halves[2 * (layer % kLayers) + 1], x, out);
      finished.store(layer, std::memory_order_release);
    }
  });
  std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f);
  int64_t layer = 0;
  const int64_t helper_before = finished.load(std::memory_order_acquire);
  for (auto _ : state) {
    ++layer;
    started.store(layer, std::memory_order_release);
    RunKernel(s, false, halves[2 * (layer % kLayers)], x, out);
    if (join) {
      while (finished.load(std::memory_order_acquire) < layer) {
      }
    }
  }
  const int64_t helper_layers = finished.load(std::memory_order_acquire) - helper_before;
  stop = true;
  helper.join();
  // Per core: the mean of the two threads' halves (with join, both did every
  // layer). helper_share: the helper's halves per one of this thread's.
  const double halves_done = (static_cast<double>(state.iterations()) + helper_layers) / 2;
  state.SetBytesProcessed(static_cast<int64_t>(halves_done * half * s.bundle_bytes()));
  state.counters["helper_share"] =
      static_cast<double>(helper_layers) / std::max<int64_t>(1, state.iterations());
  state.SetLabel(SparseFfnTarget(s));
}
BENCHMARK(BM_SparseFfnSplitLayer)
    ->ArgNames({"bundles", "arena_mib", "join"})
    ->ArgsProduct({{1434, 2868}, {512, 4608}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace sparseflash

BENCHMARK_MAIN();
