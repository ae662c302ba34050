#include "engine/stream_cachesim.h"

#include <chrono>

#include "engine/neuron_cache.h"

namespace sparseflash {
namespace {

// Belady's oracle over a stream: the next use of the request being served.
class StreamOracle : public AccessOracle {
 public:
  explicit StreamOracle(const RequestStream& stream) : next_(stream.next_use) {}
  void set_request(size_t i) { now_ = i; }
  // Asked only for the key of the current request (on its hit or insertion).
  uint32_t NextUse(CacheKey) const override { return next_[now_]; }

 private:
  const std::vector<uint32_t>& next_;
  size_t now_ = 0;
};

}  // namespace

std::vector<uint64_t> LruMissesByEntries(const RequestStream& stream) {
  const size_t n = stream.requests();
  std::vector<uint32_t> tree(n + 1, 0);  // Fenwick tree: 1 at each key's latest request
  auto add = [&](size_t i, int32_t v) {
    for (++i; i <= n; i += i & (~i + 1)) tree[i] += static_cast<uint32_t>(v);
  };
  auto prefix = [&](size_t i) {  // marks at positions [0, i)
    uint64_t sum = 0;
    for (; i > 0; i -= i & (~i + 1)) sum += tree[i];
    return sum;
  };
  // distance[d]: re-references with d distinct other keys since the last one.
  std::vector<uint64_t> distance(size_t{stream.key_space()} + 1, 0);
  std::vector<uint32_t> last(stream.key_space(), kNoNextUse);
  uint64_t cold = 0;
  for (size_t i = 0; i < n; ++i) {
    const CacheKey k = stream.keys[i];
    if (last[k] == kNoNextUse) {
      ++cold;
    } else {
      ++distance[prefix(i) - prefix(last[k] + 1)];
      add(last[k], -1);
    }
    add(i, 1);
    last[k] = static_cast<uint32_t>(i);
  }
  // A cache of e entries misses the cold requests and every distance >= e.
  std::vector<uint64_t> misses(distance.size());
  uint64_t beyond = 0;
  for (size_t e = distance.size(); e-- > 0;) {
    beyond += distance[e];
    misses[e] = cold + beyond;
  }
  return misses;
}

int64_t WorkingSetBytes(const RequestStream& stream) {
  return int64_t{stream.key_space()} * stream.object_bytes;
}

absl::StatusOr<StreamCacheResult> RunPolicyOnStream(const RequestStream& stream,
                                                    const std::string& policy,
                                                    int64_t capacity_bytes) {
  StreamOracle oracle(stream);
  absl::StatusOr<std::unique_ptr<NeuronCache>> made =
      NeuronCache::Create({.key_space = std::max<uint32_t>(1, stream.key_space()),
                           .capacity_bytes = capacity_bytes,
                           .policy = policy,
                           .entry_bytes = stream.object_bytes,
                           .oracle = &oracle});
  if (!made.ok()) return made.status();
  NeuronCache& cache = **made;
  const int64_t bytes = stream.object_bytes;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < stream.requests(); ++i) {
    if (i > 0 && stream.time[i] != stream.time[i - 1]) cache.OnTokenEnd();
    oracle.set_request(i);  // read by belady only
    cache.Access(stream.keys[i], bytes);
  }
  const std::chrono::duration<double> loop = std::chrono::steady_clock::now() - start;
  return StreamCacheResult{.policy = policy,
                           .capacity_bytes = capacity_bytes,
                           .requests = stream.requests(),
                           .misses = cache.stats().misses,
                           .loop_seconds = loop.count()};
}

}  // namespace sparseflash
