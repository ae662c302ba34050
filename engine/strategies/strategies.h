// Factories of the built-in strategies, one per file in this folder;
// registered by name in registry.cc.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "engine/layer_costs.h"
#include "engine/model_bytes.h"
#include "engine/predictor.h"
#include "engine/strategy.h"

namespace sparseflash {

// Option readers shared by the strategies, each recording the value used: "threads"
// (overridden by --threads)
// and the predictor model's "predictor_recall" and "predictor_extra".
int ReadThreads(StrategyOptions& options, const StrategyContext& context, int fallback);
// The compute threads of llamacpp and in_memory by default, as llama.cpp's own
// default: up to 4 of the machine's `cpu_cores`.
inline int DefaultComputeThreads(int cpu_cores) { return cpu_cores < 4 ? cpu_cores : 4; }
// "policy" (overridden by --policy).
std::string ReadPolicy(StrategyOptions& options, const StrategyContext& context,
                       const std::string& fallback);
PredictorOptions ReadPredictorOptions(StrategyOptions& options, const StrategyContext& context);
// "attention": where attention's weights live, "dram" (pinned; the default) or
// "flash": each layer's read in file order in 512 KiB requests while the layer
// before computes, into one of two buffers (what lets a budget below the
// resident set fit). The reads for flash, none for dram; another value is
// recorded as the option's error (StrategyOptions::Check reports it).
LayerReads ReadAttentionPlacement(StrategyOptions& options, const ModelSpec& model,
                                  const ModelBytes& bytes);
// `resident` (which counts all of attention's weights) with attention read as
// `attention_reads` says: only its buffers stay.
int64_t ResidentWithAttention(int64_t resident, const LayerReads& attention_reads,
                              const ModelBytes& bytes);

absl::StatusOr<std::unique_ptr<Strategy>> MakePowerInfer2(StrategyOptions& options,
                                                          const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeLlmFlash(StrategyOptions& options,
                                                       const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeLlamaCpp(StrategyOptions& options,
                                                       const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeInMemory(StrategyOptions& options,
                                                       const StrategyContext& context);

}  // namespace sparseflash
