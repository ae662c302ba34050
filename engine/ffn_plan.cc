#include "engine/ffn_plan.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sparseflash {

absl::StatusOr<PipelineMode> ParsePipeline(const std::string& name) {
  if (name == "none") return PipelineMode::kNone;
  if (name == "matrix") return PipelineMode::kMatrix;
  if (name == "cluster") return PipelineMode::kCluster;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pipeline '", name, "'; known: none, matrix, cluster"));
}

namespace {

// One cluster of flash-resident neurons.
struct FlashCluster {
  int64_t neurons = 0;
  int64_t active = 0;  // of which the gate output is non-zero
};

// Splits `total` neurons (of which `active` non-zero) into clusters of at most
// `size`, spreading the active ones evenly.
std::vector<FlashCluster> SplitClusters(int64_t total, int64_t active, int size) {
  std::vector<FlashCluster> out;
  if (total <= 0) return out;
  const int64_t n = (total + size - 1) / size;
  int64_t given = 0, given_active = 0;
  for (int64_t i = 0; i < n; ++i) {
    FlashCluster c;
    c.neurons = total * (i + 1) / n - given;
    c.active = active * (i + 1) / n - given_active;
    given += c.neurons;
    given_active += c.active;
    out.push_back(c);
  }
  return out;
}

class FfnPlanner {
 public:
  FfnPlanner(const FfnPlanOptions& o, WorkPlan* plan) : o_(o), plan_(plan) {}

  NodeId Plan(const FfnCounts& c, NodeId after) {
    std::vector<NodeId> ends;
    NodeId resident_done = PlanResident(c, after, &ends);
    const bool sync = o_.pipeline == PipelineMode::kNone;
    NodeId start = sync ? resident_done : after;
    std::vector<FlashCluster> clusters =
        SplitClusters(c.missing(), c.missing_active, std::max(1, o_.cluster_neurons));
    if (o_.pipeline == PipelineMode::kCluster) {
      for (const FlashCluster& k : clusters) ends.push_back(PlanClusterChain(k, start));
    } else {
      ends.push_back(PlanBarriered(clusters, start));
    }
    NodeId end = plan_->Join(ends);
    plan_->Depend(end, after);
    return end;
  }

 private:
  ComputeTask Task(int64_t bytes, bool cached) const {
    return {.kind = ComputeKind::kFfn, .unit = o_.unit, .bytes = bytes, .cached = cached};
  }
  FlashRead Read(int64_t bytes, int64_t count) const {
    return {.request_bytes = bytes,
            .count = static_cast<int32_t>(count),
            .max_in_flight = o_.io_depth,
            .range_bytes = o_.range_bytes};
  }
  int64_t GateBytes(const FlashCluster& k) const { return k.neurons * o_.gate_row_bytes; }
  int64_t RestBytes(const FlashCluster& k) const {
    return k.active * (o_.bundle_bytes - o_.gate_row_bytes);
  }
  bool HasSecond() const { return o_.reads.second_reads > 0; }

  NodeId PlanResident(const FfnCounts& c, NodeId after, std::vector<NodeId>* ends) {
    std::vector<FlashCluster> clusters =
        SplitClusters(c.resident(), c.resident_active, std::max(1, o_.cluster_neurons));
    std::vector<NodeId> mine;
    for (const FlashCluster& k : clusters) {
      mine.push_back(plan_->Compute(Task(GateBytes(k) + RestBytes(k), true), {after}));
    }
    ends->insert(ends->end(), mine.begin(), mine.end());
    return mine.empty() ? after : plan_->Join(mine);
  }

  // Cluster-level pipeline: each cluster is its own chain.
  NodeId PlanClusterChain(const FlashCluster& k, NodeId start) {
    NodeId gio = plan_->Read(Read(o_.reads.first_bytes, k.neurons * o_.reads.first_reads), {start});
    if (!HasSecond()) return plan_->Compute(Task(GateBytes(k) + RestBytes(k), false), {gio});
    NodeId gc = plan_->Compute(Task(GateBytes(k), false), {gio});
    if (k.active == 0) return gc;
    NodeId udio = plan_->Read(Read(o_.reads.second_bytes, k.active * o_.reads.second_reads), {gc});
    return plan_->Compute(Task(RestBytes(k), false), {udio});
  }

  // Matrix-level or no pipeline: each stage of every cluster waits for the
  // previous stage of all clusters.
  NodeId PlanBarriered(const std::vector<FlashCluster>& clusters, NodeId start) {
    if (clusters.empty()) return start;
    std::vector<NodeId> stage;
    for (const FlashCluster& k : clusters) {
      stage.push_back(
          plan_->Read(Read(o_.reads.first_bytes, k.neurons * o_.reads.first_reads), {start}));
    }
    NodeId reads_done = plan_->Join(stage);
    stage.clear();
    for (const FlashCluster& k : clusters) {
      int64_t bytes = HasSecond() ? GateBytes(k) : GateBytes(k) + RestBytes(k);
      stage.push_back(plan_->Compute(Task(bytes, false), {reads_done}));
    }
    NodeId gate_done = plan_->Join(stage);
    if (!HasSecond()) return gate_done;
    stage.clear();
    for (const FlashCluster& k : clusters) {
      if (k.active == 0) continue;
      stage.push_back(
          plan_->Read(Read(o_.reads.second_bytes, k.active * o_.reads.second_reads), {gate_done}));
    }
    NodeId second_done = plan_->Join(stage);
    plan_->Depend(second_done, gate_done);
    stage.clear();
    for (const FlashCluster& k : clusters) {
      if (k.active > 0) stage.push_back(plan_->Compute(Task(RestBytes(k), false), {second_done}));
    }
    NodeId all = plan_->Join(stage);
    plan_->Depend(all, second_done);
    return all;
  }

  const FfnPlanOptions& o_;
  WorkPlan* plan_;
};

}  // namespace

NodeId PlanSparseFfn(const FfnCounts& counts, const FfnPlanOptions& options, NodeId after,
                     WorkPlan* plan) {
  return FfnPlanner(options, plan).Plan(counts, after);
}

}  // namespace sparseflash
