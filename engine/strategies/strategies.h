// Factories of the built-in strategies, one per file in this folder;
// registered by name in registry.cc.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "engine/strategy.h"

namespace sparseflash {

absl::StatusOr<std::unique_ptr<Strategy>> MakePowerInfer2(StrategyOptions& options,
                                                          const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeLlmFlash(StrategyOptions& options,
                                                       const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeLlamaCpp(StrategyOptions& options,
                                                       const StrategyContext& context);
absl::StatusOr<std::unique_ptr<Strategy>> MakeInMemory(StrategyOptions& options,
                                                       const StrategyContext& context);

}  // namespace sparseflash
