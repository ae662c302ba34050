// Factories of the built-in strategies, one per file in this folder;
// registered by name in registry.cc.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "engine/predictor.h"
#include "engine/strategy.h"

namespace sparseflash {

// Option readers shared by the strategies, each recording the value used: "threads"
// (overridden by --threads)
// and the predictor model's "predictor_recall" and "predictor_extra".
int ReadThreads(StrategyOptions& options, const StrategyContext& context, int fallback);
// "policy" (overridden by --policy).
std::string ReadPolicy(StrategyOptions& options, const StrategyContext& context,
                       const std::string& fallback);
PredictorOptions ReadPredictorOptions(StrategyOptions& options, const StrategyContext& context);

absl::StatusOr<std::unique_ptr<Strategy>> MakePowerInfer2(StrategyOptions& options,
                                                          const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeLlmFlash(StrategyOptions& options,
                                                       const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeLlamaCpp(StrategyOptions& options,
                                                       const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeInMemory(StrategyOptions& options,
                                                       const StrategyContext& context);

}  // namespace sparseflash
