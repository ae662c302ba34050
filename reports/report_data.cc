#include "reports/report_data.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace sparseflash {
namespace {

ReportRun ToReportRun(const RunRow& r) {
  ReportRun x;
  x.id = r.id;
  x.linked_run = r.linked_run;
  x.mode = r.mode;
  x.device = r.config.device;
  x.model = r.config.model;
  x.trace = r.config.trace;
  x.strategy = r.config.strategy;
  x.policy = r.config.policy;
  x.options =
      r.config.options_json == "[]" || r.config.options_json == "{}" ? "" : r.config.options_json;
  x.origin = r.origin;
  x.threads = r.config.threads;
  x.tokens = r.config.tokens;
  x.prompt_tokens = r.config.prompt_tokens;
  x.latency_ms = r.token_latency_ms;
  const nlohmann::json f = nlohmann::json::parse(r.figures_json, nullptr, false);
  if (!f.is_object()) return x;
  // A figure the run could not observe is null: NaN here, "–" in tables.
  auto num = [&](const char* key) {
    if (f.contains(key) && f[key].is_null()) return std::numeric_limits<double>::quiet_NaN();
    return f.contains(key) && f[key].is_number() ? f[key].get<double>() : 0.0;
  };
  x.tokens_per_s = r.decode_tokens_per_s;
  x.policy_used = x.policy;
  if (x.policy_used.empty() && f.contains("options") && f["options"].is_object() &&
      f["options"].contains("policy") && f["options"]["policy"].is_string()) {
    x.policy_used = f["options"]["policy"].get<std::string>();
  }
  x.threads_used = x.threads;
  if (f.contains("options") && f["options"].is_object() && f["options"].contains("threads") &&
      f["options"]["threads"].is_string()) {
    x.threads_used = std::atoi(f["options"]["threads"].get<std::string>().c_str());
  }
  // The prediction at the rates checked around the run (replay --recheck-compute,
  // --recheck-storage): each check's object carries it.
  for (const char* check : {"compute_now", "storage_now"}) {
    if (!f.contains(check) || !f[check].is_object()) continue;
    const nlohmann::json& c = f[check];
    const char* key = "predicted_decode_tokens_per_s";
    if (c.contains(key) && c[key].is_number()) x.predicted_now_tokens_per_s = c[key].get<double>();
  }
  x.ttft_ms = num("ttft_ms");
  x.p50_ms = num("latency_ms_p50");
  x.p90_ms = num("latency_ms_p90");
  x.p99_ms = num("latency_ms_p99");
  x.hit_rate = num("hit_rate");
  x.flash_bytes_per_token = num("flash_bytes_per_token");
  x.io_stall_share = num("io_stall_share");
  x.cache_bytes = static_cast<int64_t>(num("cache_bytes"));
  x.memory_bytes = r.config.memory_bytes >= 0
                       ? r.config.memory_bytes
                       : static_cast<int64_t>(num("resident_bytes")) + x.cache_bytes;
  if (f.contains("breakdown_ms") && f["breakdown_ms"].is_object()) {
    // nlohmann::json sorts keys; keep the engine's order where it is known.
    static const char* kOrder[] = {"attention", "predictor",         "ffn_compute",
                                   "io_wait",   "memory_management", "other"};
    std::set<std::string> seen;
    for (const char* k : kOrder) {
      if (f["breakdown_ms"].contains(k)) {
        x.breakdown_ms.emplace_back(k, f["breakdown_ms"][k].get<double>());
        seen.insert(k);
      }
    }
    for (const auto& [k, v] : f["breakdown_ms"].items()) {
      if (!seen.count(k) && v.is_number()) x.breakdown_ms.emplace_back(k, v.get<double>());
    }
  }
  return x;
}

bool SameBudget(int64_t a, int64_t b) {
  return std::llabs(a - b) <= std::max<int64_t>(1, std::max(a, b) / 200);
}

const ReportRun* At(const std::vector<BudgetPoint>& curve, int64_t memory) {
  for (const BudgetPoint& p : curve) {
    if (SameBudget(p.memory_bytes, memory)) return p.run;
  }
  return nullptr;
}

void AddSpeedups(Study& s) {
  for (const char* baseline : {"llamacpp", "llmflash"}) {
    auto base = s.curves.find(baseline);
    if (base == s.curves.end()) continue;
    for (const auto& [strategy, curve] : s.curves) {
      if (strategy == baseline) continue;
      for (const BudgetPoint& p : curve) {
        const ReportRun* b = At(base->second, p.memory_bytes);
        if (b && b->tokens_per_s > 0) {
          s.speedups.push_back(
              {p.memory_bytes, strategy, baseline, p.run->tokens_per_s / b->tokens_per_s});
        }
      }
    }
  }
}

void ChooseBudget(Study& s) {
  std::map<int64_t, int> strategies_at;
  for (const auto& [strategy, curve] : s.curves) {
    for (const BudgetPoint& p : curve) ++strategies_at[p.memory_bytes];
  }
  int most = 0;
  for (const auto& [m, n] : strategies_at) most = std::max(most, n);
  std::vector<int64_t> candidates;
  for (const auto& [m, n] : strategies_at) {
    if (n == most) candidates.push_back(m);
  }
  if (candidates.empty()) return;
  s.chosen_budget = candidates[candidates.size() / 2];
  for (const auto& [strategy, curve] : s.curves) {
    if (const ReportRun* r = At(curve, s.chosen_budget)) s.at_chosen.push_back(r);
  }
}

void FindFastest(Study& s) {
  std::map<int64_t, const ReportRun*> best;
  for (const auto& [strategy, curve] : s.curves) {
    if (strategy == "in_memory") continue;  // the reference, not an offloading strategy
    for (const BudgetPoint& p : curve) {
      const ReportRun*& b = best[p.memory_bytes];
      if (!b || p.run->tokens_per_s > b->tokens_per_s) b = p.run;
    }
  }
  s.fastest.assign(best.begin(), best.end());
}

// Groups runs that differ only in their cache policy (a default-policy run
// counts as the policy it used) by strategy and budget.
void ComparePolicies(Study& s, const std::vector<const ReportRun*>& simulated) {
  std::map<std::string, std::vector<PolicyComparison>> by_strategy;
  for (const ReportRun* r : simulated) {
    if (!r->options.empty() || r->threads != 0) continue;
    const std::string policy = r->policy_used.empty() ? "default" : r->policy_used;
    std::vector<PolicyComparison>& groups = by_strategy[r->strategy];
    auto g = std::find_if(groups.begin(), groups.end(), [&](const PolicyComparison& c) {
      return SameBudget(c.memory_bytes, r->memory_bytes);
    });
    if (g == groups.end()) g = groups.insert(groups.end(), {r->strategy, r->memory_bytes, {}});
    g->runs.emplace(policy, r);  // the first of duplicates stays
  }
  for (auto& [strategy, groups] : by_strategy) {
    std::sort(groups.begin(), groups.end(),
              [](const PolicyComparison& a, const PolicyComparison& b) {
                return a.memory_bytes < b.memory_bytes;
              });
    for (PolicyComparison& g : groups) {
      if (g.runs.size() < 2) continue;
      for (const auto& [policy, run] : g.runs) s.policies[strategy][policy].push_back(run);
      s.policy_comparisons.push_back(std::move(g));
    }
  }
}

Study BuildStudy(const std::string& device, const std::string& model,
                 const std::vector<const ReportRun*>& simulated) {
  Study s{.device = device, .model = model};
  for (const ReportRun* r : simulated) {
    if (!r->plain()) continue;
    std::vector<BudgetPoint>& curve = s.curves[r->strategy];
    if (!At(curve, r->memory_bytes)) curve.push_back({r->memory_bytes, r});
  }
  for (auto& [strategy, curve] : s.curves) {
    std::sort(curve.begin(), curve.end(), [](const BudgetPoint& a, const BudgetPoint& b) {
      return a.memory_bytes < b.memory_bytes;
    });
  }
  AddSpeedups(s);
  ChooseBudget(s);
  FindFastest(s);
  ComparePolicies(s, simulated);
  return s;
}

// "a from X to Y" runs of one winner.
struct Stretch {
  std::string strategy;
  int64_t from = 0, to = 0;
};

}  // namespace

ByteUnit ByteUnitFor(double largest) {
  for (const ByteUnit u : {ByteUnit{"GB", 1e9}, ByteUnit{"MB", 1e6}, ByteUnit{"kB", 1e3}}) {
    if (largest >= u.bytes) return u;
  }
  return {"B", 1};
}

std::string FormatMemory(int64_t bytes) {
  const ByteUnit u = ByteUnitFor(static_cast<double>(bytes));
  return absl::StrFormat("%.2f %s", bytes / u.bytes, u.name);
}

std::string ReportRun::Variant() const {
  std::string v = strategy;
  if (!policy.empty()) absl::StrAppend(&v, "/", policy);
  if (!options.empty()) absl::StrAppend(&v, " ", options);
  if (threads != 0) absl::StrAppend(&v, " threads=", threads);
  return v;
}

ReportData BuildReportData(std::vector<RunRow> rows, const std::string& db_path) {
  ReportData d;
  d.db_path = db_path;
  d.runs.reserve(rows.size());
  for (const RunRow& r : rows) d.runs.push_back(ToReportRun(r));
  std::map<std::pair<std::string, std::string>, std::vector<const ReportRun*>> by_study;
  std::map<int64_t, const ReportRun*> by_id;
  for (const ReportRun& r : d.runs) {
    by_id[r.id] = &r;
    // Studies compare decode speed: a run that measures a prompt (prefill) is
    // listed with every run but is not a point of a decode curve.
    if (r.mode == "simulated" && r.origin.empty() && r.prompt_tokens == 0) {
      by_study[{r.device, r.model}].push_back(&r);
    }
  }
  for (const auto& [key, runs] : by_study)
    d.studies.push_back(BuildStudy(key.first, key.second, runs));
  for (const ReportRun& r : d.runs) {
    if (r.mode != "real" || r.linked_run == 0 || !by_id.count(r.linked_run)) continue;
    const ReportRun* p = by_id[r.linked_run];
    d.replays.push_back({&r, p, r.tokens_per_s > 0 ? p->tokens_per_s / r.tokens_per_s - 1 : 0});
  }
  return d;
}

absl::StatusOr<ReportData> LoadReportData(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::OpenForReading(path);
  if (!db.ok()) return db.status();
  absl::StatusOr<std::vector<RunRow>> rows = (*db)->ReadRuns();
  if (!rows.ok()) return rows.status();
  for (const RunRow& r : *rows) {
    if (!nlohmann::json::parse(r.figures_json, nullptr, false).is_object()) {
      return absl::DataLossError(
          absl::StrCat(path, ": run ", r.id, ": figures are not a JSON object"));
    }
  }
  absl::StatusOr<std::vector<ValidationRow>> validation = (*db)->ReadValidation();
  if (!validation.ok()) return validation.status();
  ReportData data = BuildReportData(*std::move(rows), path);
  data.validation = *std::move(validation);
  AttachPublished(&data);
  return data;
}

void AttachPublished(ReportData* data) {
  std::map<int64_t, const ReportRun*> by_id;
  for (const ReportRun& r : data->runs) by_id[r.id] = &r;
  for (Study& s : data->studies) {
    s.published.clear();
    for (const ValidationRow& v : data->validation) {
      auto run = by_id.find(v.run_id);
      if (run == by_id.end() || run->second->device != s.device || run->second->model != s.model) {
        continue;
      }
      s.published.push_back(absl::StrFormat("%s %s: %s %.4g, simulated here %.4g (%+.0f %%)",
                                            v.source, v.tag, v.metric, v.published, v.simulated,
                                            100 * v.error));
    }
  }
}

namespace {

// A baseline run that caches almost nothing (its hit rate under this) re-reads
// nearly every weight per token: a speedup over it says little about the
// faster strategy, so the headline quotes it apart.
constexpr double kDegenerateHitRate = 0.05;

bool Degenerate(const Study& s, const std::string& baseline, int64_t memory) {
  auto curve = s.curves.find(baseline);
  if (curve == s.curves.end()) return false;
  const ReportRun* r = At(curve->second, memory);
  return r != nullptr && r->hit_rate < kDegenerateHitRate;
}

std::string FactorRange(double lo, double hi) {
  const std::string a = absl::StrFormat("%.1f", lo), b = absl::StrFormat("%.1f", hi);
  return a == b ? b + "x" : absl::StrCat(a, "-", b, "x");
}

// "1.3-2.4x name" over the stretch's budgets where the baseline ran normally,
// then the range where it cached almost nothing, or "" without a baseline there.
std::string GainOver(const Study& s, const Stretch& st, const std::string& baseline,
                     const std::string& name) {
  double lo = 1e300, hi = 0, bad_lo = 1e300, bad_hi = 0;
  for (const Speedup& sp : s.speedups) {
    if (sp.strategy != st.strategy || sp.baseline != baseline || sp.memory_bytes < st.from ||
        sp.memory_bytes > st.to) {
      continue;
    }
    if (Degenerate(s, baseline, sp.memory_bytes)) {
      bad_lo = std::min(bad_lo, sp.factor), bad_hi = std::max(bad_hi, sp.factor);
    } else {
      lo = std::min(lo, sp.factor), hi = std::max(hi, sp.factor);
    }
  }
  const std::string caveat =
      absl::StrFormat("%s where %s's cache hits under %.0f %%", FactorRange(bad_lo, bad_hi), name,
                      100 * kDegenerateHitRate);
  if (hi <= 0) return bad_hi > 0 ? caveat : "";
  const std::string normal = absl::StrCat(FactorRange(lo, hi), " ", name);
  return bad_hi > 0 ? absl::StrCat(normal, "; ", caveat) : normal;
}

int OffloadingStrategiesAt(const Study& s, int64_t memory) {
  int n = 0;
  for (const auto& [strategy, curve] : s.curves) {
    if (strategy != "in_memory" && At(curve, memory)) ++n;
  }
  return n;
}

}  // namespace

std::string StudyHeadline(const Study& s, bool with_why) {
  if (s.fastest.empty()) return "No offloading strategy ran for this device and model.";
  std::vector<Stretch> stretches;
  std::vector<bool> alone;
  for (const auto& [memory, run] : s.fastest) {
    const bool only = OffloadingStrategiesAt(s, memory) == 1;
    if (stretches.empty() || stretches.back().strategy != run->strategy || alone.back() != only) {
      stretches.push_back({run->strategy, memory, memory});
      alone.push_back(only);
    } else {
      stretches.back().to = memory;
    }
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i < stretches.size(); ++i) {
    const Stretch& st = stretches[i];
    const std::string range = st.from == st.to ? absl::StrCat("at ", FormatMemory(st.from))
                                               : absl::StrCat("from ", FormatMemory(st.from),
                                                              " to ", FormatMemory(st.to));
    if (alone[i]) {
      // The others did not fit there or were not run there: the database cannot
      // tell which (infeasible budgets are not stored).
      parts.push_back(absl::StrCat(i == 0 ? "Only " : "only ", st.strategy, " ran ", range));
      continue;
    }
    std::vector<std::string> gains;
    for (const auto& [baseline, name] :
         {std::pair<std::string, std::string>{"llamacpp", "llama.cpp"},
          {"llmflash", "LLM in a Flash"}}) {
      if (std::string g = GainOver(s, st, baseline, name); !g.empty()) gains.push_back(g);
    }
    parts.push_back(
        absl::StrCat(st.strategy, " is fastest ", range,
                     gains.empty() ? "" : absl::StrCat(" (", absl::StrJoin(gains, ", "), ")")));
  }
  std::string headline = absl::StrCat(absl::StrJoin(parts, "; "), ".");
  if (with_why && !s.at_chosen.empty()) {
    std::vector<std::string> why;
    for (const ReportRun* r : s.at_chosen) {
      why.push_back(absl::StrFormat("%s reads %s per token and waits for flash %.0f%% of the time",
                                    r->strategy, FormatBytesShort(r->flash_bytes_per_token),
                                    100 * r->io_stall_share));
    }
    absl::StrAppend(&headline, " Why, at ", FormatMemory(s.chosen_budget), ": ",
                    absl::StrJoin(why, "; "), ".");
  }
  if (!s.published.empty()) {
    absl::StrAppend(&headline,
                    " Published for this phone and model: ", absl::StrJoin(s.published, "; "), ".");
  }
  return headline;
}

std::string FormatBytesShort(double bytes) {
  if (bytes >= 1e9) return absl::StrFormat("%.2f GB", bytes / 1e9);
  if (bytes >= 1e6) return absl::StrFormat("%.0f MB", bytes / 1e6);
  if (bytes >= 1e3) return absl::StrFormat("%.0f kB", bytes / 1e3);
  return absl::StrFormat("%.0f B", bytes);
}

}  // namespace sparseflash
