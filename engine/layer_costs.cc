#include "engine/layer_costs.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace sparseflash {

LayerCosts ComputeLayerCosts(const ModelSpec& m, const ModelBytes& b) {
  LayerCosts c;
  c.layers = m.layers;
  c.attention_bytes = b.attention_bytes / m.layers;
  c.kv_bytes_per_token = b.kv_bytes_per_token / m.layers;
  c.predictor_bytes = b.predictor_bytes / m.layers;
  const int64_t expert_bytes = int64_t{m.d_ffn} * b.bundle_bytes;
  c.layer_ffn_bytes = expert_bytes * m.experts;
  c.layer_ffn_flash_bytes = int64_t{m.d_ffn} * b.bundle_flash_bytes * m.experts;
  c.dense_ffn_bytes = expert_bytes * m.top_k;
  c.head_bytes = m.tied_embeddings ? b.embedding_bytes : b.embedding_bytes / 2;
  const double d = m.d_model;
  const double attention = 2 * d * m.heads * m.head_dim + 2 * d * m.kv_heads * m.head_dim;
  const double ffn = static_cast<double>(m.ffn_matrices()) * d * m.d_ffn * m.top_k;
  c.ops_per_token = 2 * (m.layers * (attention + ffn) + static_cast<double>(m.vocab) * d);
  return c;
}

absl::StatusOr<int64_t> CacheBudget(int64_t memory_bytes, double ffn_resident,
                                    int64_t resident_bytes, int64_t cacheable_bytes,
                                    const std::string& what) {
  if (ffn_resident >= 0) {
    if (ffn_resident > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--ffn-resident ", ffn_resident, " is above 1"));
    }
    return static_cast<int64_t>(std::llround(ffn_resident * cacheable_bytes));
  }
  if (memory_bytes < resident_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("memory budget ", FormatBytes(memory_bytes), " is below the resident set of ",
                     FormatBytes(resident_bytes), " (", what, "); raise --memory to at least ",
                     FormatBytes(resident_bytes)));
  }
  return memory_bytes - resident_bytes;
}

absl::StatusOr<int64_t> NeuronCacheBudget(int64_t memory_bytes, double ffn_resident,
                                          int64_t resident_bytes, const ModelBytes& bytes,
                                          const std::string& what) {
  absl::StatusOr<int64_t> budget =
      CacheBudget(memory_bytes, ffn_resident, resident_bytes, bytes.ffn_bytes, what);
  if (!budget.ok()) return budget;
  const int64_t held = ffn_resident >= 0 ? bytes.ffn_in_predictor_bytes : 0;
  return std::clamp<int64_t>(*budget - held, 0, bytes.cacheable_ffn_bytes());
}

}  // namespace sparseflash

namespace sparseflash {

NodeId PlanLayerRead(const LayerReads& reads, int layer, NodeId prev_read,
                     const std::vector<NodeId>& users, WorkPlan* plan) {
  if (reads.bytes_per_layer <= 0) return kNoNode;
  FlashRead r;
  r.request_bytes = reads.request_bytes;
  r.count =
      static_cast<int32_t>((reads.bytes_per_layer + reads.request_bytes - 1) / reads.request_bytes);
  r.max_in_flight = 1;
  r.sequential = true;
  r.page_cache = reads.page_cache;
  // The buffer this read fills is free once the layer `lookahead + 1` back is done.
  const int freed = layer - 1 - reads.lookahead_layers;
  return plan->Read(r, {prev_read, freed >= 0 ? users[freed] : kNoNode});
}

NodeId PlanDensePrefill(const LayerCosts& c, int tokens, ComputeUnit unit, int parts,
                        const LayerReads& reads, WorkPlan* plan) {
  const double ops_per_layer = c.ops_per_token * tokens / c.layers;
  std::vector<NodeId> computes;  // per layer
  NodeId prev_read = kNoNode;
  for (int l = 0; l < c.layers; ++l) {
    const NodeId first = static_cast<NodeId>(plan->size());
    const NodeId prev_compute = l > 0 ? computes.back() : kNoNode;
    const NodeId read = PlanLayerRead(reads, l, prev_read, computes, plan);
    if (read != kNoNode) prev_read = read;
    computes.push_back(plan->Parallel(ComputeKind::kOther, unit, 0, ops_per_layer,
                                      unit == ComputeUnit::kNpu ? 1 : parts, {prev_compute, read}));
    plan->StampLayer(first, l);
  }
  return plan->Join({computes.back(), prev_read});
}

}  // namespace sparseflash
