// Event-queue operations (schedule + run) per second.
#include "benchmark/benchmark.h"
#include "common/random.h"
#include "sim/event_queue.h"

namespace sparseflash {
namespace {

void BM_EventQueueScheduleAndRun(benchmark::State& state) {
  Random rng(1);
  for (auto _ : state) {
    EventQueue q;
    uint64_t sum = 0;
    for (int i = 0; i < 4096; ++i)
      q.At({static_cast<int64_t>(rng.Below(1 << 20))}, [&sum] { ++sum; });
    q.Run();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}
BENCHMARK(BM_EventQueueScheduleAndRun);

}  // namespace
}  // namespace sparseflash
