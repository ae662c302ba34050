// `generate` for the real TinyStories model: writes the FFN bundles in the
// engine's flash layout, then runs greedy decoding through the engine on the
// real Env (O_DIRECT reads of that file, a compute thread, the neuron cache in a
// real arena). Reports what the engine read and what the kernel says the process
// read from storage, so a page-cache hit can never pass for a flash read.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/tiny/tiny_model.h"
#include "engine/tiny/tiny_strategy.h"
#include "engine/tiny/tokenizer.h"

namespace sparseflash {

struct TinyGenerateOptions {
  std::string prompt;
  int positions = 0;        // 0 = the model's context
  std::string flash_file;   // where the bundles are written (and read from)
  std::string io = "auto";  // uring | pread | auto
  TinyStrategyOptions strategy;
  int fail_nth_read = 0;  // tests: fail this read (1-based) with an I/O error
};

struct TinyGenerateResult {
  std::string text;
  TinyOutput output;
  RunRecord record;
  MemoryPlan memory;
  int64_t cache_neurons = 0;
  int64_t engine_read_bytes = 0;  // what the engine asked for
  int64_t kernel_read_bytes = 0;  // /proc/self/io read_bytes over the run; -1 = unknown
  uint64_t cache_hits = 0, cache_accesses = 0;
  std::string notice;  // fallbacks taken (no io_uring, no O_DIRECT)
};

absl::StatusOr<TinyGenerateResult> GenerateTiny(const TinyModel& model, const Tokenizer& tokenizer,
                                                const TinyGenerateOptions& options);

}  // namespace sparseflash
