// The real TinyStories model run by the engine: each decode step is planned
// layer by layer as the computed values decide it. Attention and the gate
// (resident, the exact predictor) run first; the gate says which neurons need
// their up/down bundle; bundles in the neuron cache are used from DRAM, the rest
// read from the flash file into a staging buffer; the FFN finishes; read bundles
// are offered to the cache. The cache holds real bytes in a fixed arena sized by
// the budget. Greedy decoding: after the prompt, each step feeds the arg-max.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/neuron_cache.h"
#include "engine/strategy.h"
#include "engine/tiny/tiny_model.h"

namespace sparseflash {

// Bundles on flash, (layer, neuron) order, each padded to the model's bundle_stride().
absl::Status WriteTinyFlashFile(const TinyModel& model, const std::string& path);

struct TinyStrategyOptions {
  std::string strategy = "powerinfer2";  // powerinfer2 | llmflash | llamacpp | in_memory
  std::string policy;                    // "" = the strategy's
  int64_t memory_bytes = -1;             // whole budget, or
  double ffn_resident = -1;              // share of up/down bundles cached
  int io_depth = 32;
};

struct TinyOutput {
  std::vector<int> tokens;  // fed at each position, then the last chosen
  std::vector<std::vector<std::vector<uint32_t>>> active;  // [position][layer]
};

class TinyStrategy : public Strategy {
 public:
  static absl::StatusOr<std::unique_ptr<TinyStrategy>> Create(const TinyModel& model,
                                                              std::vector<int> prompt,
                                                              const TinyStrategyOptions& options);
  ~TinyStrategy() override;

  ResourcePlan resources() const override { return {.compute_threads = 1, .io_core_class = ""}; }
  MemoryPlan memory() const override { return memory_; }
  CacheCounters counters() const override;
  NodeId PlanPrefill(int tokens, WorkPlan* plan) override { return plan->Join({}); }
  NodeId PlanToken(const TokenActivations& token, int position, WorkPlan* plan) override;
  void OnNodeDone(NodeId id, WorkPlan* plan) override;
  void EndToken() override;

  const TinyOutput& output() const { return out_; }
  int64_t cache_capacity_neurons() const { return slots_; }

 private:
  TinyStrategy(const TinyModel& model, std::vector<int> prompt, const TinyStrategyOptions& o);
  absl::Status Init(int64_t cache_bytes, const std::string& policy);
  NodeId PlanAttention(int layer, WorkPlan* plan);
  void PlanFfn(int layer, WorkPlan* plan);
  void Admit(int layer);
  CacheKey Key(int layer, uint32_t neuron) const { return layer * model_.config().hidden + neuron; }

  const TinyModel& model_;
  std::vector<int> prompt_;
  TinyStrategyOptions o_;
  bool dense_ = false;
  TinyForward fwd_;
  std::unique_ptr<NeuronCache> cache_;
  MemoryPlan memory_;
  int64_t slots_ = 0;
  uint8_t* arena_ = nullptr;    // slots_ bundles
  uint8_t* staging_ = nullptr;  // one layer's reads, bundle_stride() apart (O_DIRECT aligned)
  std::vector<int32_t> slot_of_key_;
  std::vector<int32_t> free_slots_;
  // The step in progress.
  int pos_ = 0, token_ = 0, next_ = 0;
  NodeId end_ = kNoNode, attention_ = kNoNode, ffn_ = kNoNode;
  int layer_ = 0;
  std::vector<uint32_t> needed_, missing_;
  std::vector<const uint8_t*> bundles_;
  TinyOutput out_;
};

}  // namespace sparseflash
