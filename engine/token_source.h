// Where the engine's tokens come from: a trace file streamed from disk, a
// synthetic generator run on the fly, or a generated trace held in memory and
// shared by many runs (a sweep generates each trace once). All yield
// TokenActivations in order.
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/trace_future.h"
#include "traces/activation.h"
#include "traces/model_spec.h"

namespace sparseflash {

class ActivationProfile;

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual const TraceHeader& header() const = 0;
  // The next token, valid until the next call (no copy: a sweep's runs read
  // one shared trace); nullptr at the end.
  virtual absl::StatusOr<const TokenActivations*> Next() = 0;
};

absl::StatusOr<std::unique_ptr<TokenSource>> OpenTraceSource(const std::string& path);
// The same tokens, decoded a few ahead on a thread of their own, each set's
// bitsets attached there (as a planner reads them): for a run, whose engine
// then works on one token while the next ones are decoded.
absl::StatusOr<std::unique_ptr<TokenSource>> OpenTraceSourceReadAhead(const std::string& path);
// `steps` empty tokens, for a model that makes its own activations (the real model).
std::unique_ptr<TokenSource> MakeStepSource(int steps);
// The model's generator, run a few tokens ahead on a thread of its own, its
// layers stepped by `threads` threads; the tokens do not depend on `threads`.
std::unique_ptr<TokenSource> MakeGeneratorSource(const ModelSpec& model, uint64_t seed,
                                                 uint64_t tokens, int threads = 1,
                                                 int setup_threads = 0);

// A trace in memory, each set's bitsets attached: a generated one (the same
// tokens MakeGeneratorSource yields) or a file's (ReadTokenTrace).
struct TokenTrace {
  TraceHeader header;
  uint64_t seed = 0;  // a generated trace's (0 for a file's)
  std::vector<TokenActivations> tokens;
  int64_t bytes = 0;  // the tokens' memory (ids and bitsets)

  // The future accesses of the first `count` tokens (the Belady oracle's), made
  // on first use and shared by every run on this trace. Thread-safe.
  absl::StatusOr<std::shared_ptr<const TraceFuture>> Future(const NeuronIndexer& indexer,
                                                            AccessSet set, uint64_t count) const;
  // The offline profile of `model`'s generator (its long-run activation
  // probabilities), made on first use and shared by every run on this trace.
  // Thread-safe.
  std::shared_ptr<const ActivationProfile> GeneratorProfile(const ModelSpec& model) const;

 private:
  // A std::mutex, not absl::Mutex: ThreadSanitizer sees pthread locks, while
  // the distribution's Abseil is built without its annotations, so TSan would
  // report every access below as a race.
  mutable std::mutex mu_;
  // Both guarded by mu_.
  mutable std::vector<std::pair<ModelSpec, std::shared_ptr<const ActivationProfile>>> profiles_;
  mutable std::map<std::pair<AccessSet, uint64_t>, std::shared_ptr<const TraceFuture>> futures_;
};
// The tokens would take more than `max_bytes` of memory: ResourceExhausted,
// after no more than that (for which the caller reads them a few at a time).
absl::StatusOr<std::shared_ptr<const TokenTrace>> GenerateTokenTrace(
    const ModelSpec& model, uint64_t seed, uint64_t tokens,
    int64_t max_bytes = std::numeric_limits<int64_t>::max());
// The first `tokens` tokens of the trace file `path` (all it has, if fewer); an
// error of the file is the reader's, and a trace over `max_bytes` as above.
absl::StatusOr<std::shared_ptr<const TokenTrace>> ReadTokenTrace(
    const std::string& path, uint64_t tokens,
    int64_t max_bytes = std::numeric_limits<int64_t>::max());
// The memory a token's sets take (their ids and bitsets).
int64_t TokenBytes(const TokenActivations& token);
// Its first `tokens` tokens.
std::unique_ptr<TokenSource> MakeMemorySource(std::shared_ptr<const TokenTrace> trace,
                                              uint64_t tokens);

}  // namespace sparseflash
