// in_memory: every weight resident, nothing read from flash (llama.cpp or
// MLC-LLM when the model fits; reference/techniques.md section 4). Dense by
// default; sparse=true computes only the active neurons (PowerInfer-2 with
// nothing offloaded), plus its predictor. Infeasible when the model, KV cache
// and buffers exceed the budget.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "engine/layer_costs.h"
#include "engine/strategies/strategies.h"

namespace sparseflash {
namespace {

class InMemory : public Strategy {
 public:
  InMemory(const StrategyContext& ctx, int threads, bool sparse, MemoryPlan memory)
      : threads_(threads),
        experts_(ctx.model.experts),
        sparse_neuron_bytes_(ctx.bytes.sparse_neuron_bytes),
        sparse_(sparse),
        memory_(memory),
        costs_(ComputeLayerCosts(ctx.model, ctx.bytes)) {}

  ResourcePlan resources() const override {
    return {.compute_threads = threads_, .io_core_class = "", .uses_npu = false};
  }
  MemoryPlan memory() const override { return memory_; }
  CacheCounters counters() const override { return {}; }

  NodeId PlanPrefill(int tokens, WorkPlan* plan) override {
    return PlanDensePrefill(costs_, tokens, ComputeUnit::kCpu, threads_, {}, plan);
  }

  NodeId PlanToken(const TokenActivations& token, int position, WorkPlan* plan) override {
    return PlanLayers(
        costs_, position, threads_, ComputeUnit::kCpu, plan, [&](int l, NodeId attention) {
          if (!sparse_) return DenseFfn(costs_.dense_ffn_bytes, attention, plan);
          const std::vector<NeuronSet>& chosen = token.layers[l].experts;
          int64_t active = 0;
          for (const NeuronSet& s : chosen) active += static_cast<int64_t>(s.active.size());
          // The chosen experts' predictors (a gate-threshold model's: its gate rows).
          const int64_t predictor = costs_.predictor_bytes / experts_ * std::ssize(chosen);
          const NodeId predicted = plan->Parallel(ComputeKind::kPredictor, ComputeUnit::kCpu,
                                                  predictor, 0, threads_, {attention});
          return plan->Parallel(ComputeKind::kFfn, ComputeUnit::kCpu, active * sparse_neuron_bytes_,
                                0, threads_, {predicted});
        });
  }

 private:
  // FFN rows streamed whole, matrix by matrix, in order.
  NodeId DenseFfn(int64_t bytes, NodeId after, WorkPlan* plan) {
    const NodeId first = static_cast<NodeId>(plan->size());
    const NodeId done =
        plan->Parallel(ComputeKind::kFfn, ComputeUnit::kCpu, bytes, 0, threads_, {after});
    plan->MarkInOrder(first);
    return done;
  }

  int threads_;
  int64_t experts_;  // per layer
  int64_t sparse_neuron_bytes_;
  bool sparse_;
  MemoryPlan memory_;
  LayerCosts costs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Strategy>> MakeInMemory(StrategyOptions& opt,
                                                       const StrategyContext& ctx) {
  const ModelBytes& b = ctx.bytes;
  const int threads = ReadThreads(opt, ctx, DefaultComputeThreads(ctx.cpu_cores));
  const bool sparse = opt.Bool("sparse", false);
  if (absl::Status st = opt.Check("in_memory"); !st.ok()) return st;
  const int64_t needed = b.model_bytes() + b.kv_bytes(ctx.context_tokens()) + b.runtime_bytes +
                         (sparse ? b.separate_predictor_bytes() : 0);
  if (ctx.ffn_resident >= 0 && ctx.ffn_resident < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("in_memory keeps every weight resident; --ffn-resident ", ctx.ffn_resident,
                     " is below 1 (use --ffn-resident 1 or --memory)"));
  }
  if (ctx.memory_bytes >= 0 && ctx.memory_bytes < needed) {
    return absl::ResourceExhaustedError(
        absl::StrCat("in_memory is infeasible: memory budget ", FormatBytes(ctx.memory_bytes),
                     " is below the model, KV cache and buffers, ", FormatBytes(needed)));
  }
  return std::unique_ptr<Strategy>(new InMemory(ctx, threads, sparse, {needed, 0}));
}

}  // namespace sparseflash
