// What the engine may know about a model's activations before a run: an offline
// activation-frequency profile (PowerInfer's profiling pass; ranks neurons hot to
// cold for the hot region and for warming the cache), and, for the Belady oracle
// only, the future accesses of the run itself.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/eviction_policy.h"
#include "engine/neuron_key.h"
#include "engine/token_source.h"
#include "engine/trace_future.h"
#include "traces/model_spec.h"

namespace sparseflash {

class ActivationProfile {
 public:
  // Counts each key's accesses over all tokens of `source`.
  static absl::StatusOr<ActivationProfile> Collect(TokenSource& source,
                                                   const NeuronIndexer& indexer, AccessSet set);
  // From per-key activation probabilities (a generator's expected activity),
  // quantized to 1/65535. The probabilities are freed before the ranking is
  // made, so that it takes their memory rather than fresh pages.
  static ActivationProfile FromProbabilities(std::vector<float> probability);
  // The model generator's long-run activation probabilities (what profiling
  // very many generated tokens converges to).
  static ActivationProfile OfGenerator(const ModelSpec& model);
  uint64_t count(CacheKey key) const { return counts_[key]; }
  uint64_t tokens() const { return tokens_; }
  // All keys, most frequently accessed first (ties: lower key first).
  const std::vector<CacheKey>& Ranked() const { return ranked_; }

 private:
  void Rank();

  std::vector<uint32_t> counts_;
  std::vector<CacheKey> ranked_;
  uint64_t tokens_ = 0;
};

// Offline profiles counted from trace files, each counted once per (file,
// key space, access set) and shared by every run that names it (a sweep's
// runs). Thread-safe; a file that changes while the cache lives is not seen.
class ProfileCache {
 public:
  using Collector = std::function<absl::StatusOr<ActivationProfile>()>;
  // The profile of `path`, from `collect` the first time (an error is not kept).
  absl::StatusOr<std::shared_ptr<const ActivationProfile>> Get(const std::string& path,
                                                               uint32_t key_space, AccessSet set,
                                                               const Collector& collect);

 private:
  // std::mutex, not absl::Mutex: ThreadSanitizer sees pthread locks.
  std::mutex mu_;
  // Guarded by mu_.
  std::map<std::tuple<std::string, uint32_t, AccessSet>, std::shared_ptr<const ActivationProfile>>
      profiles_;
};

// The Belady oracle of one run: the next use of a key after the run's current
// token, from the run's TraceFuture (shared) and per-key cursors (its own).
class TraceOracle : public AccessOracle {
 public:
  explicit TraceOracle(std::shared_ptr<const TraceFuture> future);
  // The oracle of the tokens `source` yields.
  static absl::StatusOr<std::unique_ptr<TraceOracle>> Collect(TokenSource& source,
                                                              const NeuronIndexer& indexer,
                                                              AccessSet set);
  // The run is at token `t` now.
  void SetToken(uint32_t t) { token_ = t; }
  uint32_t NextUse(CacheKey key) const override;
  void Prefetch(CacheKey key) const override { __builtin_prefetch(&cursor_[key], 1); }

 private:
  std::shared_ptr<const TraceFuture> future_;
  mutable std::vector<UseWindow> cursor_;  // per key: its window from the current token on
  uint32_t token_ = 0;
};

}  // namespace sparseflash
