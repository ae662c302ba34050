// Golden tests of the engine on the toy device (1 ms per 1 MB read, 1 ms per
// 1 MB of compute on one worker): pipelines whose latency and critical-path
// split are worked out by hand.
#include <functional>

#include "engine/engine.h"
#include "engine/ffn_plan.h"
#include "engine/layer_costs.h"
#include "gtest/gtest.h"
#include "sim/event_queue.h"
#include "sim/sim_compute.h"
#include "sim/sim_flash.h"
#include "sim/toy_device.h"

namespace sparseflash {
namespace {

constexpr int64_t kMB = 1000000;

class PlanStrategy : public Strategy {
 public:
  explicit PlanStrategy(std::function<NodeId(WorkPlan*)> plan) : plan_(std::move(plan)) {}
  ResourcePlan resources() const override { return {.compute_threads = 1, .io_core_class = ""}; }
  MemoryPlan memory() const override { return {}; }
  CacheCounters counters() const override { return {}; }
  NodeId PlanPrefill(int, WorkPlan* plan) override { return plan_(plan); }
  NodeId PlanToken(const TokenActivations&, int, WorkPlan* plan) override { return plan_(plan); }

 private:
  std::function<NodeId(WorkPlan*)> plan_;
};

struct SimClockForTest : Clock {
  explicit SimClockForTest(const EventQueue* q) : q(q) {}
  Nanos Now() const override { return q->now(); }
  const EventQueue* q;
};

RunRecord RunPlan(std::function<NodeId(WorkPlan*)> plan, int tokens = 1) {
  EventQueue q;
  SimClockForTest clock(&q);
  SimFlashDevice flash(&q, ToyDevice(), "");
  auto compute =
      SimComputeBackend::Create(&q, ToyDevice(), {.compute_threads = 1, .io_core_class = ""});
  EXPECT_TRUE(compute.ok());
  PlanStrategy strategy(std::move(plan));
  std::unique_ptr<TokenSource> source = MakeStepSource(tokens);
  Engine engine(Env{&clock, &flash, compute->get()}, &strategy, source.get(), {});
  engine.Start();
  q.Run();
  EXPECT_TRUE(engine.finished());
  EXPECT_TRUE(engine.status().ok()) << engine.status();
  return engine.record();
}

FlashRead MB(int count = 1) { return {.request_bytes = kMB, .count = count, .max_in_flight = 32}; }
ComputeTask Ffn(int64_t bytes) { return {.kind = ComputeKind::kFfn, .bytes = bytes}; }

// Two clusters, one I/O thread: read 1 (0-1 ms), read 2 (1-2), compute 1
// overlaps read 2 (1-2), compute 2 (2-3). Critical path: two reads, one compute.
TEST(EnginePipeline, TwoClustersOverlapIoAndCompute) {
  RunRecord r = RunPlan([](WorkPlan* p) {
    NodeId r1 = p->Read(MB());
    NodeId c1 = p->Compute(Ffn(kMB), {r1});
    NodeId r2 = p->Read(MB(), {r1});
    NodeId c2 = p->Compute(Ffn(kMB), {r2});
    return p->Join({c1, c2});
  });
  ASSERT_EQ(r.tokens.size(), 1u);
  EXPECT_EQ(r.tokens[0].latency.ns, 3 * kMB);
  EXPECT_EQ(r.tokens[0].breakdown[kBdIoWait].ns, 2 * kMB);
  EXPECT_EQ(r.tokens[0].breakdown[kBdFfnCompute].ns, 1 * kMB);
  EXPECT_EQ(r.tokens[0].flash_bytes, 2 * kMB);
  EXPECT_EQ(r.tokens[0].flash_busy.ns, 2 * kMB);
}

TEST(EnginePipeline, WithoutOverlapTheStepsAdd) {
  RunRecord r = RunPlan(
      [](WorkPlan* p) {
        NodeId c1 = p->Compute(Ffn(kMB), {p->Read(MB())});
        return p->Compute(Ffn(kMB), {p->Read(MB(), {c1})});
      },
      2);
  ASSERT_EQ(r.tokens.size(), 2u);
  for (const StepRecord& t : r.tokens) {
    EXPECT_EQ(t.latency.ns, 4 * kMB);
    EXPECT_EQ(t.breakdown[kBdIoWait].ns, 2 * kMB);
    EXPECT_EQ(t.breakdown[kBdFfnCompute].ns, 2 * kMB);
  }
}

// Two flash clusters of one neuron (gate 1 MB, up/down 1 MB, 1 ms compute each).
int64_t SparseFfnLatency(PipelineMode mode) {
  FfnPlanOptions o;
  o.pipeline = mode;
  o.cluster_neurons = 1;
  o.reads = {.first_bytes = kMB,
             .first_reads = 1,
             .second_bytes = kMB,
             .second_reads = 1,
             .second_conditional = true};
  o.gate_row_bytes = kMB;
  o.bundle_bytes = 2 * kMB;
  RunRecord r =
      RunPlan([&](WorkPlan* p) { return PlanSparseFfn({.missing_active = 2}, o, p->Join({}), p); });
  return r.tokens.at(0).latency.ns;
}

TEST(EnginePipeline, ClusterPipelineBeatsBarriers) {
  // Gate reads share the device (both done at 2 ms); gate computes 2-3, 3-4;
  // up/down read 1 runs 3-4 alone, read 2 4-5; up/down computes 4-5, 5-6.
  EXPECT_EQ(SparseFfnLatency(PipelineMode::kCluster), 6 * kMB);
  // Reads 0-2, gate computes 2-4, up/down reads 4-6, computes 6-8.
  EXPECT_EQ(SparseFfnLatency(PipelineMode::kMatrix), 8 * kMB);
  EXPECT_EQ(SparseFfnLatency(PipelineMode::kNone), 8 * kMB);
}

TEST(FfnPlan, CountsBecomeClustersAndReads) {
  FfnPlanOptions o;
  o.cluster_neurons = 128;
  o.reads = {.first_bytes = 4096,
             .first_reads = 1,
             .second_bytes = 4096,
             .second_reads = 1,
             .second_conditional = true};
  o.gate_row_bytes = 2560;
  o.bundle_bytes = 7680;
  WorkPlan plan;
  PlanSparseFfn({.resident_active = 250,
                 .resident_gate_zero = 6,
                 .missing_active = 200,
                 .missing_gate_zero = 56},
                o, plan.Join({}), &plan);
  int64_t compute_bytes = 0, reads = 0;
  for (const WorkNode& n : plan.nodes()) {
    reads += n.type == NodeType::kRead ? 1 : 0;
    if (n.type == NodeType::kCompute) compute_bytes += n.task.bytes;
  }
  // 2 gate reads (256 neurons) and 2 up/down reads (200 non-zero gates).
  EXPECT_EQ(reads, 4);
  int64_t gate_reads = 0, updown_reads = 0;
  for (const WorkNode& n : plan.nodes()) {
    if (n.type != NodeType::kRead) continue;
    bool after_compute = false;
    for (const WorkNode& m : plan.nodes()) {
      for (NodeId s : m.successors) {
        if (&plan.nodes()[s] == &n && m.type == NodeType::kCompute) after_compute = true;
      }
    }
    (after_compute ? updown_reads : gate_reads) += n.read.count;
  }
  EXPECT_EQ(gate_reads, 256);
  EXPECT_EQ(updown_reads, 200);
  // Every gate row once, up/down only for non-zero gates.
  EXPECT_EQ(compute_bytes, 512 * 2560 + 450 * (7680 - 2560));
}

// A dense prefill over 4 layers, 1 MB of weights read per layer (1 ms).
Nanos DensePrefillLatency(double compute_ms_per_layer, int64_t read_mb_per_layer, int lookahead) {
  LayerCosts c;
  c.layers = 4;
  c.ops_per_token = 4 * compute_ms_per_layer * 1e6;  // the toy core does 1e9 ops/s
  const LayerReads reads{.bytes_per_layer = read_mb_per_layer * kMB,
                         .request_bytes = kMB,
                         .lookahead_layers = lookahead};
  RunRecord r =
      RunPlan([&](WorkPlan* p) { return PlanDensePrefill(c, 1, ComputeUnit::kCpu, 1, reads, p); });
  return r.tokens.at(0).latency;
}

// Compute-bound (3 ms per layer): one layer of lookahead hides every read but
// the first (1 + 4 x 3 ms); reading on demand serialises them (4 x (1 + 3) ms).
TEST(EnginePipeline, PrefillReadsOneLayerAheadHideBehindCompute) {
  EXPECT_EQ(DensePrefillLatency(3, 1, 1).ns, 13 * kMB);
  EXPECT_EQ(DensePrefillLatency(3, 1, 0).ns, 16 * kMB);
}

// I/O-bound (3 ms of reads, 1 ms of compute per layer): with one layer of
// lookahead the reads run back to back and only the last compute shows
// (4 x 3 + 1 ms); a deeper lookahead cannot do better than the flash.
TEST(EnginePipeline, PrefillIsBoundByTheFlashWhenReadsDominate) {
  EXPECT_EQ(DensePrefillLatency(1, 3, 1).ns, 13 * kMB);
  EXPECT_EQ(DensePrefillLatency(1, 3, 3).ns, 13 * kMB);
  EXPECT_EQ(DensePrefillLatency(1, 3, 0).ns, 16 * kMB);
}

// Four decode layers whose attention weights (1 MB, 1 ms to read) come from
// flash: attention computes 2 ms, the FFN 0.5 ms.
Nanos StreamedAttentionLatency(int lookahead) {
  LayerCosts c;
  c.layers = 4;
  c.attention_bytes = 2 * kMB;
  const LayerReads reads{
      .bytes_per_layer = kMB, .request_bytes = kMB, .lookahead_layers = lookahead};
  RunRecord r = RunPlan([&](WorkPlan* p) {
    return PlanLayers(
        c, 0, 1, ComputeUnit::kCpu, p,
        [&](int, NodeId attention) { return p->Compute(Ffn(kMB / 2), {attention}); }, kNoNode,
        reads);
  });
  return r.tokens.at(0).latency;
}

// Reading a layer ahead hides every read but the first (1 + 4 x 2.5 ms); on
// demand, each layer's read waits for the attention before it, so every read
// shows and only the last FFN does (4 x (1 + 2) + 0.5 ms).
TEST(EnginePipeline, AttentionReadOneLayerAheadHidesBehindTheLayerBefore) {
  EXPECT_EQ(StreamedAttentionLatency(1).ns, 11 * kMB);
  EXPECT_EQ(StreamedAttentionLatency(0).ns, 12 * kMB + kMB / 2);
}

}  // namespace
}  // namespace sparseflash
