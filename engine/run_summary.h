// The figures of a run (simulated or measured), from the engine's per-step
// records: decode tokens/s, time to first token, per-token latency percentiles,
// neuron-cache hit rate, flash traffic, I/O stall share and where the mean
// token's critical path goes. Field names match `simulate --json`.
// Decode figures are the steady state: the first WarmupTokens(n) tokens of a run
// (caches filling, windows starting empty) are left out and reported on their
// own as the cold start (cold_tokens_per_s, beside the time to first token).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "nlohmann/json.hpp"

namespace sparseflash {

// Tokens of a run of `tokens` that count as its warm-up: 32, or a quarter of a
// run shorter than 128 tokens.
uint64_t WarmupTokens(uint64_t tokens);

struct RunSummary {
  uint64_t tokens = 0;         // decoded
  uint64_t warmup_tokens = 0;  // of which the cold start, left out below
  double decode_tokens_per_s = 0;
  double cold_tokens_per_s = 0;  // over the warm-up tokens
  double ttft_ms = 0;            // prefill, or the first token when there is no prompt
  double latency_ms_mean = 0;
  double latency_ms_p50 = 0, latency_ms_p90 = 0, latency_ms_p99 = 0;
  double hit_rate = 0;              // cache hits / accesses (predicted neurons, or pages)
  double miss_rate_mean = 0;        // per-token miss rate, mean over tokens
  double miss_rate_p99 = 0;         // per-token miss rate, 99th percentile
  double dram_bytes_per_token = 0;  // bytes the compute tasks streamed from DRAM
  double flash_bytes_per_token = 0;
  double flash_throughput_bytes_per_s = 0;  // bytes read / time the device was busy
  // Mean reads offered to and held by the device while it was busy (StepRecord);
  // 0 = unknown.
  double flash_reads_offered = 0;
  double flash_reads_held = 0;
  double io_ms_per_token = 0;                          // time the device is busy per token
  double io_stall_share = 0;                           // I/O wait share of the critical path
  std::array<double, kBreakdownParts> breakdown_ms{};  // mean token; sums to latency_ms_mean
  // Figures the run could not observe (by their JSON names): null in ToJson,
  // whatever the fields above hold.
  std::vector<std::string> not_observed;
};

RunSummary Summarize(const RunRecord& record);
nlohmann::ordered_json ToJson(const RunSummary& s);

// The q-quantile (0..1) of `values` by linear interpolation; 0 when empty.
double Quantile(std::vector<double> values, double q);

}  // namespace sparseflash
