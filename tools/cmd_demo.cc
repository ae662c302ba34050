// sparseflash demo: the embedded default. With the bundled device profiles and
// model catalog it generates the traces it needs, runs the built-in sweep
// (sweeps/demo.textproto: two phones x two models x four strategies over eight
// to ten budgets, plus a cache-policy comparison), runs the validation
// catalog's entries for those phones and models, runs the real TinyStories model
// through the offloaded engine, replays a trace on this machine against the
// simulator, and writes results.db and the report. Run again, it reuses what
// is already there.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/embedded_file.h"
#include "common/units.h"
#include "devices/device_catalog.h"
#include "engine/real/calibrate.h"
#include "engine/real/tiny_generate.h"
#include "engine/weight_file.h"
#include "reports/report.h"
#include "tools/cli.h"
#include "tools/replay_run.h"
#include "tools/run_store.h"
#include "tools/sweep_grid.h"
#include "tools/sweep_runner.h"
#include "tools/validation.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"

namespace sparseflash {
extern const EmbeddedFile kSweepFiles[];
extern const int kSweepFiles_count;
}  // namespace sparseflash

namespace sparseflash::cli {
namespace {

namespace fs = std::filesystem;

struct DemoArgs {
  std::string out = "sparseflash-demo";
  std::string tiny_dir = ShippedData("tinystories-relu-260k");
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool replay = true;
};

constexpr uint64_t kTraceTokens = 48;
constexpr char kTinyPrompt[] = "Once upon a time, there was a big dog";

std::string DemoSweepText() {
  for (int i = 0; i < kSweepFiles_count; ++i) {
    if (std::string(kSweepFiles[i].name) == "demo.textproto") return kSweepFiles[i].contents;
  }
  return "";
}

void Step(int n, const std::string& what) { absl::FPrintF(stderr, "[%d/6] %s\n", n, what); }

// Generates each model's trace into OUT/traces unless it is there.
absl::Status GenerateTraces(const std::string& out, const std::vector<std::string>& models) {
  fs::create_directories(fs::path(out) / "traces");
  for (const std::string& name : models) {
    const fs::path path = fs::path(out) / "traces" / (name + ".trace");
    if (fs::exists(path)) continue;
    absl::StatusOr<ModelSpec> model = LoadModel(name);
    if (!model.ok()) return model.status();
    absl::Status s = WriteGeneratedTrace(
        *model, {.seed = 1, .tokens = kTraceTokens}, path.string(),
        [&](uint64_t n) { Progress(absl::StrCat("trace of ", name), n, kTraceTokens); });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<SweepOutcome> RunDemoSweep(const DemoArgs& a, const std::string& db) {
  absl::StatusOr<SweepPlan> plan = ParseSweep(DemoSweepText(), "sweeps/demo.textproto", a.out);
  if (!plan.ok()) return plan.status();
  ProgressBar bar("sweep");
  return RunSweep(plan->jobs,
                  {.db = db, .jobs = a.jobs, .progress = [&bar](const SweepProgress& p) {
                     bar(p.done, p.total, p.elapsed_s);
                   }});
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The real model, offloaded with a quarter of its FFN cached; one line.
std::string RunTinyStories(const DemoArgs& a) {
  const fs::path dir(a.tiny_dir);
  if (!fs::exists(dir / "model_qint80.bin")) {
    return absl::StrCat("TinyStories skipped: no model_qint80.bin in ", a.tiny_dir,
                        " (pass --tiny-model DIR)");
  }
  absl::StatusOr<TinyModel> model = TinyModel::Load((dir / "model_qint80.bin").string());
  if (!model.ok()) return absl::StrCat("TinyStories failed: ", model.status().message());
  absl::StatusOr<Tokenizer> tok =
      Tokenizer::Load((dir / "tok1024.bin").string(), model->config().vocab);
  if (!tok.ok()) return absl::StrCat("TinyStories failed: ", tok.status().message());
  TinyGenerateOptions o;
  o.prompt = kTinyPrompt;
  o.flash_file = (fs::path(a.out) / "tinystories.sfweights").string();
  o.strategy.strategy = "powerinfer2";
  o.strategy.ffn_resident = 0.25;
  absl::StatusOr<TinyGenerateResult> r = GenerateTiny(*model, *tok, o);
  fs::remove(o.flash_file);
  if (!r.ok()) return absl::StrCat("TinyStories failed: ", r.status().message());
  absl::PrintF("\nTinyStories (real model, powerinfer2, 25%% of the FFN cached):\n%s\n\n", r->text);
  const fs::path golden = dir / "golden" / "greedy_prompt_big_dog.text.txt";
  const std::string verdict = !fs::exists(golden)           ? "no golden text to compare"
                              : ReadText(golden) == r->text ? "identical to the dense golden text"
                                                            : "DIFFERS from the golden text";
  return absl::StrFormat(
      "TinyStories, real model offloaded (25%% of FFN cached, %s read from flash): %s",
      FormatBytes(r->engine_read_bytes), verdict);
}

// A short replay on this machine: the tiny catalog model's trace through the real
// engine (O_DIRECT reads of a real weight file) beside the simulator's prediction
// with a quick calibration of this machine. One line.
std::string RunDemoReplay(const DemoArgs& a, const std::string& db) {
  const fs::path host = fs::path(a.out) / "host.textproto";
  if (!fs::exists(host)) {
    absl::StatusOr<DeviceProfile> d =
        CalibrateHost({.scratch_dir = a.out, .quick = true, .progress = [](const std::string& s) {
                         absl::FPrintF(stderr, "  calibrate: %s\n", s);
                       }});
    if (!d.ok()) return absl::StrCat("replay skipped: calibration failed: ", d.status().message());
    std::ofstream(host) << "# Calibrated by sparseflash demo (device calibrate --quick)\n"
                        << DeviceProfileToText(*d);
  }
  absl::StatusOr<DeviceProfile> device = LoadDevice(host.string());
  absl::StatusOr<ModelSpec> model = LoadModel("tinystories-relu-260k");
  if (!device.ok() || !model.ok()) return "replay skipped: no host profile or model";
  const std::string weights = (fs::path(a.out) / "tinystories-relu-260k.sfw").string();
  if (absl::Status s = WriteWeightFile(*model, LayoutKind::kBundle, weights, true, nullptr);
      !s.ok()) {
    return absl::StrCat("replay skipped: ", s.message());
  }
  std::vector<std::string> parts;
  for (const char* strategy : {"powerinfer2", "llmflash", "llamacpp"}) {
    SimulationConfig sc;
    sc.device = *device;
    sc.model = *model;
    sc.strategy = strategy;
    sc.ffn_resident = 0.5;
    sc.tokens = 64;
    absl::StatusOr<ReplayResult> r = ReplayOnce(sc, {.weights_path = weights});
    if (!r.ok()) {
      parts.push_back(absl::StrCat(strategy, " failed (", r.status().message(), ")"));
      continue;
    }
    if (absl::StatusOr<int64_t> id = StoreReplay(db, sc, *r);
        !id.ok() && !absl::IsAlreadyExists(id.status())) {
      parts.push_back(absl::StrCat(strategy, ": ", id.status().message()));
      continue;
    }
    parts.push_back(absl::StrFormat("%s %.0f measured / %.0f predicted tok/s", strategy,
                                    r->measured_summary.decode_tokens_per_s,
                                    r->predicted_summary.decode_tokens_per_s));
  }
  fs::remove(weights);
  return absl::StrCat("Replay here (tinystories-relu-260k, half its FFN cached): ",
                      absl::StrJoin(parts, "; "));
}

// The validation catalog's entries for the demo's phones and models, stored so
// that the report's headlines quote the published figures beside ours.
std::string RunDemoValidation(const DemoArgs& a, const std::string& db) {
  absl::StatusOr<std::vector<ValidationCase>> cases = LoadValidationCatalog({});
  if (!cases.ok()) return absl::StrCat("validation skipped: ", cases.status().message());
  std::erase_if(*cases, [](const ValidationCase& c) {
    const std::string& d = c.config.device.name;
    const std::string& m = c.config.model.name;
    return c.trace_only || (d != "oneplus12" && d != "oneplus-ace2") ||
           (m != "turbosparse-mistral-7b" && m != "turbosparse-mixtral-47b");
  });
  const std::vector<ValidationResult> results = RunValidation(*cases, {.jobs = a.jobs});
  if (absl::Status s = StoreValidation(db, results); !s.ok()) {
    return absl::StrCat("validation not stored: ", s.message());
  }
  int within = 0;
  for (const ValidationResult& r : results) within += r.status.ok() && r.within();
  return absl::StrFormat(
      "%d published figures for these phones and models, %d within tolerance "
      "(all: sparseflash validate)",
      static_cast<int>(results.size()), within);
}

int RunDemo(const DemoArgs& a) {
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) {
    return ReportError(absl::PermissionDeniedError(
        absl::StrCat(a.out, ": cannot create output directory: ", ec.message())));
  }
  const std::string db = (fs::path(a.out) / "results.db").string();
  Step(1, "generating traces");
  if (absl::Status s = GenerateTraces(a.out, {"turbosparse-mistral-7b", "turbosparse-mixtral-47b"});
      !s.ok()) {
    return ReportError(s);
  }
  Step(2, "simulating the built-in sweep (sweeps/demo.textproto)");
  absl::StatusOr<SweepOutcome> sweep = RunDemoSweep(a, db);
  if (!sweep.ok()) return ReportError(sweep.status());
  for (const std::string& f : sweep->failures) absl::FPrintF(stderr, "failed: %s\n", f);
  Step(3, "comparing with the published results for these phones and models");
  const std::string validation = RunDemoValidation(a, db);
  Step(4, "running the real TinyStories model through the offloaded engine");
  const std::string tiny = RunTinyStories(a);
  Step(5, "replaying on this machine");
  const std::string replay = a.replay ? RunDemoReplay(a, db) : "replay skipped (--no-replay)";
  Step(6, "writing the report");
  absl::StatusOr<ReportData> data = LoadReportData(db);
  if (!data.ok()) return ReportError(data.status());
  const std::string report_dir = (fs::path(a.out) / "report").string();
  absl::StatusOr<std::vector<std::string>> files = WriteReport(*data, report_dir);
  if (!files.ok()) return ReportError(files.status());

  absl::PrintF(
      "Results: %s (%zu runs: %lld simulated now, %lld already stored, %lld budgets "
      "infeasible)\nReport:  %s\n\n",
      db, data->runs.size(), static_cast<long long>(sweep->ran),
      static_cast<long long>(sweep->skipped), static_cast<long long>(sweep->infeasible),
      (fs::path(report_dir) / "report.html").string());
  for (const Study& s : data->studies) {
    if (s.device == "oneplus12") {
      absl::PrintF("%s on %s: %s\n", s.model, s.device, StudyHeadline(s, /*why=*/false));
    }
  }
  absl::PrintF("%s. %s\n%s.\n", tiny, replay, validation);
  return sweep->failures.empty() ? 0 : 1;
}

}  // namespace

void AddDemoCommand(CLI::App& app, Dispatch& dispatch) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "The built-in example: a sweep of two phones x two models x four strategies over eight "
      "to ten budgets, the published figures for them, the real TinyStories model, a replay "
      "here, results.db and report.html");
  demo->add_option("--out", args->out, "Output directory")->capture_default_str();
  demo->add_option("--tiny-model", args->tiny_dir,
                   "Folder of the TinyStories model (model_qint80.bin, tok1024.bin, golden/)")
      ->capture_default_str();
  demo->add_option("--jobs", args->jobs, "Simulations in parallel")
      ->capture_default_str()
      ->check(InRange(1, kMaxJobs));
  demo->add_flag("!--no-replay", args->replay, "Skip the calibration and replay on this machine");
  demo->callback([&dispatch, args] { dispatch.action = [args] { return RunDemo(*args); }; });
}

}  // namespace sparseflash::cli
