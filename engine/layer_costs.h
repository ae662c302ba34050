// Per-layer byte costs shared by the strategies: what attention, the KV cache,
// the predictor, a dense FFN and the LM head stream from DRAM per token, and the
// operations of a prefill. Derived from ModelBytes; value type.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model_bytes.h"
#include "engine/work_plan.h"
#include "traces/model_spec.h"

namespace sparseflash {

struct LayerCosts {
  int layers = 0;
  int64_t attention_bytes = 0;        // weights of one layer's attention
  int64_t kv_bytes_per_token = 0;     // one layer's K and V for one position
  int64_t predictor_bytes = 0;        // one layer's predictor(s)
  int64_t dense_ffn_bytes = 0;        // one layer's FFN as a dense engine streams it per token
  int64_t layer_ffn_bytes = 0;        // one layer's whole FFN (all experts)
  int64_t layer_ffn_flash_bytes = 0;  // the same as stored on flash (padded bundles)
  int64_t head_bytes = 0;             // LM head (and the embedding row)
  double ops_per_token = 0;           // 2 x weights a token uses (prefill, dense)

  // One layer's attention at KV position `position`.
  int64_t AttentionBytes(int position) const {
    return attention_bytes + kv_bytes_per_token * position;
  }
};

LayerCosts ComputeLayerCosts(const ModelSpec& model, const ModelBytes& bytes);

// Weights read from flash layer by layer, in file order: one I/O thread reads
// `bytes_per_layer` sequentially in `request_bytes` requests, at most
// `lookahead_layers` layers ahead of the compute that uses them (each layer in
// flight holds a buffer: 1 = PowerInfer-2's "preload the next layer", 0 = reads
// on demand). A dense prefill streams the FFN so; a decode step may stream
// attention so (a budget below the resident set).
struct LayerReads {
  int64_t bytes_per_layer = 0;
  int64_t request_bytes = 1;
  int lookahead_layers = 1;
  bool page_cache = false;  // the kernel reads them (FlashRead::page_cache)

  // Buffers the layers in flight hold: the one computed and those read ahead.
  int64_t buffer_bytes() const { return bytes_per_layer * (lookahead_layers + 1); }
};

// Layer `layer`'s read of `reads`, after the previous layer's read and once the
// buffer it fills is free: `users[i]` is the node that finishes with layer i's
// weights (the layer `lookahead + 1` back). Returns kNoNode when nothing is read.
NodeId PlanLayerRead(const LayerReads& reads, int layer, NodeId prev_read,
                     const std::vector<NodeId>& users, WorkPlan* plan);

// The budget left for a cache: `memory_bytes` minus `resident_bytes`, or
// `ffn_resident` x `cacheable_bytes`. Errors name both sizes.
absl::StatusOr<int64_t> CacheBudget(int64_t memory_bytes, double ffn_resident,
                                    int64_t resident_bytes, int64_t cacheable_bytes,
                                    const std::string& what);
// The neuron cache of a sparse offloading engine: CacheBudget over the FFN,
// at most what a cache can hold of it. A share of the FFN (`ffn_resident`)
// counts the FFN bytes the resident set already holds (a gate-threshold
// model's gate rows, its predictor).
absl::StatusOr<int64_t> NeuronCacheBudget(int64_t memory_bytes, double ffn_resident,
                                          int64_t resident_bytes, const ModelBytes& bytes,
                                          const std::string& what);

// Attention of every layer then `ffn(layer, after)` per layer, then the head;
// the common skeleton of a decode step, starting after `start`. With
// `attention_reads`, each layer's attention weights come from flash first
// (read ahead as LayerReads says). Returns the last node.
template <typename FfnFn>
NodeId PlanLayers(const LayerCosts& c, int position, int threads, ComputeUnit attention_unit,
                  WorkPlan* plan, FfnFn&& ffn, NodeId start = kNoNode,
                  const LayerReads& attention_reads = {}) {
  NodeId prev = start;
  NodeId prev_read = kNoNode;
  std::vector<NodeId> attentions;  // per layer, when its weights are read
  for (int l = 0; l < c.layers; ++l) {
    const NodeId first = static_cast<NodeId>(plan->size());
    const NodeId read = PlanLayerRead(attention_reads, l, prev_read, attentions, plan);
    if (read != kNoNode) prev_read = read;
    NodeId attention =
        plan->Parallel(ComputeKind::kAttention, attention_unit, c.AttentionBytes(position), 0,
                       attention_unit == ComputeUnit::kNpu ? 1 : threads, {prev, read});
    if (read != kNoNode) attentions.push_back(attention);
    prev = ffn(l, attention);
    plan->StampLayer(first, l);
  }
  return plan->Parallel(ComputeKind::kOther, ComputeUnit::kCpu, c.head_bytes, 0, threads, {prev});
}

}  // namespace sparseflash

namespace sparseflash {

// A dense prefill of `tokens` tokens: each layer's compute (operations on
// `unit`, split over `parts`) waits for the previous layer and for that layer's
// reads (PowerInfer-2 v3 section 4.1).
NodeId PlanDensePrefill(const LayerCosts& c, int tokens, ComputeUnit unit, int parts,
                        const LayerReads& reads, WorkPlan* plan);

}  // namespace sparseflash
