#include "engine/work_plan.h"

#include <algorithm>

namespace sparseflash {

NodeId WorkPlan::Add(WorkNode node, std::initializer_list<NodeId> deps) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(std::move(node));
  for (NodeId d : deps) Depend(id, d);
  return id;
}

void WorkPlan::Depend(NodeId to, NodeId from) {
  if (from == kNoNode || to == kNoNode || nodes_[from].done) return;
  nodes_[from].successors.push_back(to);
  ++nodes_[to].pending;
}

NodeId WorkPlan::Read(const FlashRead& read, std::initializer_list<NodeId> deps) {
  WorkNode n;
  n.type = NodeType::kRead;
  n.read = read;
  return Add(std::move(n), deps);
}

NodeId WorkPlan::Compute(const ComputeTask& task, std::initializer_list<NodeId> deps) {
  WorkNode n;
  n.type = NodeType::kCompute;
  n.task = task;
  return Add(std::move(n), deps);
}

NodeId WorkPlan::Join(std::initializer_list<NodeId> deps) { return Add(WorkNode{}, deps); }

NodeId WorkPlan::Join(const std::vector<NodeId>& deps) {
  NodeId id = Add(WorkNode{}, {});
  for (NodeId d : deps) Depend(id, d);
  return id;
}

NodeId WorkPlan::Parallel(ComputeKind kind, ComputeUnit unit, int64_t bytes, double ops, int parts,
                          std::initializer_list<NodeId> deps) {
  NodeId join = Add(WorkNode{}, deps);
  if (bytes <= 0 && ops <= 0) return join;
  parts = std::max(1, parts);
  for (int i = 0; i < parts; ++i) {
    ComputeTask t;
    t.kind = kind;
    t.unit = unit;
    t.bytes = bytes / parts + (i < bytes % parts ? 1 : 0);
    t.ops = ops / parts;
    NodeId n = Add(WorkNode{.type = NodeType::kCompute, .task = t}, deps);
    Depend(join, n);
  }
  return join;
}

void WorkPlan::StampLayer(NodeId from, int layer) {
  for (size_t i = static_cast<size_t>(from); i < nodes_.size(); ++i) {
    nodes_[i].read.layer = layer;
    nodes_[i].task.layer = layer;
  }
}

void WorkPlan::MarkInOrder(NodeId from) {
  for (size_t i = static_cast<size_t>(from); i < nodes_.size(); ++i) nodes_[i].task.in_order = true;
}

}  // namespace sparseflash
