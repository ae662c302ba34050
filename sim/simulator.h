// One simulated run: a device profile, a model, a trace (a file, or the model's
// synthetic profile generated on the fly), a strategy with its options and a
// memory budget. Builds the strategy, the simulated flash and compute from the
// profile and the strategy's resource plan, runs the engine on the event queue
// and returns the engine's records with the memory and resource plans used.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "devices/device_profile.h"
#include "engine/engine.h"
#include "engine/run_setup.h"
#include "engine/strategy.h"
#include "sim/timeline.h"
#include "traces/model_spec.h"

namespace sparseflash {

struct SimulationConfig {
  DeviceProfile device;
  ModelSpec model;
  std::string trace_path;                     // "" = generate the model's default trace
  std::shared_ptr<const TokenTrace> decoded;  // its tokens decoded beforehand (optional)
  ProfileCache* profiles = nullptr;  // offline profiles from files shared by runs (optional)
  ClassificationSharing sharing;     // the planner's classification, recorded or replayed
  std::string strategy = "powerinfer2";
  std::vector<std::string> options;  // "key=value"
  std::string policy;                // "" = the strategy's default
  int64_t memory_bytes = -1;
  double ffn_resident = -1;
  int prompt_tokens = 0;
  uint64_t tokens = 256;
  int threads = 0;
  uint64_t seed = 1;
  int generator_threads = 1;        // threads generating the trace on the fly (same tokens for any)
  int generator_setup_threads = 0;  // threads making its streams first (GeneratorOptions)
  std::string profile;              // the offline profile's source (RunSetupConfig::profile)
  bool event_log = false;
  Timeline* timeline = nullptr;
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct SimulationResult {
  RunRecord record;
  MemoryPlan memory;
  ResourcePlan resources;
  std::map<std::string, std::string> options;  // every strategy option, as used
  uint64_t events = 0;
  std::vector<std::string> event_log;
  std::vector<Nanos> worker_busy;
  double energy_j_per_token = 0;  // 0 when the profile states no power figures
  bool over_app_limit = false;    // uses more memory than the device gives one app
  std::string warning;            // why, when it does
};

absl::StatusOr<SimulationResult> Simulate(const SimulationConfig& config);

// The run-setup part of a simulation's configuration (cores and NPU from its device).
RunSetupConfig RunSetupOf(const SimulationConfig& config);

}  // namespace sparseflash
