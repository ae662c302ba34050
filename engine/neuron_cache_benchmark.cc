// Neuron-cache lookups per second per policy: on a skewed synthetic key stream
// (a 32-layer x 14336-neuron key space, Zipf-like popularity, cache of 25 %),
// and on the access stream of a generated Bamboo-7B trace (64 tokens, cache of
// half the neurons), the workload the simulator runs.
#include <cmath>
#include <vector>

#include "benchmark/benchmark.h"
#include "common/random.h"
#include "engine/access_profile.h"
#include "engine/neuron_cache.h"
#include "engine/policies/policies.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

const std::vector<CacheKey>& Keys() {
  static const std::vector<CacheKey> keys = [] {
    const uint32_t space = 32 * 14336;
    Random rng(1);
    std::vector<CacheKey> out(1 << 22);
    for (CacheKey& k : out) {
      double u = rng.Uniform();
      k = static_cast<CacheKey>(space * std::pow(u, 3.0));  // hot keys near 0
    }
    return out;
  }();
  return keys;
}

void BM_NeuronCacheAccess(benchmark::State& state, const char* policy) {
  const std::vector<CacheKey>& keys = Keys();
  auto cache = *NeuronCache::Create({.key_space = 32 * 14336,
                                     .capacity_bytes = 32 * 14336 / 4,
                                     .policy = policy,
                                     .entry_bytes = 1});
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cache->Access(keys[i], 1));
    i = (i + 1) & (keys.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_rate"] = cache->stats().hit_rate();
}
const std::vector<CacheKey>& TraceKeys() {
  static const std::vector<CacheKey> keys = [] {
    ModelSpec model = *LoadModel("bamboo-7b");
    TraceGenerator generator(model, {.seed = 1, .tokens = 64});
    NeuronIndexer indexer(model.layers, model.experts, model.d_ffn);
    std::vector<CacheKey> out;
    TokenActivations token;
    while (generator.Next(&token)) {
      ForEachAccess(token, indexer, AccessSet::kActive, [&](CacheKey k) { out.push_back(k); });
    }
    return out;
  }();
  return keys;
}

void BM_NeuronCacheTrace(benchmark::State& state, const char* policy) {
  const std::vector<CacheKey>& keys = TraceKeys();
  auto cache = *NeuronCache::Create({.key_space = 32 * 14336,
                                     .capacity_bytes = 32 * 14336 / 2,
                                     .policy = policy,
                                     .entry_bytes = 1});
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cache->Access(keys[i], 1));
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_rate"] = cache->stats().hit_rate();
}
BENCHMARK_CAPTURE(BM_NeuronCacheTrace, lru, "lru");
BENCHMARK_CAPTURE(BM_NeuronCacheTrace, fifo, "fifo");
BENCHMARK_CAPTURE(BM_NeuronCacheTrace, lfu, "lfu");
BENCHMARK_CAPTURE(BM_NeuronCacheTrace, sieve, "sieve");
BENCHMARK_CAPTURE(BM_NeuronCacheTrace, s3fifo, "s3fifo");

BENCHMARK_CAPTURE(BM_NeuronCacheAccess, lru, "lru");
BENCHMARK_CAPTURE(BM_NeuronCacheAccess, fifo, "fifo");
BENCHMARK_CAPTURE(BM_NeuronCacheAccess, lfu, "lfu");
BENCHMARK_CAPTURE(BM_NeuronCacheAccess, sieve, "sieve");
BENCHMARK_CAPTURE(BM_NeuronCacheAccess, s3fifo, "s3fifo");

}  // namespace
}  // namespace sparseflash
