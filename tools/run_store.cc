#include "tools/run_store.h"

#include <algorithm>
#include <fstream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "devices/device_catalog.h"
#include "engine/run_setup.h"
#include "engine/strategy.h"

namespace sparseflash::cli {
namespace {

std::string HashText(const std::string& text) {
  return absl::StrFormat("%016x", StableHash64(text));
}

std::string HashFileUncached(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  uint64_t h = kStableHashSeed;
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    h = StableHash64(std::string_view(buf.data(), static_cast<size_t>(in.gcount())), h);
  }
  return absl::StrFormat("%016x", h);
}

// Sweeps key thousands of runs on a few trace files; hash each once.
std::string HashFile(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::string>* hashes = new std::map<std::string, std::string>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = hashes->find(path);
  if (it == hashes->end()) it = hashes->emplace(path, HashFileUncached(path)).first;
  return it->second;
}

}  // namespace

RunConfig MakeRunConfig(const SimulationConfig& c) {
  RunConfig k;
  k.device = c.device.name;
  k.device_hash = HashText(DeviceProfileToText(c.device));
  k.model = c.model.name;
  k.trace = c.trace_path.empty() ? "generated" : c.trace_path;
  k.trace_hash = c.trace_path.empty() ? "" : HashFile(c.trace_path);
  k.strategy = c.strategy;
  k.memory_bytes = c.memory_bytes;
  k.ffn_resident = c.ffn_resident;
  k.prompt_tokens = c.prompt_tokens;
  k.tokens = c.tokens;
  k.seed = c.seed;
  // Only what differs from the strategy's defaults, as the strategy resolves it
  // (--policy and --threads applied): a run that names a default and one that
  // leaves it out are one configuration. As given when they do not resolve (the
  // run will fail and say why).
  StrategySettings given{.options = c.options,
                         .policy = c.policy,
                         .threads = c.threads,
                         .cpu_cores = c.device.total_cores(),
                         .npu_present = c.device.npu.present,
                         .page_cache = c.device.dram.page_cache,
                         .read_ahead_kb = c.device.flash.read_ahead_kb,
                         .max_request_kb = c.device.flash.max_request_kb};
  StrategySettings defaults = given;
  defaults.options.clear();
  defaults.policy.clear();
  defaults.threads = 0;
  absl::StatusOr<std::map<std::string, std::string>> resolved =
      ResolveStrategyOptions(c.strategy, given, c.model);
  absl::StatusOr<std::map<std::string, std::string>> base =
      ResolveStrategyOptions(c.strategy, defaults, c.model);
  std::vector<std::string> options;
  k.policy = c.policy;
  k.threads = c.threads;
  if (resolved.ok() && base.ok()) {
    k.policy = "";
    k.threads = 0;
    for (const auto& [key, value] : *resolved) {
      auto d = base->find(key);
      if (d != base->end() && d->second == value) continue;
      if (key == "policy") {
        k.policy = value;
      } else if (key == "threads") {
        k.threads = std::stoi(value);
      } else {
        options.push_back(absl::StrCat(key, "=", value));
      }
    }
  } else {
    options = c.options;
  }
  const std::string profile = ProfileSource(c.profile);
  if (profile != "generator") {
    options.push_back(absl::StrCat(
        "profile=", profile == "oracle" ? profile : absl::StrCat("file:", HashFile(profile))));
  }
  std::sort(options.begin(), options.end());
  k.options_json = nlohmann::json(options).dump();
  return k;
}

SimulatedExtras ExtrasOf(const SimulationResult& r) {
  return {.over_app_limit = r.over_app_limit, .energy_j_per_token = r.energy_j_per_token};
}

nlohmann::ordered_json RunFigures(const SimulationConfig& c, const RunSummary& s,
                                  const MemoryPlan& memory,
                                  const std::map<std::string, std::string>& options,
                                  const SimulatedExtras& extras) {
  nlohmann::ordered_json j = ToJson(s);
  if (extras.energy_j_per_token > 0) j["energy_j_per_token"] = extras.energy_j_per_token;
  if (extras.over_app_limit) j["over_app_limit"] = true;
  j["strategy"] = c.strategy;
  j["device"] = c.device.name;
  j["model"] = c.model.name;
  j["resident_bytes"] = memory.resident_bytes;
  j["cache_bytes"] = memory.cache_bytes;
  j["options"] = options;
  j["profile"] = ProfileSource(c.profile);
  return j;
}

RunRow MakeRunRow(const RunConfig& config, const std::string& mode,
                  const nlohmann::ordered_json& figures, const RunRecord& record) {
  RunRow r;
  r.config = config;
  r.mode = mode;
  r.figures_json = figures.dump();
  r.decode_tokens_per_s = figures.value("decode_tokens_per_s", 0.0);
  for (const StepRecord& t : record.tokens) r.token_latency_ms.push_back(t.latency.millis());
  return r;
}

absl::StatusOr<int64_t> StoreRun(const std::string& path, const RunRow& row) {
  absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(path);
  if (!db.ok()) return db.status();
  return (*db)->Insert(row);
}

}  // namespace sparseflash::cli
