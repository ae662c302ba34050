#include "engine/engine.h"

#include "absl/strings/str_cat.h"

namespace sparseflash {

const char* BreakdownName(int part) {
  static const char* kNames[] = {"attention", "predictor",         "ffn_compute",
                                 "io_wait",   "memory_management", "other"};
  return kNames[part];
}

const char* ComputeKindName(ComputeKind kind) {
  switch (kind) {
    case ComputeKind::kAttention:
      return "attention";
    case ComputeKind::kPredictor:
      return "predictor";
    case ComputeKind::kFfn:
      return "ffn";
    case ComputeKind::kMemoryManagement:
      return "memory_management";
    case ComputeKind::kOther:
      return "other";
  }
  return "?";
}

namespace {

int PartOf(const WorkNode& n) {
  switch (n.type) {
    case NodeType::kRead:
      return kBdIoWait;
    case NodeType::kJoin:
      return kBdOther;
    case NodeType::kCompute:
      break;
  }
  switch (n.task.kind) {
    case ComputeKind::kAttention:
      return kBdAttention;
    case ComputeKind::kPredictor:
      return kBdPredictor;
    case ComputeKind::kFfn:
      return kBdFfnCompute;
    case ComputeKind::kMemoryManagement:
      return kBdMemoryManagement;
    case ComputeKind::kOther:
      return kBdOther;
  }
  return kBdOther;
}

}  // namespace

Engine::Engine(const Env& env, Strategy* strategy, TokenSource* source,
               const EngineOptions& options)
    : env_(env), strategy_(strategy), source_(source), options_(options) {}

void Engine::Start() {
  env_.flash->SetSink(this);
  env_.compute->SetSink(this);
  if (options_.prompt_tokens > 0) {
    step_ = -1;
    plan_.Clear();
    Snapshot();
    RunPlan(strategy_->PlanPrefill(options_.prompt_tokens, &plan_));
  } else {
    step_ = 0;
    NextStep();
  }
}

void Engine::NextStep() {
  if (static_cast<uint64_t>(step_) >= options_.max_tokens) {
    finished_ = true;
    return;
  }
  absl::StatusOr<const TokenActivations*> token = source_->Next();
  if (!token.ok()) return Fail(token.status());
  if (*token == nullptr) {
    finished_ = true;
    return;
  }
  plan_.Clear();
  Snapshot();
  RunPlan(strategy_->PlanToken(**token, options_.prompt_tokens + static_cast<int>(step_), &plan_));
}

void Engine::Snapshot() {
  step_start_ = env_.clock->Now();
  flash_bytes_at_start_ = env_.flash->bytes_read();
  flash_busy_at_start_ = env_.flash->busy_time();
  flash_offered_at_start_ = env_.flash->offered_time();
  flash_held_at_start_ = env_.flash->held_time();
  counters_at_start_ = strategy_->counters();
}

void Engine::RunPlan(NodeId last) {
  last_ = last;
  completed_ = 0;
  std::vector<WorkNode>& nodes = plan_.nodes();
  const NodeId n = static_cast<NodeId>(nodes.size());
  draining_ = true;  // joins that are ready at once complete after this loop
  for (NodeId id = 0; id < n; ++id) {
    if (nodes[id].pending == 0) MakeReady(id, kNoNode);
  }
  draining_ = false;
  if (!completions_.empty()) {
    NodeId id = completions_.back();
    completions_.pop_back();
    Complete(id);
  }
}

void Engine::MakeReady(NodeId id, NodeId pred) {
  WorkNode& node = plan_.nodes()[id];
  node.ready = node.start = env_.clock->Now();
  node.critical_pred = pred;
  switch (node.type) {
    case NodeType::kJoin:
      completions_.push_back(id);
      break;
    case NodeType::kRead:
      node.read.tag = static_cast<uint64_t>(id);
      env_.flash->Submit(node.read);
      break;
    case NodeType::kCompute:
      node.task.tag = static_cast<uint64_t>(id);
      env_.compute->Submit(node.task);
      break;
  }
}

void Engine::OnReadDone(uint64_t tag, bool ok) {
  if (!ok) {
    const FlashRead& r = plan_.nodes()[static_cast<NodeId>(tag)].read;
    return Fail(absl::DataLossError(
        absl::StrCat("flash read failed at step ", step_, " (a batch of ", r.count, " reads of ",
                     r.request_bytes,
                     " bytes): the device returned an error or a short read; the run "
                     "was stopped and nothing it read is used")));
  }
  Complete(static_cast<NodeId>(tag));
}

void Engine::Complete(NodeId first) {
  completions_.push_back(first);
  if (draining_) return;
  draining_ = true;
  while (!completions_.empty() && !finished_) {
    NodeId id = completions_.back();
    completions_.pop_back();
    {
      WorkNode& node = plan_.nodes()[id];
      node.end = env_.clock->Now();
      node.done = true;
    }
    ++completed_;
    if (observer_) observer_(step_, id, plan_.nodes()[id]);
    const size_t before = plan_.size();
    strategy_->OnNodeDone(id, &plan_);
    std::vector<WorkNode>& nodes = plan_.nodes();
    const absl::InlinedVector<NodeId, 2> successors = nodes[id].successors;
    for (NodeId s : successors) {
      if (--nodes[s].pending == 0) MakeReady(s, id);
    }
    for (size_t n = before; n < plan_.size(); ++n) {
      if (plan_.nodes()[n].pending == 0) MakeReady(static_cast<NodeId>(n), id);
    }
    if (completed_ == plan_.size()) {
      FinishStep();
      break;
    }
  }
  draining_ = false;
}

StepRecord Engine::Measure() const {
  StepRecord r;
  r.latency = env_.clock->Now() - step_start_;
  const std::vector<WorkNode>& nodes = plan_.nodes();
  for (NodeId id = last_; id != kNoNode; id = nodes[id].critical_pred) {
    r.breakdown[PartOf(nodes[id])] += nodes[id].end - nodes[id].ready;
  }
  // Time before the first critical node became ready (none in a well-formed plan).
  Nanos covered;
  for (Nanos t : r.breakdown) covered += t;
  r.breakdown[kBdOther] += r.latency - covered;
  CacheCounters c = strategy_->counters();
  r.cache_hits = c.hits - counters_at_start_.hits;
  r.cache_accesses = c.accesses - counters_at_start_.accesses;
  r.flash_bytes = env_.flash->bytes_read() - flash_bytes_at_start_;
  r.flash_busy = env_.flash->busy_time() - flash_busy_at_start_;
  r.flash_offered = env_.flash->offered_time() - flash_offered_at_start_;
  r.flash_held = env_.flash->held_time() - flash_held_at_start_;
  r.nodes = nodes.size();
  for (const WorkNode& n : nodes) {
    if (n.type == NodeType::kCompute) r.compute_bytes += n.task.bytes;
  }
  return r;
}

void Engine::FinishStep() {
  StepRecord r = Measure();
  if (step_ < 0) {
    record_.has_prefill = true;
    record_.prefill = r;
  } else {
    record_.tokens.push_back(r);
    strategy_->EndToken();
  }
  ++step_;
  completions_.clear();
  draining_ = false;
  NextStep();
}

void Engine::Fail(absl::Status status) {
  status_ = std::move(status);
  finished_ = true;
}

}  // namespace sparseflash
