// End-to-end simulated runs on catalog devices and models: determinism, the
// critical-path split, policies against the Belady bound, and the errors a user
// sees for bad configurations.
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "devices/device_catalog.h"
#include "engine/model_bytes.h"
#include "engine/run_summary.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/simulator.h"
#include "tests/simulate_test_util.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/test_util.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace sparseflash {
namespace {

using testing::Config;
using testing::TempPath;

TEST(Simulate, IdenticalInputsGiveIdenticalEventLogs) {
  SimulationConfig c = Config("powerinfer2");
  c.event_log = true;
  c.prompt_tokens = 4;
  absl::StatusOr<SimulationResult> a = Simulate(c), b = Simulate(c);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_GT(a->event_log.size(), 1000u);
  EXPECT_EQ(a->event_log, b->event_log);
  EXPECT_EQ(ToJson(Summarize(a->record)).dump(), ToJson(Summarize(b->record)).dump());
}

class EveryStrategy : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryStrategy, BreakdownSumsToTheTokenLatency) {
  SimulationConfig c = Config(GetParam(), "turbosparse-mistral-7b");
  if (std::string(GetParam()) == "in_memory") {
    c.ffn_resident = -1;
    c.memory_bytes = int64_t{16} << 30;
  }
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->record.tokens.size(), 8u);
  for (const StepRecord& t : r->record.tokens) {
    Nanos sum;
    for (Nanos part : t.breakdown) sum += part;
    EXPECT_EQ(sum.ns, t.latency.ns);
    EXPECT_GT(t.breakdown[kBdAttention].ns, 0);
  }
  RunSummary s = Summarize(r->record);
  EXPECT_GT(s.decode_tokens_per_s, 0);
  EXPECT_LE(s.latency_ms_p50, s.latency_ms_p99);
  if (std::string(GetParam()) == "in_memory") {
    EXPECT_EQ(s.flash_bytes_per_token, 0);
  } else {
    EXPECT_GT(s.flash_bytes_per_token, 0);
    EXPECT_GT(s.io_stall_share, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, EveryStrategy,
                         ::testing::Values("powerinfer2", "llmflash", "llamacpp", "in_memory"));

TEST(Simulate, BeladyBoundsTheOtherPolicies) {
  double belady = 0;
  std::map<std::string, double> hit;
  for (const char* policy : {"belady", "lru", "fifo", "s3fifo", "sieve", "lfu", "static"}) {
    SimulationConfig c = Config("powerinfer2");
    c.policy = policy;
    c.tokens = 16;
    absl::StatusOr<SimulationResult> r = Simulate(c);
    ASSERT_TRUE(r.ok()) << policy << ": " << r.status();
    hit[policy] = Summarize(r->record).hit_rate;
  }
  belady = hit["belady"];
  for (const auto& [policy, rate] : hit) EXPECT_LE(rate, belady + 1e-9) << policy;
  EXPECT_GT(hit["lru"], hit["static"]);  // the cold region adapts; a static set cannot
}

TEST(Simulate, MoreCacheMeansFewerFlashBytes) {
  double previous = 1e300;
  for (double f : {0.1, 0.4, 0.8}) {
    SimulationConfig c = Config("powerinfer2");
    c.ffn_resident = f;
    absl::StatusOr<SimulationResult> r = Simulate(c);
    ASSERT_TRUE(r.ok());
    double bytes = Summarize(r->record).flash_bytes_per_token;
    EXPECT_LT(bytes, previous) << f;
    previous = bytes;
  }
}

// A budget below the resident set fits when attention's weights stay on flash:
// they leave the resident set but for two layers' buffers, and every token
// reads them once more, in file order, on top of the same neuron reads.
class AttentionOnFlash : public ::testing::TestWithParam<const char*> {};

TEST_P(AttentionOnFlash, FitsBelowTheResidentSetAndReadsAttentionEveryToken) {
  const ModelBytes bytes = ComputeModelBytes(*LoadModel("turbosparse-mistral-7b"));
  auto run = [&](const std::string& attention, double ffn_resident, int64_t memory_bytes) {
    SimulationConfig c = Config(GetParam(), "turbosparse-mistral-7b");
    c.options = {"attention=" + attention};
    c.ffn_resident = ffn_resident;
    c.memory_bytes = memory_bytes;
    return Simulate(c);
  };
  absl::StatusOr<SimulationResult> dram = run("dram", 0.25, -1);
  absl::StatusOr<SimulationResult> flash = run("flash", 0.25, -1);
  ASSERT_TRUE(dram.ok()) << dram.status();
  ASSERT_TRUE(flash.ok()) << flash.status();
  EXPECT_EQ(flash->options.at("attention"), "flash");
  const int64_t two_layers = 2 * (bytes.attention_bytes / 32);
  EXPECT_EQ(flash->memory.resident_bytes,
            dram->memory.resident_bytes - bytes.attention_bytes + two_layers);
  EXPECT_EQ(flash->memory.read_buffer_bytes, two_layers);
  EXPECT_EQ(dram->memory.read_buffer_bytes, 0);
  EXPECT_NEAR(Summarize(flash->record).flash_bytes_per_token -
                  Summarize(dram->record).flash_bytes_per_token,
              static_cast<double>(bytes.attention_bytes / 32 * 32), 1.0);
  EXPECT_GT(Summarize(dram->record).decode_tokens_per_s,
            Summarize(flash->record).decode_tokens_per_s);
  // Between the two resident sets only the flash placement runs.
  const int64_t budget = dram->memory.resident_bytes - bytes.attention_bytes / 2;
  absl::StatusOr<SimulationResult> refused = run("dram", -1, budget);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("resident set"), std::string::npos);
  absl::StatusOr<SimulationResult> fits = run("flash", -1, budget);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_LE(fits->memory.resident_bytes + fits->memory.cache_bytes, budget);
  EXPECT_GT(fits->memory.cache_bytes, bytes.attention_bytes / 4) << "the rest caches neurons";
  EXPECT_FALSE(run("disk", 0.25, -1).ok()) << "an unknown placement is refused";
}
INSTANTIATE_TEST_SUITE_P(Strategies, AttentionOnFlash,
                         ::testing::Values("powerinfer2", "llmflash"));

// LLM in a Flash keeps what DRAM allows beyond its window (selective
// persistence): more memory reads less and decodes faster, until the FFN fits.
TEST(Simulate, LlmFlashUsesMemoryBeyondItsWindow) {
  double previous_bytes = 1e300, previous_speed = 0;
  for (double f : {0.2, 0.4, 0.6, 0.8, 1.0}) {
    SimulationConfig c = Config("llmflash", "opt-6.7b", "m1max");
    c.ffn_resident = f;
    c.tokens = 24;
    absl::StatusOr<SimulationResult> r = Simulate(c);
    ASSERT_TRUE(r.ok()) << r.status();
    const RunSummary s = Summarize(r->record);
    EXPECT_LT(s.flash_bytes_per_token, previous_bytes) << f;
    EXPECT_GT(s.decode_tokens_per_s, previous_speed) << f;
    previous_bytes = s.flash_bytes_per_token;
    previous_speed = s.decode_tokens_per_s;
  }
  EXPECT_LT(previous_bytes, 1e6) << "with the whole FFN in memory almost nothing is read";
}

// Events further apart than the progress interval (a very slow device) must not
// stall the run.
TEST(Simulate, SlowFlashStillFinishes) {
  SimulationConfig c = Config("powerinfer2");
  for (FlashPoint& p : c.device.flash.points) p.throughput_bytes_per_s *= 1e-4;
  c.tokens = 2;
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->record.tokens.size(), 2u);
  EXPECT_GT(Summarize(r->record).latency_ms_mean, 100000);
}

// The trace-event format's rules (what viewers need): complete events on one
// lane nest (here: never overlap), async begin/end pairs match by id with the end
// after the begin, every lane is named, every event says its step and layer, and
// only the chosen tokens are kept.
TEST(Simulate, ChromeTraceFollowsTheTraceEventRules) {
  Timeline timeline;
  timeline.SetSteps(1, 3);
  SimulationConfig c = Config("powerinfer2");
  c.tokens = 5;
  c.timeline = &timeline;
  ASSERT_TRUE(Simulate(c).ok());
  const std::string path = TempPath("run.json");
  ASSERT_TRUE(timeline.WriteChromeTrace(path).ok());
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.contains("traceEvents"));
  std::set<int> named;
  std::map<int, std::vector<std::pair<double, double>>> spans;  // lane -> [ts, end)
  std::map<int64_t, double> open;                               // async id -> begin ts
  int reads = 0, hits = 0, misses = 0;
  std::set<int64_t> steps;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M") {
      named.insert(e["tid"].get<int>());
      continue;
    }
    ASSERT_TRUE(named.count(e["tid"].get<int>())) << e.dump();
    if (ph == "X") {
      ASSERT_GE(e["dur"].get<double>(), 0) << e.dump();
      spans[e["tid"]].push_back({e["ts"], e["ts"].get<double>() + e["dur"].get<double>()});
      if (e["args"].contains("hit")) (e["args"]["hit"].get<bool>() ? hits : misses)++;
    } else if (ph == "b") {
      ASSERT_FALSE(open.count(e["id"])) << "id reused: " << e.dump();
      open[e["id"]] = e["ts"];
      ++reads;
      ASSERT_GT(e["args"]["requests"].get<int>(), 0);
    } else if (ph == "e") {
      ASSERT_TRUE(open.count(e["id"])) << "end without begin: " << e.dump();
      EXPECT_GE(e["ts"].get<double>(), open[e["id"]]);
      open.erase(e["id"].get<int64_t>());
      continue;
    } else {
      FAIL() << "unexpected phase " << ph;
    }
    ASSERT_TRUE(e["args"].contains("step") && e["args"].contains("layer")) << e.dump();
    steps.insert(e["args"]["step"].get<int64_t>());
  }
  EXPECT_TRUE(open.empty()) << open.size() << " async events never end";
  for (auto& [lane, list] : spans) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) {
      EXPECT_LE(list[i - 1].second, list[i].first + 1e-3) << "lane " << lane << " overlaps";
    }
  }
  EXPECT_EQ(steps, (std::set<int64_t>{1, 2}));
  EXPECT_GT(reads, 0);
  EXPECT_GT(hits, 0);
  EXPECT_GT(misses, 0);
}

TEST(SimulateErrors, BudgetBelowResidentSetNamesBothSizes) {
  SimulationConfig c = Config("powerinfer2");
  c.ffn_resident = -1;
  c.memory_bytes = 1000000000;
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("1.00 GB"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("resident set of"), std::string::npos);
}

TEST(SimulateErrors, AttentionOnFlashWithoutThePredictorIsRefused) {
  SimulationConfig c = Config("llmflash");
  c.options = {"attention=flash", "predictor=false"};
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("predictor=true"), std::string::npos) << r.status();
}

TEST(SimulateErrors, UnknownNamesListTheKnownOnes) {
  SimulationConfig c = Config("vllm");
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("llmflash"), std::string::npos);
  c = Config("powerinfer2");
  c.policy = "clock";
  r = Simulate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("s3fifo"), std::string::npos);
  c = Config("powerinfer2");
  c.options = {"windw=3"};
  r = Simulate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("windw"), std::string::npos);
  EXPECT_NE(r.status().message().find("cluster_neurons"), std::string::npos);
}

TEST(SimulateErrors, InMemoryThatDoesNotFitIsInfeasible) {
  SimulationConfig c = Config("in_memory", "turbosparse-mixtral-47b");
  c.ffn_resident = -1;
  c.memory_bytes = int64_t{8} << 30;
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("infeasible"), std::string::npos);
}

TEST(SimulateErrors, TraceOfAnotherModelNamesTheFile) {
  const std::string path = TempPath("opt.trace");
  ModelSpec opt = *LoadModel("opt-6.7b");
  ASSERT_TRUE(WriteGeneratedTrace(opt, {.seed = 1, .tokens = 2}, path, nullptr).ok());
  SimulationConfig c = Config("powerinfer2");
  c.trace_path = path;
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("opt-6.7b"), std::string::npos);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// PowerInfer-2 ranks hot neurons from an offline profile of other text: by
// default the profile is the model's generator (not the evaluated tokens), so a
// trace file does not teach the hot region its own future; "oracle" does, and is
// an upper bound.
TEST(Simulate, TheOfflineProfileDoesNotSeeTheEvaluatedTokens) {
  const ModelSpec model = *LoadModel("turbosparse-mixtral-47b");
  const std::string trace = TempPath("profile_run.trace");
  ASSERT_TRUE(WriteGeneratedTrace(model, {.seed = 7, .tokens = 24}, trace).ok());
  std::map<std::string, double> hit;
  for (const char* profile : {"generator", "oracle"}) {
    SimulationConfig c = Config("powerinfer2", "turbosparse-mixtral-47b");
    c.trace_path = trace;
    c.tokens = 24;
    c.profile = profile;
    absl::StatusOr<SimulationResult> r = Simulate(c);
    ASSERT_TRUE(r.ok()) << r.status();
    hit[profile] = Summarize(r->record).hit_rate;
  }
  EXPECT_GT(hit["oracle"], hit["generator"] + 0.02) << "the run's own tokens as its profile";
  // The generator's hot neurons are not those of a trace it did not make (a
  // recording of the real model): such a trace needs a profile named for it.
  const std::string recorded = TempPath("profile_recorded.trace");
  {
    absl::StatusOr<std::unique_ptr<TraceReader>> in = TraceReader::Open(trace);
    ASSERT_TRUE(in.ok()) << in.status();
    TraceHeader header = (*in)->header();
    header.provenance.tool = "sparseflash trace import";
    absl::StatusOr<std::unique_ptr<TraceWriter>> out = TraceWriter::Create(recorded, header);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE(ForEachToken(**in, [&](const TokenActivations& t) {
                  ASSERT_TRUE((*out)->Append(t).ok());
                }).ok());
    ASSERT_TRUE((*out)->Finish().ok());
  }
  SimulationConfig unprofiled = Config("powerinfer2", "turbosparse-mixtral-47b");
  unprofiled.trace_path = recorded;
  unprofiled.tokens = 24;
  absl::StatusOr<SimulationResult> refused = Simulate(unprofiled);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(recorded), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("--profile"), std::string::npos);
  unprofiled.profile = trace;  // another trace of the model: accepted
  EXPECT_TRUE(Simulate(unprofiled).ok());
  // Nor are they those of a trace the generator made with another model's
  // profile (trace gen --profile): the model's generator would rank neurons
  // that profile did not make hot.
  ModelSpec borrowed = *LoadModel("bamboo-7b");
  borrowed.generator = LoadModel("turbosparse-mistral-7b")->generator;
  const std::string other = TempPath("profile_other.trace");
  ASSERT_TRUE(WriteGeneratedTrace(borrowed, {.seed = 7, .tokens = 4}, other).ok());
  SimulationConfig mixed = Config("powerinfer2");
  mixed.trace_path = other;
  mixed.tokens = 4;
  refused = Simulate(mixed);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("another profile"), std::string::npos)
      << refused.status();
  mixed.profile = "oracle";
  EXPECT_TRUE(Simulate(mixed).ok());
  SimulationConfig bad = Config("powerinfer2");
  bad.profile = TempPath("no_such_profile.trace");
  absl::StatusOr<SimulationResult> r = Simulate(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no_such_profile.trace"), std::string::npos);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// Configurations the papers ran are not refused: a budget above the device's
// per-app limit runs, flagged; LLM in a Flash keeps the LM head but reads the
// (untied) input embedding one row per token, so Persimmon-8B fits in half its size.
TEST(Simulate, ConfigurationsThePapersRanAreNotRefused) {
  SimulationConfig ace = Config("powerinfer2", "turbosparse-mixtral-47b", "oneplus-ace2");
  ace.ffn_resident = 0.25;
  ace.tokens = 4;
  absl::StatusOr<SimulationResult> r = Simulate(ace);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->over_app_limit);
  EXPECT_NE(r->warning.find("over_app_limit"), std::string::npos);
  ace.ffn_resident = 0.05;
  r = Simulate(ace);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->over_app_limit);

  SimulationConfig persimmon = Config("llmflash", "persimmon-8b", "m1max");
  persimmon.ffn_resident = -1;
  const ModelBytes b = ComputeModelBytes(persimmon.model);
  persimmon.memory_bytes = b.model_bytes() / 2;
  persimmon.tokens = 4;
  r = Simulate(persimmon);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LE(r->memory.resident_bytes + r->memory.cache_bytes, persimmon.memory_bytes);
  EXPECT_GT(r->memory.cache_bytes, b.ffn_bytes / 10);  // room for a window
}

// At prefill nearly every neuron is active, so PowerInfer-2 reads each layer's
// whole FFN (as stored on flash) unless the FFN is all in memory.
TEST(Simulate, PowerInfer2PrefillReadsTheWholeFfnUnlessItIsCached) {
  SimulationConfig c = Config("powerinfer2");
  c.prompt_tokens = 32;
  c.tokens = 1;
  const ModelBytes bytes = ComputeModelBytes(c.model);
  absl::StatusOr<SimulationResult> offloaded = Simulate(c);
  ASSERT_TRUE(offloaded.ok()) << offloaded.status();
  ASSERT_TRUE(offloaded->record.has_prefill);
  const int64_t ffn_flash =
      int64_t{c.model.d_ffn} * bytes.bundle_flash_bytes * c.model.experts * c.model.layers;
  EXPECT_EQ(offloaded->record.prefill.flash_bytes, ffn_flash);

  c.ffn_resident = 1.0;
  absl::StatusOr<SimulationResult> cached = Simulate(c);
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(cached->record.prefill.flash_bytes, 0);
  EXPECT_LT(cached->record.prefill.latency.ns, offloaded->record.prefill.latency.ns);
}

// Energy follows the units' work: with half the FFN offloaded, the flash
// device's busy time at its power is part of each token's energy; a profile
// without powers gives none.
TEST(Simulate, EnergyPerTokenCountsTheFlashBusyTimeAndNeedsPowers) {
  SimulationConfig c = Config("powerinfer2", "turbosparse-mistral-7b");
  absl::StatusOr<SimulationResult> offloaded = Simulate(c);
  ASSERT_TRUE(offloaded.ok()) << offloaded.status();
  double flash_s = 0;
  for (const StepRecord& t : offloaded->record.tokens) flash_s += t.flash_busy.seconds();
  flash_s /= static_cast<double>(offloaded->record.tokens.size());
  ASSERT_GT(flash_s, 1e-3);
  const double flash_w = c.device.flash.active_w;
  ASSERT_GT(flash_w, 0);
  c.device.flash.active_w = 0;
  absl::StatusOr<SimulationResult> unpowered_flash = Simulate(c);
  ASSERT_TRUE(unpowered_flash.ok());
  EXPECT_NEAR(offloaded->energy_j_per_token - unpowered_flash->energy_j_per_token,
              flash_w * flash_s, 1e-9);
  c.device.base_w = 0;
  absl::StatusOr<SimulationResult> unpowered = Simulate(c);
  ASSERT_TRUE(unpowered.ok());
  EXPECT_EQ(unpowered->energy_j_per_token, 0);
}

// More memory is never slower: for every offloading strategy and several catalog
// models, decode speed does not fall as the cache grows (1 % slack for the
// steady-state window of a short run). PowerInfer-2's NPU takes only as many hot
// rows as balance the CPU (its planner), so a bigger hot region is not more
// dense NPU work.
TEST(Simulate, DecodeSpeedNeverFallsAsMemoryGrows) {
#if defined(SF_SANITIZED)
  GTEST_SKIP() << "24 simulations take minutes under a sanitizer; the release suite runs them";
#endif
  for (const char* model : {"turbosparse-mistral-7b", "bamboo-7b"}) {
    for (const char* strategy : {"powerinfer2", "llmflash", "llamacpp"}) {
      double previous = 0;
      for (double resident : {0.4, 0.6, 0.8, 1.0}) {
        SimulationConfig c = Config(strategy, model);
        c.ffn_resident = resident;
        c.tokens = 48;
        absl::StatusOr<SimulationResult> r = Simulate(c);
        ASSERT_TRUE(r.ok()) << model << " " << strategy << " " << resident << ": " << r.status();
        const double tps = Summarize(r->record).decode_tokens_per_s;
        EXPECT_GE(tps, 0.99 * previous) << model << " " << strategy << " at " << resident
                                        << " of the FFN: " << tps << " < " << previous;
        previous = tps;
      }
    }
  }
}

}  // namespace
}  // namespace sparseflash
