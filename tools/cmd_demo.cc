// sparseflash demo: the embedded default. Generates a trace for a catalog model
// and prints its statistics (later: the full sweep and report).
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tools/cli.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/trace_stats.h"

namespace sparseflash::cli {
namespace {

struct DemoArgs {
  std::string out = "sparseflash-demo";
  std::string model = "turbosparse-mistral-7b";
  uint64_t tokens = 256;
};

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
  absl::Status s = WriteGeneratedTrace(*model, {.seed = 1, .tokens = a.tokens}, trace,
                                       [&](uint64_t n) { Progress("generating trace", n, a.tokens); });
  if (!s.ok()) return ReportError(s);
  absl::StatusOr<TraceStats> stats = ComputeTraceStats(trace);
  if (!stats.ok()) return ReportError(stats.status());
  std::cout << stats->ToText();
  std::cout << "\ntrace written to " << trace << "\n";
  return 0;
}

}  // namespace

void AddDemoCommand(CLI::App& app, Dispatch& dispatch) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* demo = app.add_subcommand(
      "demo", "Run the built-in example: generate a calibrated trace and show its statistics");
  demo->add_option("--out", args->out, "Output directory")->capture_default_str();
  demo->add_option("--model", args->model, "Catalog model")->capture_default_str();
  demo->add_option("--tokens", args->tokens, "Tokens to generate")->capture_default_str();
  demo->callback([&dispatch, args] { dispatch.action = [args] { return RunDemo(*args); }; });
}

}  // namespace sparseflash::cli
