// Name -> factory table of strategies: a new strategy is one file and one line here.
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
  return absl::NotFoundError(absl::StrCat("unknown strategy '", name, "'; known strategies: ",
                                          absl::StrJoin(StrategyNames(), ", ")));
}

}  // namespace sparseflash
