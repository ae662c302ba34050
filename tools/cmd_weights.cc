// sparseflash weights make: a weight file with a catalog model's exact shape and
// flash layout, for replay on real hardware.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "engine/weight_file.h"
#include "tools/cli.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

struct MakeArgs {
  std::string model, quant, layout = "bundle", out;
  bool force = false;
};

int RunMake(const MakeArgs& a) {
  absl::StatusOr<ModelSpec> model = LoadModel(a.model);
  if (!model.ok()) return ReportError(model.status());
  if (!a.quant.empty()) {
    if (absl::Status s = ParseQuantization(a.quant, &model->quantization); !s.ok()) {
      return ReportError(s);
    }
  }
  absl::StatusOr<LayoutKind> layout = ParseLayout(a.layout);
  if (!layout.ok()) return ReportError(layout.status());
  const WeightFileInfo info = PlanWeightFile(*model, *layout);
  std::fprintf(stderr, "writing %s: %s %s, %s layout, %s\n", a.out.c_str(), model->name.c_str(),
               model->quantization.Name().c_str(), LayoutName(*layout),
               FormatBytes(info.file_bytes).c_str());
  absl::Status s = WriteWeightFile(*model, *layout, a.out, a.force, [](int64_t done, int64_t all) {
    Progress("weights make (MiB)", done >> 20, all >> 20);
  });
  if (!s.ok()) return ReportError(s);
  std::fprintf(stderr, "wrote %s\n", a.out.c_str());
  return 0;
}

}  // namespace

void AddWeightsCommands(CLI::App& app, Dispatch& dispatch) {
  CLI::App* weights = app.add_subcommand("weights", "Weight files in the engine's flash layout");
  weights->require_subcommand(1);
  auto a = std::make_shared<MakeArgs>();
  CLI::App* make = weights->add_subcommand(
      "make", "Write a file with a catalog model's exact shape and layout (random values)");
  make->add_option("--model", a->model, "Catalog model")->required();
  make->add_option("--quant", a->quant, "int4 | int8 | fp16 (default: the model's)");
  make->add_option("--layout", a->layout, "bundle | split-bundle | matrix")->capture_default_str();
  make->add_option("--out", a->out, "File to write")->required();
  make->add_flag("--force", a->force, "Replace an existing file");
  make->callback([&dispatch, a] { dispatch.action = [a] { return RunMake(*a); }; });
}

}  // namespace sparseflash::cli
