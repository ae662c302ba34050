#include "tools/validation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/embedded_file.h"
#include "common/files.h"
#include "common/heap_reuse.h"
#include "common/shell_word.h"
#include "common/textproto.h"
#include "common/units.h"
#include "devices/device_catalog.h"
#include "engine/model_bytes.h"
#include "engine/run_setup.h"
#include "engine/run_summary.h"
#include "tools/run_store.h"
#include "tools/validation.pb.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/trace_stats.h"

namespace sparseflash {
extern const EmbeddedFile kValidationFiles[];
extern const int kValidationFiles_count;
}  // namespace sparseflash

namespace sparseflash::cli {
namespace {

using proto::ValidationEntry;

constexpr uint64_t kTraceStatTokens = 300;

absl::Status EntryError(const std::string& file, const ValidationEntry& e,
                        const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": entry '", e.id(), "': ", what));
}

// The whole-process budget an entry's budget field stands for.
absl::Status ApplyBudget(const ValidationEntry& e, const std::string& file, SimulationConfig* c) {
  const ModelBytes b = ComputeModelBytes(c->model);
  switch (e.budget_case()) {
    case ValidationEntry::kMemory: {
      absl::StatusOr<int64_t> bytes = ParseByteSize(e.memory());
      if (!bytes.ok()) return EntryError(file, e, std::string(bytes.status().message()));
      c->memory_bytes = *bytes;
      return absl::OkStatus();
    }
    case ValidationEntry::kMemoryFraction:
      c->memory_bytes = std::llround(e.memory_fraction() * b.model_bytes());
      return absl::OkStatus();
    case ValidationEntry::kFfnResident:
      c->ffn_resident = e.ffn_resident();
      return absl::OkStatus();
    case ValidationEntry::kWeightsFraction:
      c->memory_bytes = std::llround(e.weights_fraction() * b.model_bytes()) +
                        b.kv_bytes(c->prompt_tokens + static_cast<int>(c->tokens)) +
                        b.runtime_bytes;
      return absl::OkStatus();
    case ValidationEntry::BUDGET_NOT_SET:
      break;
  }
  return EntryError(file, e,
                    "no budget: give memory, memory_fraction, ffn_resident or weights_fraction");
}

absl::StatusOr<ValidationCase> ToCase(const ValidationEntry& e, const std::string& file) {
  ValidationCase v;
  v.id = e.id();
  v.group = e.group();
  v.source = e.source();
  v.tag = e.tag();
  v.note = e.note();
  v.known_miss = e.known_miss();
  v.file = file;
  v.metric = static_cast<ValidationMetric>(e.metric());
  v.published = e.published();
  v.tolerance = e.tolerance() > 0 ? e.tolerance() : 0.25;
  v.window = e.window();
  v.device_ref = e.device();
  v.model_ref = e.model();
  if (v.id.empty()) return EntryError(file, e, "an entry needs an id");
  if (!(v.published > 0)) return EntryError(file, e, "published must be > 0");
  absl::StatusOr<ModelSpec> model = LoadModel(e.model());
  if (!model.ok()) return EntryError(file, e, std::string(model.status().message()));
  v.config.model = *model;
  v.trace_only = v.metric == ValidationMetric::kTraceNewPerToken ||
                 v.metric == ValidationMetric::kTraceWindowShare;
  if (v.trace_only) {
    if (v.window < 1 || v.window > kMaxWindow) {
      return EntryError(file, e, absl::StrCat("window must be in [1, ", kMaxWindow, "]"));
    }
    return v;
  }
  absl::StatusOr<DeviceProfile> device = LoadDevice(e.device());
  if (!device.ok()) return EntryError(file, e, std::string(device.status().message()));
  SimulationConfig& c = v.config;
  c.device = *device;
  c.strategy = e.strategy();
  c.policy = e.policy();
  c.options.assign(e.option().begin(), e.option().end());
  c.prompt_tokens = e.prompt_tokens();
  c.tokens = e.tokens() > 0 ? e.tokens() : kDefaultDecodeTokens;
  c.threads = e.threads();
  if (absl::Status s = ApplyBudget(e, file, &c); !s.ok()) return s;
  return v;
}

absl::Status AddFile(const std::string& text, const std::string& file,
                     std::vector<ValidationCase>* out) {
  proto::ValidationCatalog catalog;
  if (absl::Status s = ParseTextProto(text, file, &catalog); !s.ok()) return s;
  if (catalog.entry().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        file,
        ": holds no entry (a catalog is `entry { id: ... }` blocks, as validation/*.textproto)"));
  }
  for (const ValidationEntry& e : catalog.entry()) {
    absl::StatusOr<ValidationCase> c = ToCase(e, file);
    if (!c.ok()) return c.status();
    for (const ValidationCase& o : *out) {
      if (o.id == c->id) return EntryError(file, e, absl::StrCat("id also used in ", o.file));
    }
    out->push_back(*std::move(c));
  }
  return absl::OkStatus();
}

// A statistic of the model's generated trace (seed 1).
absl::StatusOr<double> TraceMetric(const ValidationCase& v, std::string* detail) {
  TraceGenerator generator(v.config.model, {.seed = 1, .tokens = kTraceStatTokens});
  TraceStatsAccumulator stats(generator.header());
  TokenActivations token;
  while (generator.Next(&token)) stats.Add(token);
  const TraceStats s = stats.Finish();
  const double fresh = s.overall.new_per_token[v.window - 1];
  const double window = s.overall.window_cache_fraction[v.window - 1];
  *detail = absl::StrFormat("k = %d: %.2f %% new per token, window %.1f %% of the FFN (%s sets)",
                            v.window, 100 * fresh, 100 * window, s.window_set);
  return v.metric == ValidationMetric::kTraceNewPerToken ? fresh : window;
}

double CpuUtilization(const SimulationResult& r) {
  const int n = r.resources.compute_threads;
  double busy = 0, wall = 0;
  for (int i = 0; i < n && i < static_cast<int>(r.worker_busy.size()); ++i) {
    busy += r.worker_busy[i].seconds();
  }
  for (const StepRecord& t : r.record.tokens) wall += t.latency.seconds();
  if (r.record.has_prefill) wall += r.record.prefill.latency.seconds();
  return n > 0 && wall > 0 ? busy / (n * wall) : 0;
}

double Pick(const ValidationCase& v, const SimulationResult& r, const RunSummary& s) {
  switch (v.metric) {
    case ValidationMetric::kDecodeTokensPerS:
      return s.decode_tokens_per_s;
    case ValidationMetric::kIoMsPerToken:
      return s.io_ms_per_token;
    case ValidationMetric::kHitRate:
      return s.hit_rate;
    case ValidationMetric::kMissRateMean:
      return s.miss_rate_mean;
    case ValidationMetric::kMissRateP99:
      return s.miss_rate_p99;
    case ValidationMetric::kIoShare:
      return s.io_stall_share;
    case ValidationMetric::kComputeShare:
      return 1 - s.io_stall_share;
    case ValidationMetric::kPrefillTokensPerS:
      return r.record.has_prefill ? v.config.prompt_tokens / r.record.prefill.latency.seconds() : 0;
    case ValidationMetric::kDramGbPerS:
      return s.dram_bytes_per_token * s.decode_tokens_per_s / 1e9;
    case ValidationMetric::kEnergyJPerToken:
      return r.energy_j_per_token;
    case ValidationMetric::kCpuUtilization:
      return CpuUtilization(r);
    case ValidationMetric::kTraceNewPerToken:
    case ValidationMetric::kTraceWindowShare:
      break;
  }
  return 0;
}

ValidationResult RunOne(const ValidationCase& v) {
  ValidationResult out;
  out.entry = &v;
  if (v.trace_only) {
    absl::StatusOr<double> value = TraceMetric(v, &out.detail);
    if (!value.ok()) {
      out.status = value.status();
      return out;
    }
    out.simulated = *value;
  } else {
    absl::StatusOr<SimulationResult> r = Simulate(v.config);
    if (!r.ok()) {
      out.status = r.status();
      return out;
    }
    const RunSummary s = Summarize(r->record);
    out.simulated = Pick(v, *r, s);
    out.detail = absl::StrFormat(
        "%.3g tok/s; flash %s/token at %.0f MB/s; hit %.1f %%; I/O %.0f %% of the path; "
        "resident %s + cache %s",
        s.decode_tokens_per_s, FormatBytes(static_cast<int64_t>(s.flash_bytes_per_token)),
        s.flash_throughput_bytes_per_s / 1e6, 100 * s.hit_rate, 100 * s.io_stall_share,
        FormatBytes(r->memory.resident_bytes), FormatBytes(r->memory.cache_bytes));
    out.run = MakeRunRow(MakeRunConfig(v.config), "simulated",
                         RunFigures(v.config, s, r->memory, r->options, ExtrasOf(*r)), r->record);
  }
  out.error = out.simulated / v.published - 1;
  return out;
}

}  // namespace

const char* MetricName(ValidationMetric m) {
  switch (m) {
    case ValidationMetric::kDecodeTokensPerS:
      return "decode tokens/s";
    case ValidationMetric::kIoMsPerToken:
      return "I/O ms per token";
    case ValidationMetric::kHitRate:
      return "hit rate";
    case ValidationMetric::kMissRateMean:
      return "mean miss rate";
    case ValidationMetric::kMissRateP99:
      return "p99 miss rate";
    case ValidationMetric::kIoShare:
      return "I/O share";
    case ValidationMetric::kComputeShare:
      return "compute share";
    case ValidationMetric::kPrefillTokensPerS:
      return "prefill tokens/s";
    case ValidationMetric::kDramGbPerS:
      return "DRAM GB/s";
    case ValidationMetric::kEnergyJPerToken:
      return "J per token";
    case ValidationMetric::kCpuUtilization:
      return "CPU utilization";
    case ValidationMetric::kTraceNewPerToken:
      return "new per token";
    case ValidationMetric::kTraceWindowShare:
      return "window share";
  }
  return "?";
}

bool ValidationResult::within() const {
  return status.ok() && std::fabs(error) <= entry->tolerance;
}

std::string ValidationResult::Explanation() const {
  const std::string& known = entry->known_miss;
  if (within()) return known.empty() ? "" : "agrees now, though the catalog names a known miss";
  return known.empty() ? "no reason recorded (known_miss is empty)" : known;
}

absl::StatusOr<std::vector<ValidationCase>> LoadValidationCatalog(
    const std::vector<std::string>& extra_files) {
  std::vector<ValidationCase> out;
  for (int i = 0; i < kValidationFiles_count; ++i) {
    const std::string name = absl::StrCat("validation/", kValidationFiles[i].name);
    if (absl::Status s = AddFile(kValidationFiles[i].contents, name, &out); !s.ok()) return s;
  }
  for (const std::string& path : extra_files) {
    absl::StatusOr<std::string> text = ReadWholeFile(path, "validation catalog");
    if (!text.ok()) return text.status();
    if (absl::Status s = AddFile(*text, path, &out); !s.ok()) return s;
  }
  return out;
}

std::vector<ValidationResult> RunValidation(const std::vector<ValidationCase>& cases,
                                            const ValidationOptions& o) {
  TuneHeapForSimulation(o.jobs);  // the runs reuse each other's per-neuron arrays
  std::vector<ValidationResult> results(cases.size());
  std::atomic<size_t> next{0};
  std::atomic<int> done{0};
  std::mutex progress_mu;
  auto work = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      results[i] = RunOne(cases[i]);
      const int d = ++done;
      if (o.progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        o.progress(d, static_cast<int>(cases.size()));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::max(1, o.jobs); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  return results;
}

namespace {

bool SameDeviceModelStrategy(const SimulationConfig& a, const SimulationConfig& b) {
  return a.device.name == b.device.name && a.model.name == b.model.name && a.strategy == b.strategy;
}

// A run's configuration as the results database keys it, less what a
// published figure does not depend on (the decode tokens and the seed).
std::string ComparableConfig(const SimulationConfig& c) {
  RunConfig k = MakeRunConfig(c);
  k.tokens = 0;
  k.seed = 0;
  return k.CanonicalText();
}

}  // namespace

std::vector<ValidationResult> PublishedForRun(const std::vector<ValidationCase>& catalog,
                                              const SimulationConfig& c,
                                              const SimulationResult& r) {
  std::vector<ValidationResult> out;
  if (!c.trace_path.empty()) return out;
  const std::string run = ComparableConfig(c);
  const RunSummary s = Summarize(r.record);
  for (const ValidationCase& v : catalog) {
    const SimulationConfig& e = v.config;
    if (v.trace_only || !SameDeviceModelStrategy(e, c) || ComparableConfig(e) != run) continue;
    ValidationResult m;
    m.entry = &v;
    m.simulated = Pick(v, r, s);
    m.error = m.simulated / v.published - 1;
    out.push_back(m);
  }
  return out;
}

std::string SimulateCommand(const ValidationCase& v) {
  if (v.trace_only) return "";
  const SimulationConfig& c = v.config;
  std::string out =
      absl::StrCat("sparseflash simulate --device ", ShellWord(v.device_ref), " --model ",
                   ShellWord(v.model_ref), " --strategy ", ShellWord(c.strategy));
  if (c.memory_bytes >= 0) absl::StrAppend(&out, " --memory ", c.memory_bytes);
  if (c.ffn_resident >= 0) absl::StrAppend(&out, " --ffn-resident ", c.ffn_resident);
  if (!c.policy.empty()) absl::StrAppend(&out, " --policy ", ShellWord(c.policy));
  if (c.threads > 0) absl::StrAppend(&out, " --threads ", c.threads);
  if (c.prompt_tokens > 0) absl::StrAppend(&out, " --prompt-tokens ", c.prompt_tokens);
  if (c.tokens != kDefaultDecodeTokens) absl::StrAppend(&out, " --tokens ", c.tokens);
  for (const std::string& o : c.options) absl::StrAppend(&out, " --option ", ShellWord(o));
  return out;
}

std::vector<std::string> EntriesNear(const std::vector<ValidationCase>& catalog,
                                     const SimulationConfig& c) {
  std::vector<std::string> out;
  for (const ValidationCase& v : catalog) {
    if (!v.trace_only && SameDeviceModelStrategy(v.config, c)) out.push_back(v.id);
  }
  return out;
}

absl::Status StoreValidation(const std::string& db_path,
                             const std::vector<ValidationResult>& results) {
  absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(db_path);
  if (!db.ok()) return db.status();
  return (*db)->InTransaction([&]() -> absl::Status {
    for (const ValidationResult& r : results) {
      if (!r.status.ok()) continue;
      int64_t run_id = 0;
      if (!r.entry->trace_only) {
        absl::StatusOr<int64_t> found = (*db)->Find(r.run.config.Key(), "simulated");
        if (!found.ok()) return found.status();
        run_id = *found;
        if (run_id == 0) {
          absl::StatusOr<int64_t> id = (*db)->Insert(r.run);
          if (!id.ok()) return id.status();
          run_id = *id;
        }
      }
      const ValidationCase& e = *r.entry;
      absl::Status s = (*db)->PutValidation({.entry = e.id,
                                             .group = e.group,
                                             .source = e.source,
                                             .tag = e.tag,
                                             .metric = MetricName(e.metric),
                                             .detail = r.detail,
                                             .known_miss = e.known_miss,
                                             .published = e.published,
                                             .simulated = r.simulated,
                                             .error = r.error,
                                             .tolerance = e.tolerance,
                                             .run_id = run_id});
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
}

ErrorSummary Summarize(const std::vector<const ValidationResult*>& results) {
  ErrorSummary s;
  std::vector<double> errors;
  for (const ValidationResult* r : results) {
    if (!r->status.ok()) continue;
    errors.push_back(std::fabs(r->error));
    s.within += r->within() ? 1 : 0;
  }
  s.entries = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  s.median = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  s.max = errors.back();
  return s;
}

nlohmann::ordered_json ValidationResultJson(const ValidationResult& r) {
  const ValidationCase& e = *r.entry;
  nlohmann::ordered_json j;
  j["id"] = e.id;
  j["group"] = e.group;
  j["source"] = e.source;
  j["tag"] = e.tag;
  j["metric"] = MetricName(e.metric);
  j["published"] = e.published;
  if (r.status.ok()) {
    j["simulated"] = r.simulated;
    j["error"] = r.error;
    j["within_tolerance"] = r.within();
    if (!r.detail.empty()) j["detail"] = r.detail;
    if (const std::string why = r.Explanation(); !why.empty()) j["explanation"] = why;
    if (const std::string command = SimulateCommand(e); !command.empty()) j["command"] = command;
  } else {
    j["failed"] = std::string(r.status.message());
  }
  return j;
}

std::string FormatMetricValue(ValidationMetric m, double v) {
  switch (m) {
    case ValidationMetric::kHitRate:
    case ValidationMetric::kMissRateMean:
    case ValidationMetric::kMissRateP99:
    case ValidationMetric::kIoShare:
    case ValidationMetric::kComputeShare:
    case ValidationMetric::kCpuUtilization:
    case ValidationMetric::kTraceNewPerToken:
    case ValidationMetric::kTraceWindowShare:
      return absl::StrFormat("%.1f %%", 100 * v);
    default:
      return absl::StrFormat("%.4g", v);
  }
}

std::string ValidationMarkdown(const std::vector<ValidationResult>& results) {
  std::string md =
      "| Entry | Source | Metric | Published | Simulated | Error | Within |\n"
      "|---|---|---|---:|---:|---:|---|\n";
  std::map<std::string, std::vector<const ValidationResult*>> by_group;
  std::vector<const ValidationResult*> all;
  for (const ValidationResult& r : results) {
    const ValidationCase& e = *r.entry;
    by_group[e.group].push_back(&r);
    all.push_back(&r);
    const std::string simulated =
        r.status.ok() ? FormatMetricValue(e.metric, r.simulated) : "failed";
    const std::string error = r.status.ok() ? absl::StrFormat("%+.1f %%", 100 * r.error)
                                            : std::string(r.status.message());
    absl::StrAppendFormat(
        &md, "| %s | %s %s | %s | %s | %s | %s | %s |\n", e.id, e.source, e.tag,
        MetricName(e.metric), FormatMetricValue(e.metric, e.published), simulated, error,
        r.status.ok() && r.within() ? "yes" : absl::StrFormat("no (%.0f %%)", 100 * e.tolerance));
  }
  md += "\n| Group | Entries | Within | Median error | Max error |\n|---|---:|---:|---:|---:|\n";
  auto row = [&md](const std::string& name, const std::vector<const ValidationResult*>& rs) {
    const ErrorSummary s = Summarize(rs);
    absl::StrAppendFormat(&md, "| %s | %d | %d | %.1f %% | %.1f %% |\n", name, s.entries, s.within,
                          100 * s.median, 100 * s.max);
  };
  for (const auto& [group, rs] : by_group) row(group, rs);
  row("all", all);
  std::string why;
  for (const ValidationResult& r : results) {
    const std::string explanation = r.Explanation();
    if (explanation.empty()) continue;
    const std::string error = r.status.ok() ? absl::StrFormat("%+.1f %%", 100 * r.error) : "failed";
    absl::StrAppendFormat(&why, "- `%s` (%s): %s\n", r.entry->id, error, explanation);
  }
  if (!why.empty())
    md += "\nOutside the tolerance, and why (the catalog's `known_miss`):\n\n" + why;
  return md;
}

}  // namespace sparseflash::cli
