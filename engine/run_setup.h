// Everything a run needs before its first token, for either world: the run's
// tokens (a trace file, or the model's generator on the fly), the offline
// activation profile, the Belady oracle when asked for, and the strategy built
// from its options and the budget. Simulated and real runs share it, so both
// make the same decisions from the same inputs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/access_profile.h"
#include "engine/strategy.h"
#include "engine/token_source.h"
#include "traces/model_spec.h"

namespace sparseflash {

// Most decode (or prompt) tokens one run may ask for.
inline constexpr uint64_t kMaxRunTokens = 1'000'000;
// Decode tokens of a run when none are given: the same for simulate, sweeps,
// the demo and validation, so a configuration's figures do not depend on where
// it was run.
inline constexpr uint64_t kDefaultDecodeTokens = 256;

struct RunSetupConfig {
  ModelSpec model;
  std::string trace_path;  // "" = generate the model's default trace
  uint64_t seed = 1;
  int generator_threads = 1;        // threads generating on the fly; the tokens do not depend on it
  int generator_setup_threads = 0;  // threads making its streams first (GeneratorOptions)
  // The run's tokens decoded beforehand and shared by runs: the generated trace
  // of seed `seed`, or the file `trace_path`'s (at least `tokens` tokens, or all
  // the file has); null = generate them on the fly, or read the file.
  std::shared_ptr<const TokenTrace> decoded;
  // Offline profiles from trace files shared with other runs (a sweep's); null: none.
  ProfileCache* profiles = nullptr;
  // The planner's classification recorded for, or replayed from, runs that
  // differ only in scheduling (engine/classification_tape.h); none by default.
  ClassificationSharing sharing;
  uint64_t tokens = 256;
  std::string strategy = "powerinfer2";
  std::vector<std::string> options;  // "key=value"
  std::string policy;
  int64_t memory_bytes = -1;
  double ffn_resident = -1;
  int prompt_tokens = 0;
  int threads = 0;
  int cpu_cores = 1;
  bool npu_present = false;
  double npu_cpu_rate_ratio = 1;   // see StrategyContext
  std::string page_cache = "lru";  // the device's page cache (llamacpp)
  int read_ahead_kb = 128;         // the device's kernel read-ahead window, KiB (llamacpp)
  int max_request_kb = 1280;       // the device's largest kernel request, KiB (llamacpp)
  // Where the offline activation profile (hot neurons) comes from, disjoint from
  // the evaluated tokens unless asked: "generator" (default: the model's
  // generator profile, its long-run activation probabilities), "oracle" (the
  // run's own tokens: an upper bound, labelled so), or a trace file to profile.
  std::string profile;
};

// The profile source a configuration means ("" is "generator").
std::string ProfileSource(const std::string& profile);

struct RunSetup {
  std::shared_ptr<const ActivationProfile> profile;  // may be shared by runs
  std::unique_ptr<TraceOracle> oracle;
  std::unique_ptr<Strategy> strategy;
  std::unique_ptr<TokenSource> source;  // at most `tokens` tokens, advancing the oracle
  std::map<std::string, std::string> options;
  TraceHeader header;
  uint64_t tokens = 0;
};

absl::StatusOr<RunSetup> PrepareRun(const RunSetupConfig& config);

}  // namespace sparseflash
