// A strategy composes the engine's parts (layout, cache, predictor, pipeline)
// into the work of each token: powerinfer2, llmflash, llamacpp, in_memory. New
// strategies are one file in strategies/ and one line in strategies/registry.cc.
// A strategy owns its cache state and makes every caching decision while it
// plans a token, so the simulated and the real world see the same decisions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/access_profile.h"
#include "engine/model_bytes.h"
#include "engine/strategy_options.h"
#include "engine/work_plan.h"
#include "traces/activation.h"
#include "traces/model_spec.h"

namespace sparseflash {

// Upper bound on compute threads (options, --threads, sweeps).
inline constexpr int kMaxThreads = 1024;

class ClassificationTape;
class TapeReplay;

// A run's part in sharing its planner's classification with other runs
// (engine/classification_tape.h): at most one of the two is set, and a
// strategy that cannot share ignores both (a tape it was to record stays empty).
struct ClassificationSharing {
  ClassificationTape* record = nullptr;
  TapeReplay* replay = nullptr;
};

// What a strategy is given: the model, the trace, the budget and what the
// machine has. Exactly one of memory_bytes and ffn_resident is set (>= 0).
struct StrategyContext {
  ModelSpec model;
  ModelBytes bytes;
  TraceHeader trace;
  int64_t memory_bytes = -1;  // whole-process budget
  double ffn_resident = -1;   // fraction of the FFN weights the cache holds
  std::string policy;         // cache policy; "" = the strategy's default
  int threads = 0;            // compute threads; 0 = the strategy's default
  int prompt_tokens = 0;
  int decode_tokens = 0;
  int cpu_cores = 1;
  bool npu_present = false;
  // The NPU's dense rate over the CPU's sparse rate (their DRAM ceilings): how
  // many neurons the NPU computes densely in the time the CPU computes one.
  double npu_cpu_rate_ratio = 1;
  std::string page_cache = "lru";              // the device's page cache ("lru" or "mglru")
  int read_ahead_kb = 128;                     // the device's kernel read-ahead window, KiB
  int max_request_kb = 1280;                   // the device's largest kernel request, KiB
  const ActivationProfile* profile = nullptr;  // offline activation profile
  const AccessOracle* oracle = nullptr;        // future accesses (Belady only)
  uint64_t seed = 1;
  ClassificationSharing sharing;

  int context_tokens() const { return prompt_tokens + decode_tokens; }
};

// How the strategy uses the machine; the world builds its devices from it.
struct ResourcePlan {
  int compute_threads = 1;
  // A dedicated I/O submitter on a core of this class; "" = the compute
  // threads issue their own reads.
  std::string io_core_class = "big";
  int io_issuers = 1;  // threads issuing reads concurrently (command-queue contention)
  bool uses_npu = false;
};

// Memory accounting of a configured strategy, for reports.
struct MemoryPlan {
  int64_t resident_bytes = 0;  // pinned: weights, KV cache, predictors, scales, buffers
  int64_t cache_bytes = 0;     // neuron cache (or page cache)
  // Of resident_bytes, the buffers that read batches fill (layers of weights
  // streamed from flash): a real run's read buffers are these bytes.
  int64_t read_buffer_bytes = 0;
  // The strategy's reads land in its cache (FlashRead::fills_cache): a real
  // run reads them into part of the cache's memory, not beside it.
  bool reads_fill_cache = false;

  // The memory a sparse FFN's active neurons lie scattered in: the cache, or
  // the resident weights for a strategy without one (as a real run places them).
  int64_t ffn_span_bytes() const { return cache_bytes > 0 ? cache_bytes : resident_bytes; }
};

struct CacheCounters {
  uint64_t hits = 0;
  uint64_t accesses = 0;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual ResourcePlan resources() const = 0;
  virtual MemoryPlan memory() const = 0;
  // Work of a prompt of `tokens` tokens (prefill); returns its last node.
  virtual NodeId PlanPrefill(int tokens, WorkPlan* plan) = 0;
  // Work of one decode step at KV position `position`; returns its last node.
  virtual NodeId PlanToken(const TokenActivations& token, int position, WorkPlan* plan) = 0;
  virtual void EndToken() {}
  // Called when node `id` of the running plan finishes, before its successors
  // are released: a strategy whose work depends on computed values (the real
  // model's gate decides which neurons to read) adds nodes and edges here.
  virtual void OnNodeDone(NodeId id, WorkPlan* plan) {}
  // Neuron-cache (or page-cache) hits and accesses so far.
  virtual CacheCounters counters() const = 0;
};

// Creates strategy `name` reading its settings from `options` (unknown keys are
// an error) and sizing its memory from `context`. An unknown name lists the
// known ones; a budget below the resident set names both sizes.
absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(const std::string& name,
                                                       StrategyOptions& options,
                                                       const StrategyContext& context);
std::vector<std::string> StrategyNames();

// Every option of strategy `name` as a run with these settings would resolve it
// (defaults filled in, --policy and --threads applied), without a run: errors for
// unknown keys and values that do not parse or lie out of range. Budget problems
// are not errors here (they depend on the run's budget).
struct StrategySettings {
  std::vector<std::string> options;  // "key=value"
  std::string policy;                // "" = the strategy's default
  int threads = 0;                   // 0 = the strategy's default
  int cpu_cores = 8;
  bool npu_present = true;
  std::string page_cache = "lru";
  int read_ahead_kb = 128;
  int max_request_kb = 1280;
};
absl::StatusOr<std::map<std::string, std::string>> ResolveStrategyOptions(
    const std::string& name, const StrategySettings& settings, const ModelSpec& model);
absl::Status CheckStrategyOptions(const std::string& name, const std::vector<std::string>& options,
                                  const ModelSpec& model, bool npu_present);

}  // namespace sparseflash
