// sparseflash demo: the embedded default. Generates a trace for a catalog model,
// prints its statistics, then simulates every strategy on the bundled phone
// profile with half of the FFN in DRAM and compares cache policies
// (later: the full sweep, database and report).
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/units.h"
#include "devices/device_catalog.h"
#include "engine/run_summary.h"
#include "sim/simulator.h"
#include "tools/cli.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/trace_stats.h"

namespace sparseflash::cli {
namespace {

struct DemoArgs {
  std::string out = "sparseflash-demo";
  std::string model = "turbosparse-mistral-7b";
  std::string device = "oneplus12";
  uint64_t tokens = 256;
};

// One simulated configuration of the demo's table.
struct DemoRun {
  std::string label, strategy, policy;
  bool all_in_memory = false;
};

absl::Status PrintSimulations(const DemoArgs& a, const ModelSpec& model, const std::string& trace) {
  absl::StatusOr<DeviceProfile> device = LoadDevice(a.device);
  if (!device.ok()) return device.status();
  const std::vector<DemoRun> runs = {
      {"in_memory (everything in DRAM)", "in_memory", "", true},
      {"llamacpp (mmap, page cache)", "llamacpp", ""},
      {"llmflash (window, bundles)", "llmflash", ""},
      {"powerinfer2 (LRU cold cache)", "powerinfer2", ""},
      {"powerinfer2, S3-FIFO", "powerinfer2", "s3fifo"},
      {"powerinfer2, static hot set", "powerinfer2", "static"},
      {"powerinfer2, Belady bound", "powerinfer2", "belady"},
  };
  absl::PrintF("\nSimulated on %s, %s, half of the FFN in DRAM, %llu tokens:\n", device->name,
               model.name, static_cast<unsigned long long>(a.tokens));
  absl::PrintF("%-32s %9s %9s %8s %12s %8s\n", "configuration", "tokens/s", "p99 ms", "hit %",
               "flash/token", "I/O %");
  for (const DemoRun& r : runs) {
    SimulationConfig c;
    c.device = *device;
    c.model = model;
    c.trace_path = trace;
    c.strategy = r.strategy;
    c.policy = r.policy;
    c.tokens = a.tokens;
    if (r.all_in_memory) {
      c.memory_bytes = device->dram.app_available_bytes;
    } else {
      c.ffn_resident = 0.5;
    }
    absl::StatusOr<SimulationResult> result = Simulate(c);
    if (!result.ok()) {
      absl::PrintF("%-32s %s\n", r.label, result.status().message());
      continue;
    }
    RunSummary s = Summarize(result->record);
    absl::PrintF("%-32s %9.2f %9.1f %8.1f %12s %8.1f\n", r.label, s.decode_tokens_per_s,
                 s.latency_ms_p99, 100 * s.hit_rate,
                 FormatBytes(static_cast<int64_t>(s.flash_bytes_per_token)),
                 100 * s.io_stall_share);
  }
  return absl::OkStatus();
}

int RunDemo(const DemoArgs& a) {
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) {
    return ReportError(absl::PermissionDeniedError(
        absl::StrCat(a.out, ": cannot create output directory: ", ec.message())));
  }
  absl::StatusOr<ModelSpec> model = LoadModel(a.model);
  if (!model.ok()) return ReportError(model.status());
  const std::string trace = (std::filesystem::path(a.out) / (a.model + ".trace")).string();
  absl::Status s =
      WriteGeneratedTrace(*model, {.seed = 1, .tokens = a.tokens}, trace,
                          [&](uint64_t n) { Progress("generating trace", n, a.tokens); });
  if (!s.ok()) return ReportError(s);
  absl::StatusOr<TraceStats> stats = ComputeTraceStats(trace);
  if (!stats.ok()) return ReportError(stats.status());
  std::cout << stats->ToText();
  std::cout << "\ntrace written to " << trace << "\n";
  if (absl::Status sim = PrintSimulations(a, *model, trace); !sim.ok()) return ReportError(sim);
  return 0;
}

}  // namespace

void AddDemoCommand(CLI::App& app, Dispatch& dispatch) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "Run the built-in example: generate a calibrated trace, show its statistics and "
      "simulate every strategy on a phone");
  demo->add_option("--out", args->out, "Output directory")->capture_default_str();
  demo->add_option("--model", args->model, "Catalog model")->capture_default_str();
  demo->add_option("--device", args->device, "Device profile")->capture_default_str();
  demo->add_option("--tokens", args->tokens, "Tokens to generate")->capture_default_str();
  demo->callback([&dispatch, args] { dispatch.action = [args] { return RunDemo(*args); }; });
}

}  // namespace sparseflash::cli
