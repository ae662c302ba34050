// One token's work as a small dependency graph: reads and compute tasks with
// the edges between them (PowerInfer-2's predict -> gate read -> gate compute ->
// up/down read -> up/down compute, attention before the FFN, layer after layer).
// Strategies build it; the Engine runs it and records when each node became
// ready, started and ended, so the critical path can be split by kind of work.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "common/time.h"
#include "engine/env.h"

namespace sparseflash {

using NodeId = int32_t;
constexpr NodeId kNoNode = -1;

enum class NodeType : uint8_t { kRead, kCompute, kJoin };

struct WorkNode {
  NodeType type = NodeType::kJoin;
  FlashRead read;       // kRead (tag set by the engine)
  ComputeTask task;     // kCompute (tag set by the engine)
  int32_t pending = 0;  // unfinished dependencies
  absl::InlinedVector<NodeId, 2> successors;
  // Filled while running.
  Nanos ready, start, end;
  NodeId critical_pred = kNoNode;  // the dependency that finished last
  bool done = false;
};

class WorkPlan {
 public:
  void Clear() { nodes_.clear(); }

  NodeId Read(const FlashRead& read, std::initializer_list<NodeId> deps = {});
  NodeId Compute(const ComputeTask& task, std::initializer_list<NodeId> deps = {});
  NodeId Join(std::initializer_list<NodeId> deps = {});
  NodeId Join(const std::vector<NodeId>& deps);
  // Adds an edge `from` -> `to` (kNoNode and finished nodes are ignored). A node
  // without dependencies is ready when the plan starts (or, when added while the
  // plan runs, at once).
  void Depend(NodeId to, NodeId from);
  // `bytes` of one kind of work split evenly over `parts` parallel tasks; returns
  // the join of them (which also follows `deps`, so it is valid with no work).
  NodeId Parallel(ComputeKind kind, ComputeUnit unit, int64_t bytes, double ops, int parts,
                  std::initializer_list<NodeId> deps);
  // Marks the reads and tasks of nodes [from, size()) as serving `layer` (for
  // timelines; decisions never read it).
  void StampLayer(NodeId from, int layer);
  // Marks the compute tasks of nodes [from, size()) as streaming their weights
  // in matrix order (ComputeTask::in_order: dense FFN work).
  void MarkInOrder(NodeId from);

  std::vector<WorkNode>& nodes() { return nodes_; }
  const std::vector<WorkNode>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }

 private:
  NodeId Add(WorkNode node, std::initializer_list<NodeId> deps);

  std::vector<WorkNode> nodes_;
};

}  // namespace sparseflash
