// A token source that runs the model's trace generator on a thread of its own,
// a few tokens ahead of the reader, so generating the next tokens overlaps the
// engine's work on the current one. Yields exactly the tokens a TraceGenerator
// with the same options yields, in order. Next() is called from one thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/token_source.h"
#include "traces/generator.h"

namespace sparseflash {

class GeneratorSource : public TokenSource {
 public:
  // `ahead`: tokens the generator may run ahead of the reader (>= 1).
  GeneratorSource(const ModelSpec& model, const GeneratorOptions& options, int ahead = 2);
  ~GeneratorSource() override;

  const TraceHeader& header() const override { return generator_.header(); }
  // The returned token stays valid until the next call.
  absl::StatusOr<const TokenActivations*> Next() override;

 private:
  void Produce();

  TraceGenerator generator_;
  // One slot more than `ahead`: the reader holds one while the generator fills the others.
  std::vector<TokenActivations> slots_;
  // std::mutex, not absl::Mutex: ThreadSanitizer sees pthread locks.
  std::mutex mu_;
  std::condition_variable produced_cv_, released_cv_;
  // Guarded by mu_: tokens generated, tokens handed out, tokens handed back.
  uint64_t produced_ = 0, consumed_ = 0, released_ = 0;
  bool done_ = false, stop_ = false;
  std::thread producer_;
};

}  // namespace sparseflash
