#include "tools/sweep_grid.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "common/textproto.h"
#include "common/units.h"
#include "devices/device_catalog.h"
#include "engine/eviction_policy.h"
#include "engine/run_setup.h"
#include "engine/strategy.h"
#include "tools/sweep.pb.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

using proto::Grid;

// One point of a grid's budget axis.
struct Budget {
  int64_t memory_bytes = -1;
  double memory_fraction = -1, ffn_resident = -1;
};

absl::Status FieldError(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

absl::StatusOr<std::vector<Budget>> Budgets(const Grid& g, const std::string& where) {
  std::vector<Budget> out;
  for (const std::string& m : g.memory()) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(m);
    if (!bytes.ok()) return FieldError(where + ".memory", std::string(bytes.status().message()));
    out.push_back({.memory_bytes = *bytes});
  }
  for (double f : g.memory_fraction()) {
    if (!(f > 0 && f <= 100)) {
      return FieldError(where + ".memory_fraction", absl::StrCat(f, " is not in (0, 100]"));
    }
    out.push_back({.memory_fraction = f});
  }
  for (double f : g.ffn_resident()) {
    if (!(f >= 0 && f <= 1)) {
      return FieldError(where + ".ffn_resident", absl::StrCat(f, " is not in [0, 1]"));
    }
    out.push_back({.ffn_resident = f});
  }
  if (out.empty()) {
    return FieldError(where, "no memory budget; give memory, memory_fraction or ffn_resident");
  }
  return out;
}

absl::Status CheckNames(const Grid& g, const std::string& where) {
  if (g.device().empty()) return FieldError(where + ".device", "at least one device is needed");
  if (g.model().empty()) return FieldError(where + ".model", "at least one model is needed");
  if (g.strategy().empty())
    return FieldError(where + ".strategy", "at least one strategy is needed");
  for (const std::string& d : g.device()) {
    if (absl::StatusOr<DeviceProfile> p = LoadDevice(d); !p.ok()) {
      return FieldError(where + ".device", std::string(p.status().message()));
    }
  }
  for (const std::string& m : g.model()) {
    if (absl::StatusOr<ModelSpec> p = LoadModel(m); !p.ok()) {
      return FieldError(where + ".model", std::string(p.status().message()));
    }
  }
  const std::vector<std::string> strategies = StrategyNames(), policies = EvictionPolicyNames();
  for (const std::string& s : g.strategy()) {
    if (std::find(strategies.begin(), strategies.end(), s) == strategies.end()) {
      return FieldError(
          where + ".strategy",
          absl::StrCat("unknown strategy '", s, "'; known: ", absl::StrJoin(strategies, ", ")));
    }
  }
  for (const std::string& p : g.policy()) {
    if (std::find(policies.begin(), policies.end(), p) == policies.end()) {
      return FieldError(
          where + ".policy",
          absl::StrCat("unknown policy '", p, "'; known: ", absl::StrJoin(policies, ", ")));
    }
  }
  for (int t : g.threads()) {
    if (t < 0 || t > kMaxThreads) {
      return FieldError(where + ".threads", absl::StrCat(t, " is not in [0, ", kMaxThreads,
                                                         "] (0 = the strategy's default)"));
    }
  }
  return absl::OkStatus();
}

// Unknown keys and bad values of `option` fail here, before the first run.
absl::Status CheckOptions(const Grid& g, const std::string& where) {
  const std::vector<std::string> options(g.option().begin(), g.option().end());
  for (const std::string& m : g.model()) {
    absl::StatusOr<ModelSpec> model = LoadModel(m);
    if (!model.ok()) return model.status();
    for (const std::string& s : g.strategy()) {
      if (absl::Status st = CheckStrategyOptions(s, options, *model, /*npu_present=*/true);
          !st.ok()) {
        return FieldError(where + ".option", std::string(st.message()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTokens(uint64_t tokens, int64_t prompt_tokens, const std::string& where) {
  if (tokens > kMaxRunTokens) {
    return FieldError(where + ".tokens",
                      absl::StrCat(tokens, " is over the limit of ", kMaxRunTokens));
  }
  if (prompt_tokens < 0 || uint64_t(prompt_tokens) > kMaxRunTokens) {
    return FieldError(where + ".prompt_tokens",
                      absl::StrCat(prompt_tokens, " is not in [0, ", kMaxRunTokens, "]"));
  }
  return absl::OkStatus();
}

// How many configurations a grid's lists multiply to, capped just past
// kMaxSweepConfigurations (so it cannot overflow).
int64_t GridProduct(const Grid& g) {
  const int64_t budgets = g.memory_size() + g.memory_fraction_size() + g.ffn_resident_size();
  int64_t product = 1;
  for (int64_t n :
       {int64_t{g.device_size()}, int64_t{g.model_size()}, int64_t{g.trace_size()},
        int64_t{g.strategy_size()}, int64_t{g.policy_size()}, budgets, int64_t{g.threads_size()}}) {
    product = std::min(product * std::max<int64_t>(n, 1), kMaxSweepConfigurations + 1);
  }
  return product;
}

// The product of one grid's lists, in a fixed nesting order.
absl::Status ExpandGrid(const Grid& g, const proto::Sweep& sweep, const std::string& where,
                        const std::string& base_dir, std::vector<SweepJob>* out) {
  if (absl::Status s = CheckNames(g, where); !s.ok()) return s;
  if (absl::Status s = CheckOptions(g, where); !s.ok()) return s;
  if (absl::Status s =
          CheckTokens(std::max(g.tokens(), sweep.tokens()), sweep.prompt_tokens(), where);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<Budget>> budgets = Budgets(g, where);
  if (!budgets.ok()) return budgets.status();
  std::vector<proto::TraceSource> traces(g.trace().begin(), g.trace().end());
  if (traces.empty()) traces.emplace_back().set_generate_seed(1);
  std::vector<std::string> policies(g.policy().begin(), g.policy().end());
  if (policies.empty()) policies.push_back("");
  std::vector<int> threads(g.threads().begin(), g.threads().end());
  if (threads.empty()) threads.push_back(0);
  SweepJob base;
  base.grid = g.name();
  base.tokens = g.tokens() ? g.tokens() : (sweep.tokens() ? sweep.tokens() : kDefaultDecodeTokens);
  base.prompt_tokens = sweep.prompt_tokens();
  base.profile = g.profile();
  if (!base.profile.empty() && base.profile != "generator" && base.profile != "oracle") {
    std::filesystem::path p(base.profile);
    base.profile = p.is_absolute() ? p.string() : (base_dir / p).string();
  }
  base.options.assign(g.option().begin(), g.option().end());
  std::sort(base.options.begin(), base.options.end());
  for (const std::string& device : g.device()) {
    for (const std::string& model : g.model()) {
      for (const proto::TraceSource& trace : traces) {
        for (const std::string& strategy : g.strategy()) {
          for (const std::string& policy : policies) {
            for (const Budget& b : *budgets) {
              for (int t : threads) {
                SweepJob j = base;
                j.device = device;
                j.model = model;
                if (trace.has_file()) {
                  std::filesystem::path p(trace.file());
                  j.trace_file = p.is_absolute() ? p.string() : (base_dir / p).string();
                } else {
                  j.seed = trace.generate_seed();
                }
                j.strategy = strategy;
                j.policy = policy;
                j.memory_bytes = b.memory_bytes;
                j.memory_fraction = b.memory_fraction;
                j.ffn_resident = b.ffn_resident;
                j.threads = t;
                out->push_back(std::move(j));
              }
            }
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

std::string Identity(const SweepJob& j) {
  return absl::StrCat(j.device, "|", j.model, "|", j.trace_file, "|", j.seed, "|", j.strategy, "|",
                      j.policy, "|", j.memory_bytes, "|", j.memory_fraction, "|", j.ffn_resident,
                      "|", j.threads, "|", j.tokens, "|", j.prompt_tokens, "|", j.profile, "|",
                      absl::StrJoin(j.options, ","));
}

}  // namespace

std::string SweepJob::Label() const {
  std::string budget = memory_bytes >= 0 ? FormatBytes(memory_bytes)
                       : memory_fraction >= 0
                           ? absl::StrFormat("%.0f%% of model", 100 * memory_fraction)
                           : absl::StrFormat("%.0f%% of FFN", 100 * ffn_resident);
  return absl::StrCat(strategy, policy.empty() ? "" : "/" + policy, " on ", device, ", ", model,
                      ", ", budget);
}

absl::StatusOr<SweepPlan> ParseSweep(const std::string& text, const std::string& source_name,
                                     const std::string& base_dir, int64_t max_configurations) {
  proto::Sweep sweep;
  if (absl::Status s = ParseTextProto(text, source_name, &sweep); !s.ok()) return s;
  if (sweep.grid().empty()) return FieldError(source_name, "the sweep has no grid");
  SweepPlan plan;
  plan.name = sweep.name();
  std::vector<SweepJob> all;
  int64_t configurations = 0;
  for (int i = 0; i < sweep.grid_size(); ++i) {
    const std::string where = absl::StrCat(
        source_name, ": grid ", i + 1,
        sweep.grid(i).name().empty() ? "" : absl::StrCat(" (", sweep.grid(i).name(), ")"));
    configurations += GridProduct(sweep.grid(i));
    if (configurations > max_configurations) {
      return FieldError(where,
                        absl::StrCat("takes the sweep past ", max_configurations,
                                     " configurations (the product of each grid's device, model, "
                                     "trace, strategy, policy, budget and threads lists); split "
                                     "the sweep into several files"));
    }
  }
  for (int i = 0; i < sweep.grid_size(); ++i) {
    const std::string where = absl::StrCat(
        source_name, ": grid ", i + 1,
        sweep.grid(i).name().empty() ? "" : absl::StrCat(" (", sweep.grid(i).name(), ")"));
    if (absl::Status s = ExpandGrid(sweep.grid(i), sweep, where, base_dir, &all); !s.ok()) {
      return s;
    }
  }
  std::set<std::string> seen;
  for (SweepJob& j : all) {
    if (seen.insert(Identity(j)).second) plan.jobs.push_back(std::move(j));
  }
  return plan;
}

absl::StatusOr<SweepPlan> LoadSweep(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, "sweep");
  if (!text.ok()) return text.status();
  return ParseSweep(*text, path, std::filesystem::path(path).parent_path().string());
}

absl::StatusOr<Shard> ParseShard(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  Shard s;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &s.index) ||
      !absl::SimpleAtoi(parts[1], &s.count) || s.count < 1 || s.index < 1 || s.index > s.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard '", text, "': expected K/N with 1 <= K <= N, e.g. 2/8"));
  }
  return s;
}

std::vector<SweepJob> SelectShard(const std::vector<SweepJob>& jobs, const Shard& shard) {
  std::vector<SweepJob> out;
  for (size_t i = static_cast<size_t>(shard.index - 1); i < jobs.size();
       i += static_cast<size_t>(shard.count)) {
    out.push_back(jobs[i]);
  }
  return out;
}

}  // namespace sparseflash::cli
