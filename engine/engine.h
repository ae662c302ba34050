// The inference engine: a completion-driven state machine on one thread. For
// each step (the prompt's prefill, then one decode token at a time) it asks the
// strategy for the step's work plan, submits every node whose dependencies are
// met to the Env's FlashDevice or ComputeBackend, and advances on completions.
// It never sleeps and never reads a global clock; the world that owns the Env
// (the simulator's event loop or the real devices' completion threads) delivers
// completions on the engine's thread. It records per step the latency, the
// critical path split by kind of work, cache hits and flash traffic.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "engine/env.h"
#include "engine/strategy.h"
#include "engine/token_source.h"
#include "engine/work_plan.h"

namespace sparseflash {

enum BreakdownPart {
  kBdAttention,
  kBdPredictor,
  kBdFfnCompute,
  kBdIoWait,
  kBdMemoryManagement,
  kBdOther,
  kBreakdownParts
};
const char* BreakdownName(int part);

struct StepRecord {
  Nanos latency;
  std::array<Nanos, kBreakdownParts> breakdown{};  // critical path; sums to latency
  uint64_t cache_hits = 0;
  uint64_t cache_accesses = 0;
  int64_t flash_bytes = 0;
  Nanos flash_busy;
  // Reads offered to and held by the device, integrated over the step
  // (FlashDevice::offered_time, held_time).
  Nanos flash_offered;
  Nanos flash_held;
  uint64_t nodes = 0;
  int64_t compute_bytes = 0;  // DRAM bytes the step's compute tasks streamed
};

struct RunRecord {
  bool has_prefill = false;
  StepRecord prefill;
  std::vector<StepRecord> tokens;
};

struct EngineOptions {
  int prompt_tokens = 0;
  uint64_t max_tokens = UINT64_MAX;  // decode steps; the source may end first
};

class Engine : public CompletionSink {
 public:
  // Called when a node finishes (for timelines), with the step index (-1 = prefill).
  using NodeObserver = std::function<void(int64_t step, NodeId id, const WorkNode& node)>;

  Engine(const Env& env, Strategy* strategy, TokenSource* source, const EngineOptions& options);

  // Plans and submits the first step; the world then delivers completions.
  void Start();
  bool finished() const { return finished_; }
  const absl::Status& status() const { return status_; }
  const RunRecord& record() const { return record_; }
  void set_observer(NodeObserver observer) { observer_ = std::move(observer); }

  void OnReadDone(uint64_t tag, bool ok) override;
  void OnComputeDone(uint64_t tag) override { Complete(static_cast<NodeId>(tag)); }

 private:
  void NextStep();
  void Snapshot();  // start-of-step clock, flash and cache counters
  void RunPlan(NodeId last);
  void MakeReady(NodeId id, NodeId pred);
  void Complete(NodeId id);
  void FinishStep();
  void Fail(absl::Status status);
  StepRecord Measure() const;

  Env env_;
  Strategy* strategy_;
  TokenSource* source_;
  EngineOptions options_;
  WorkPlan plan_;
  NodeId last_ = kNoNode;
  size_t completed_ = 0;
  int64_t step_ = -1;  // -1 = prefill
  Nanos step_start_;
  int64_t flash_bytes_at_start_ = 0;
  Nanos flash_busy_at_start_;
  Nanos flash_offered_at_start_;
  Nanos flash_held_at_start_;
  CacheCounters counters_at_start_;
  std::vector<NodeId> completions_;  // pending completions (no recursion)
  bool draining_ = false;
  bool finished_ = false;
  absl::Status status_;
  RunRecord record_;
  NodeObserver observer_;
};

}  // namespace sparseflash
