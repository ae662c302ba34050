// The cores' compute rates through whole simulations: weights in matrix order
// against scattered rows, the model's weight format, and how many cores are busy.
#include <array>
#include <string>

#include "devices/device_catalog.h"
#include "engine/model_bytes.h"
#include "engine/run_summary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

// TurboSparse-Mistral-7B all in memory on the OnePlus 12, 8 tokens, with the
// DRAM ceilings raised so that the cores' own rates bind.
SimulationConfig CoreBoundInMemory() {
  SimulationConfig c;
  c.device = *LoadDevice("oneplus12");
  c.model = *LoadModel("turbosparse-mistral-7b");
  c.strategy = "in_memory";
  c.ffn_resident = -1;
  c.memory_bytes = int64_t{16} << 30;
  c.tokens = 8;
  c.device.dram.cpu_bytes_per_s *= 100;
  c.device.dram.combined_bytes_per_s *= 100;
  return c;
}

// A core reads consecutive rows (attention, the head, a dense FFN) faster than
// scattered neuron rows: work in matrix order is priced at the profile's dense
// rate where it states one, sparse FFN work at the sparse rate either way.
TEST(Simulate, InOrderWeightsStreamAtTheDenseRate) {
  auto breakdown = [](bool sparse, bool dense_rate_stated) {
    SimulationConfig c = CoreBoundInMemory();
    c.options = {sparse ? "sparse=true" : "sparse=false"};
    for (CoreClassSpec& k : c.device.cores) {
      k.dense_gemv_bytes_per_s = dense_rate_stated ? 2 * k.gemv_bytes_per_s : 0;
    }
    absl::StatusOr<SimulationResult> r = Simulate(c);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Summarize(r->record).breakdown_ms : std::array<double, kBreakdownParts>{};
  };
  for (bool sparse : {true, false}) {
    const auto same = breakdown(sparse, false), faster = breakdown(sparse, true);
    ASSERT_GT(same[kBdAttention], 0);
    EXPECT_NEAR(faster[kBdAttention], same[kBdAttention] / 2, 0.1 * same[kBdAttention]);
    const double ffn = same[kBdFfnCompute];
    ASSERT_GT(ffn, 0);
    if (sparse) {
      EXPECT_NEAR(faster[kBdFfnCompute], ffn, 0.02 * ffn) << "scattered rows: the sparse rate";
    } else {
      EXPECT_NEAR(faster[kBdFfnCompute], ffn / 2, 0.1 * ffn) << "a dense FFN streams in order";
    }
  }
}

// A model's weight format sets the kernel's work per byte: where the profile
// lists rates for the model's format, every core computes at them (the FFN
// twice as long at half the rate); a listing for another format changes nothing.
TEST(Simulate, TheModelsWeightFormatIsPricedAtItsKernelRates) {
  auto ffn_ms = [](const char* format, double share) {
    SimulationConfig c = CoreBoundInMemory();
    c.options = {"sparse=true"};
    for (CoreClassSpec& k : c.device.cores) {
      k.kernel_rates = {{format, share * k.gemv_bytes_per_s, 0}};
    }
    absl::StatusOr<SimulationResult> r = Simulate(c);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Summarize(r->record).breakdown_ms[kBdFfnCompute] : 0.0;
  };
  const std::string own = LoadModel("turbosparse-mistral-7b")->quantization.Name();
  const double base = ffn_ms("int8-g64", 0.5);
  ASSERT_GT(base, 0);
  EXPECT_NEAR(ffn_ms("int8-g64", 0.25), base, 1e-9) << "another format's rates are not used";
  EXPECT_NEAR(ffn_ms(own.c_str(), 1.0), base, 0.02 * base) << "the same rate as the core's own";
  EXPECT_NEAR(ffn_ms(own.c_str(), 0.5), 2 * base, 0.1 * base) << "half the rate: twice the time";
}

// DRAM bytes per token of `model` decoded all in memory on the OnePlus 12
// (4 tokens, `sparse` or dense).
double InMemoryDramPerToken(const ModelSpec& model, bool sparse) {
  SimulationConfig c;
  c.device = *LoadDevice("oneplus12");
  c.model = model;
  c.strategy = "in_memory";
  c.ffn_resident = -1;
  c.memory_bytes = int64_t{64} << 30;
  c.tokens = 4;
  c.options = {sparse ? "sparse=true" : "sparse=false"};
  absl::StatusOr<SimulationResult> r = Simulate(c);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Summarize(r->record).dram_bytes_per_token : 0.0;
}

// A gate-threshold model (CATS) finds its active neurons by running the gate:
// decoding sparsely in memory, it streams every neuron's gate row and the
// active neurons' up and down rows, where a model with a predictor streams the
// active neurons' whole bundles. Dense decoding is the same for both.
TEST(Simulate, AGateThresholdModelRunsItsGateForEveryNeuron) {
  const ModelSpec model = *LoadModel("mistral-7b");
  auto dram = [&model](bool sparse, bool threshold) {
    ModelSpec m = model;
    m.gate_threshold = threshold;
    return InMemoryDramPerToken(m, sparse);
  };
  const double row = static_cast<double>(ComputeModelBytes(model).matrix_row_bytes);
  const double neurons = static_cast<double>(model.layers) * model.d_ffn;
  const double dense = dram(false, false);
  ASSERT_GT(dense, 0);
  EXPECT_DOUBLE_EQ(dram(false, true), dense);
  // The active neurons per token, from what the predictor model saves: three
  // rows for each inactive neuron.
  const double bundles = dram(true, false);
  const double active = neurons - (dense - bundles) / (3 * row);
  EXPECT_GT(active, 0.3 * neurons);
  EXPECT_LT(active, 0.7 * neurons);
  // The threshold model streams the inactive neurons' gate rows besides.
  EXPECT_NEAR(dram(true, true), bundles + (neurons - active) * row, 1e-9 * dense);
}

// Decoding an MoE model sparsely in memory runs the chosen experts' predictors
// only: a predictor twice as large adds its top-k of experts' share per token.
TEST(Simulate, SparseInMemoryRunsOnlyTheChosenExpertsPredictors) {
  const ModelSpec model = *LoadModel("turbosparse-mixtral-47b");
  const int64_t unit = int64_t{model.layers} * model.experts * 10'000'000;
  auto dram = [&model](int64_t predictor_bytes) {
    ModelSpec m = model;
    m.predictor_bytes = predictor_bytes;
    return InMemoryDramPerToken(m, /*sparse=*/true);
  };
  const double added = dram(2 * unit) - dram(unit);
  EXPECT_NEAR(added, static_cast<double>(unit) * model.top_k / model.experts, 1e-6 * unit);
}

// Offloading a gate-threshold model, an engine keeps every gate row resident
// (its predictor) and caches only up and down: a share of the FFN in memory
// counts the gate rows, the cache takes the rest in two-row neurons, and the
// threshold is exact (no predictor errors by default).
TEST(Simulate, AnOffloadingEngineKeepsAGateThresholdModelsGateResident) {
  const ModelSpec model = *LoadModel("mistral-7b");
  const ModelBytes b = ComputeModelBytes(model);
  const int64_t gate_rows = b.neurons * b.matrix_row_bytes;
  ASSERT_EQ(b.predictor_bytes, gate_rows);
  EXPECT_EQ(b.sparse_neuron_bytes, b.bundle_bytes - b.matrix_row_bytes);
  for (const char* strategy : {"powerinfer2", "llmflash"}) {
    auto run = [&](bool threshold) {
      SimulationConfig c;
      c.device = *LoadDevice("oneplus12");
      c.model = model;
      c.model.gate_threshold = threshold;
      c.strategy = strategy;
      c.ffn_resident = 0.5;
      c.tokens = 4;
      absl::StatusOr<SimulationResult> r = Simulate(c);
      EXPECT_TRUE(r.ok()) << r.status();
      return r.ok() ? *r : SimulationResult{};
    };
    const SimulationResult with = run(true), without = run(false);
    EXPECT_EQ(with.memory.resident_bytes - without.memory.resident_bytes, gate_rows) << strategy;
    EXPECT_NEAR(static_cast<double>(with.memory.cache_bytes),
                0.5 * static_cast<double>(b.ffn_bytes) - static_cast<double>(gate_rows), 1e6)
        << strategy;
    EXPECT_EQ(with.options.at("predictor_recall"), "1") << strategy;
    EXPECT_EQ(with.options.at("predictor_extra"), "0") << strategy;
    EXPECT_EQ(without.options.at("predictor_recall"), "0.95") << strategy;
  }
  // With the whole FFN in memory (gate rows and cache), a prompt reads nothing.
  SimulationConfig c;
  c.device = *LoadDevice("oneplus12");
  c.model = model;
  c.strategy = "powerinfer2";
  c.ffn_resident = 1;
  c.prompt_tokens = 16;
  c.tokens = 2;
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->record.has_prefill);
  EXPECT_EQ(r->record.prefill.flash_bytes, 0);
}

// A core computing alone gets more of the machine than one of many busy cores:
// with alone rates twice the stated ones, one compute thread's attention takes
// half as long, while a run that keeps every core busy is unchanged.
TEST(Simulate, FewerBusyCoresComputeAtTheirAloneRates) {
  auto attention_ms = [](int threads, bool alone_stated) {
    SimulationConfig c = CoreBoundInMemory();
    c.threads = threads;
    for (CoreClassSpec& k : c.device.cores) {
      k.dense_gemv_alone_bytes_per_s = alone_stated ? 2 * k.InOrderGemvRate() : 0;
    }
    absl::StatusOr<SimulationResult> r = Simulate(c);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Summarize(r->record).breakdown_ms[kBdAttention] : 0.0;
  };
  const double one = attention_ms(1, false);
  ASSERT_GT(one, 0);
  EXPECT_NEAR(attention_ms(1, true), one / 2, 0.05 * one);
  const int all = LoadDevice("oneplus12")->total_cores();
  const double every = attention_ms(all, false);
  EXPECT_NEAR(attention_ms(all, true), every, 0.01 * every);
}

}  // namespace
}  // namespace sparseflash
