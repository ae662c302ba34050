#include "engine/run_summary.h"

#include <algorithm>
#include <cmath>

namespace sparseflash {

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(values.size() - 1, lo + 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

uint64_t WarmupTokens(uint64_t tokens) { return std::min<uint64_t>(32, tokens / 4); }

RunSummary Summarize(const RunRecord& r) {
  RunSummary s;
  s.tokens = r.tokens.size();
  if (r.tokens.empty()) return s;
  s.warmup_tokens = WarmupTokens(s.tokens);
  double cold_ns = 0;
  for (uint64_t i = 0; i < s.warmup_tokens; ++i)
    cold_ns += static_cast<double>(r.tokens[i].latency.ns);
  s.cold_tokens_per_s = cold_ns > 0 ? s.warmup_tokens / (cold_ns * 1e-9) : 0;
  std::vector<double> latency, miss_rate;
  double total_ns = 0, bytes = 0, busy_ns = 0, io_ns = 0, offered_ns = 0, held_ns = 0;
  uint64_t hits = 0, accesses = 0;
  for (size_t i = s.warmup_tokens; i < r.tokens.size(); ++i) {
    const StepRecord& t = r.tokens[i];
    latency.push_back(t.latency.millis());
    total_ns += static_cast<double>(t.latency.ns);
    bytes += static_cast<double>(t.flash_bytes);
    s.dram_bytes_per_token += static_cast<double>(t.compute_bytes);
    busy_ns += static_cast<double>(t.flash_busy.ns);
    offered_ns += static_cast<double>(t.flash_offered.ns);
    held_ns += static_cast<double>(t.flash_held.ns);
    io_ns += static_cast<double>(t.breakdown[kBdIoWait].ns);
    hits += t.cache_hits;
    accesses += t.cache_accesses;
    if (t.cache_accesses > 0) {
      miss_rate.push_back(1.0 - static_cast<double>(t.cache_hits) / t.cache_accesses);
    }
    for (int p = 0; p < kBreakdownParts; ++p) s.breakdown_ms[p] += t.breakdown[p].millis();
  }
  const double n = static_cast<double>(r.tokens.size() - s.warmup_tokens);
  for (double& b : s.breakdown_ms) b /= n;
  s.dram_bytes_per_token /= n;
  for (double m : miss_rate) s.miss_rate_mean += m / static_cast<double>(miss_rate.size());
  s.decode_tokens_per_s = n / (total_ns * 1e-9);
  s.ttft_ms = r.has_prefill ? r.prefill.latency.millis() : r.tokens.front().latency.millis();
  s.latency_ms_mean = total_ns / n * 1e-6;
  s.latency_ms_p50 = Quantile(latency, 0.5);
  s.latency_ms_p90 = Quantile(latency, 0.9);
  s.latency_ms_p99 = Quantile(latency, 0.99);
  s.hit_rate = accesses ? static_cast<double>(hits) / accesses : 0;
  s.miss_rate_p99 = Quantile(miss_rate, 0.99);
  s.flash_bytes_per_token = bytes / n;
  s.flash_throughput_bytes_per_s = busy_ns > 0 ? bytes / (busy_ns * 1e-9) : 0;
  s.flash_reads_offered = busy_ns > 0 ? offered_ns / busy_ns : 0;
  s.flash_reads_held = busy_ns > 0 ? held_ns / busy_ns : 0;
  s.io_ms_per_token = busy_ns / n * 1e-6;
  s.io_stall_share = total_ns > 0 ? io_ns / total_ns : 0;
  return s;
}

nlohmann::ordered_json ToJson(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["tokens"] = s.tokens;
  j["warmup_tokens"] = s.warmup_tokens;
  j["decode_tokens_per_s"] = s.decode_tokens_per_s;
  j["cold_tokens_per_s"] = s.cold_tokens_per_s;
  j["ttft_ms"] = s.ttft_ms;
  j["latency_ms_mean"] = s.latency_ms_mean;
  j["latency_ms_p50"] = s.latency_ms_p50;
  j["latency_ms_p90"] = s.latency_ms_p90;
  j["latency_ms_p99"] = s.latency_ms_p99;
  j["hit_rate"] = s.hit_rate;
  j["miss_rate_mean"] = s.miss_rate_mean;
  j["miss_rate_p99"] = s.miss_rate_p99;
  j["dram_bytes_per_token"] = s.dram_bytes_per_token;
  j["flash_bytes_per_token"] = s.flash_bytes_per_token;
  j["flash_throughput_bytes_per_s"] = s.flash_throughput_bytes_per_s;
  j["flash_reads_offered"] = s.flash_reads_offered;
  j["flash_reads_held"] = s.flash_reads_held;
  j["io_ms_per_token"] = s.io_ms_per_token;
  j["io_stall_share"] = s.io_stall_share;
  nlohmann::ordered_json b;
  for (int p = 0; p < kBreakdownParts; ++p) b[BreakdownName(p)] = s.breakdown_ms[p];
  j["breakdown_ms"] = b;
  for (const std::string& name : s.not_observed) j[name] = nullptr;
  if (!s.not_observed.empty()) j["not_observed"] = s.not_observed;
  return j;
}

}  // namespace sparseflash
