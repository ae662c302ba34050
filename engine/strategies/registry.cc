// Name -> factory table of strategies: a new strategy is one file and one line here.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/strategies/strategies.h"

namespace sparseflash {
namespace {

struct Registration {
  const char* name;
  absl::StatusOr<std::unique_ptr<Strategy>> (*make)(StrategyOptions&, const StrategyContext&);
};

constexpr Registration kStrategies[] = {
    {"powerinfer2", MakePowerInfer2},
    {"llmflash", MakeLlmFlash},
    {"llamacpp", MakeLlamaCpp},
    {"in_memory", MakeInMemory},
};

}  // namespace

int ReadThreads(StrategyOptions& options, const StrategyContext& context, int fallback) {
  const int threads = options.Int("threads", std::max(1, fallback));
  return context.threads > 0 ? context.threads : threads;
}

PredictorOptions ReadPredictorOptions(StrategyOptions& options, const StrategyContext& context) {
  PredictorOptions p;
  p.recall = options.Double("predictor_recall", p.recall);
  p.extra = options.Double("predictor_extra", p.extra);
  p.seed = context.seed;
  return p;
}

std::vector<std::string> StrategyNames() {
  std::vector<std::string> names;
  for (const Registration& r : kStrategies) names.push_back(r.name);
  return names;
}

absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(const std::string& name,
                                                       StrategyOptions& options,
                                                       const StrategyContext& context) {
  for (const Registration& r : kStrategies) {
    if (name == r.name) return r.make(options, context);
  }
  return absl::NotFoundError(absl::StrCat(
      "unknown strategy '", name, "'; known strategies: ", absl::StrJoin(StrategyNames(), ", ")));
}

}  // namespace sparseflash
