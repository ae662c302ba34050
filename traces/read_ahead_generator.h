// The model's trace generator run on a thread of its own, a few tokens ahead of
// the reader, so generating the next tokens overlaps the reader's work on the
// current one (the engine's, or a trace writer's). Yields exactly the tokens a
// TraceGenerator with the same options yields, in order. Next() is called from
// one thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "traces/generator.h"

namespace sparseflash {

class ReadAheadGenerator {
 public:
  // `ahead`: tokens the generator may run ahead of the reader (>= 1).
  ReadAheadGenerator(const ModelSpec& model, const GeneratorOptions& options, int ahead = 2);
  ~ReadAheadGenerator();

  const TraceHeader& header() const { return generator_.header(); }
  // The next token, valid until the next call; nullptr after the last.
  const TokenActivations* Next();

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
