// A sweep file (tools/sweep.proto, text format) expanded into the ordered list
// of runs it describes, and the deterministic 1/N of that list a shard runs.
// Names are checked here so a typo fails before the first run, naming the file
// and the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseflash::cli {

// One configuration of a sweep, as the user wrote it (names, not profiles).
struct SweepJob {
  std::string grid, device, model, trace_file, strategy, policy;
  uint64_t seed = 1;    // of the generated trace when trace_file is empty
  std::string profile;  // the offline profile's source ("" = generator)
  int64_t memory_bytes = -1;
  double memory_fraction = -1, ffn_resident = -1;
  int threads = 0, prompt_tokens = 0;
  uint64_t tokens = 256;
  std::vector<std::string> options;

  std::string Label() const;  // "powerinfer2 oneplus12 mistral-7b 4.0 GiB"
};

// The most configurations a sweep file may expand to (the product of each
// grid's lists, summed over its grids, before duplicates are removed). Larger
// studies are split into several files.
inline constexpr int64_t kMaxSweepConfigurations = 100'000;

struct SweepPlan {
  std::string name;
  std::vector<SweepJob> jobs;  // in grid order, duplicates removed
};

// Reads and expands the sweep file at `path`.
absl::StatusOr<SweepPlan> LoadSweep(const std::string& path);
// Expands sweep text; relative trace files resolve against `base_dir`. A sweep
// expanding past `max_configurations` is refused (a fuzzer passes a smaller
// limit, so that its inputs stay fast).
absl::StatusOr<SweepPlan> ParseSweep(const std::string& text, const std::string& source_name,
                                     const std::string& base_dir,
                                     int64_t max_configurations = kMaxSweepConfigurations);

// "K/N" with 1 <= K <= N.
struct Shard {
  int index = 1, count = 1;
};
absl::StatusOr<Shard> ParseShard(const std::string& text);
// The jobs of shard K of N: every N-th job starting at the K-th.
std::vector<SweepJob> SelectShard(const std::vector<SweepJob>& jobs, const Shard& shard);

}  // namespace sparseflash::cli
