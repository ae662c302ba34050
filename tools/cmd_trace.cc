// sparseflash trace gen|stats|import|export.
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "common/heap_reuse.h"
#include "common/textproto.h"
#include "common/worker_pool.h"
#include "tools/cli.h"
#include "traces/generator.h"
#include "traces/model.pb.h"
#include "traces/model_catalog.h"
#include "traces/npy_import.h"
#include "traces/text_format.h"
#include "traces/trace_reader.h"
#include "traces/trace_stats.h"

namespace sparseflash::cli {
namespace {

struct GenArgs {
  std::string model = "turbosparse-mistral-7b";
  std::string profile;
  std::string out;
  uint64_t tokens = 256;
  uint64_t seed = 1;
  int threads = HardwareThreads();
  double persistence = -1, persistence_cold = -1, coactivation = -1, predicted_ratio = -1;
  double reuse_swing = -1;
  bool force = false;
};

// --profile: another catalog model's generator profile.
absl::Status ApplyProfile(const GenArgs& a, ModelSpec* model) {
  if (!a.profile.empty()) {
    absl::StatusOr<ModelSpec> other = LoadModel(a.profile);
    if (!other.ok()) return other.status();
    if (other->layers != model->layers) {
      return absl::InvalidArgumentError(absl::StrCat("profile of '", a.profile, "' has ",
                                                     other->layers, " layers; model '", model->name,
                                                     "' has ", model->layers));
    }
    model->generator = other->generator;
    // The trace's provenance says whose profile it is (profiles share names).
    model->generator.name = absl::StrCat(other->generator.name, " of ", other->name);
  }
  GeneratorProfile& g = model->generator;
  if (a.persistence >= 0) g.persistence = a.persistence;
  if (a.persistence_cold >= 0) g.persistence_cold = a.persistence_cold;
  if (a.coactivation >= 0) g.coactivation = a.coactivation;
  if (a.predicted_ratio >= 0) g.predicted_ratio = a.predicted_ratio;
  if (a.reuse_swing >= 0) g.reuse_swing = a.reuse_swing;
  return g.Validate(model->layers);
}

int RunGen(const GenArgs& a) {
  TuneHeapForSimulation(1);  // the generator's per-neuron arrays in huge pages, as simulate's
  absl::StatusOr<ModelSpec> model = LoadModel(a.model);
  if (!model.ok()) return ReportError(model.status());
  if (absl::Status s = ApplyProfile(a, &*model); !s.ok()) return ReportError(s);
  GeneratorOptions options{.seed = a.seed, .tokens = a.tokens, .threads = a.threads};
  absl::Status s = WriteGeneratedTrace(
      *model, options, a.out, [&](uint64_t done) { Progress("trace gen", done, a.tokens); },
      a.force);
  if (!s.ok()) return ReportError(s);
  std::fprintf(stderr, "wrote %s: %llu tokens of %s (profile %s, seed %llu)\n", a.out.c_str(),
               static_cast<unsigned long long>(a.tokens), model->name.c_str(),
               model->generator.name.c_str(), static_cast<unsigned long long>(a.seed));
  return 0;
}

int RunStats(const std::string& path, bool json) {
  absl::StatusOr<TraceStats> stats = ComputeTraceStats(path);
  if (!stats.ok()) return ReportError(stats.status());
  if (json) {
    std::cout << stats->ToJson().dump(2) << "\n";
  } else {
    std::cout << stats->ToText();
  }
  return 0;
}

struct ImportArgs {
  std::string model;
  std::string text;
  std::vector<std::string> npy;
  std::string out;
  std::string inputs;
  double threshold = -1;
  bool force = false;
};

// Each layer's mean share of active neurons, read back from the written trace.
absl::StatusOr<std::vector<double>> LayerActiveRatios(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  const TraceModelShape& m = (*reader)->header().model;
  std::vector<double> sum(m.layers, 0);
  uint64_t tokens = 0;
  absl::Status s = ForEachToken(**reader, [&](const TokenActivations& t) {
    for (const LayerActivations& l : t.layers) {
      for (const NeuronSet& set : l.experts) sum[l.layer] += double(set.active.size()) / m.d_ffn;
    }
    ++tokens;
  });
  if (!s.ok()) return s;
  for (double& v : sum) v = tokens ? v / tokens : 0;
  return sum;
}

int RunImport(const ImportArgs& a) {
  absl::StatusOr<ModelSpec> model = LoadModel(a.model);
  if (!model.ok()) return ReportError(model.status());
  TraceProvenance provenance;
  provenance.inputs = a.inputs;
  provenance.tool = "sparseflash trace import";
  const TraceWriterOptions writer{.overwrite = a.force};
  absl::Status s;
  if (!a.text.empty() == !a.npy.empty()) {
    s = absl::InvalidArgumentError("give either --text FILE or --npy FILES (one per layer)");
  } else if (!a.text.empty()) {
    provenance.recorded_from = a.text;
    s = ImportTextTrace(a.text, ShapeOf(*model), provenance, a.out, writer);
  } else {
    provenance.recorded_from = a.npy[0];
    s = ImportNpyMasks(a.npy, ShapeOf(*model), provenance, a.out,
                       {.threshold = a.threshold, .writer = writer})
            .status();
  }
  if (!s.ok()) return ReportError(s);
  absl::StatusOr<std::vector<double>> ratios = LayerActiveRatios(a.out);
  if (!ratios.ok()) return ReportError(ratios.status());
  std::string per_layer;
  for (double r : *ratios) absl::StrAppendFormat(&per_layer, " %.2f", 100 * r);
  std::fprintf(stderr, "wrote %s; active %% per layer:%s\n", a.out.c_str(), per_layer.c_str());
  return 0;
}

struct ExportArgs {
  std::string in, out, format = "text", set = "active";
  int64_t object_bytes = 8192;
};

int RunExport(const std::string& path, const std::string& out) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return ReportError(reader.status());
  if (out.empty()) {
    absl::Status s = ExportTextTrace(**reader, [](absl::string_view text) {
      if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
        return absl::UnavailableError("writing to standard output failed");
      }
      return absl::OkStatus();
    });
    return s.ok() ? 0 : ReportError(s);
  }
  // Into a new file that replaces `out` only once the whole trace was read.
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(out, {.sync = false});
  if (!file.ok()) return ReportError(file.status());
  absl::Status s =
      ExportTextTrace(**reader, [&](absl::string_view text) { return (*file)->Write(text); });
  if (s.ok()) s = (*file)->Commit();
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace

void AddTraceCommands(CLI::App& app, Dispatch& dispatch) {
  CLI::App* trace =
      app.add_subcommand("trace", "Generate, inspect, import and export activation traces");
  trace->require_subcommand(1);

  auto gen_args = std::make_shared<GenArgs>();
  CLI::App* gen = trace->add_subcommand(
      "gen", "Generate a synthetic trace calibrated to the model's published statistics");
  gen->add_option("--model", gen_args->model, "Catalog model name or model .textproto")
      ->capture_default_str();
  gen->add_option("--tokens", gen_args->tokens, "Tokens to generate")
      ->capture_default_str()
      ->check(InRange(1, kMaxTokensOption));
  gen->add_option("--seed", gen_args->seed, "Random seed (same seed, same bytes)")
      ->capture_default_str()
      ->check(InRange(0, 1.8e19));
  gen->add_option("--out", gen_args->out, "Output trace file")->required();
  gen->add_option("--threads", gen_args->threads,
                  "Threads stepping a token's layers (the trace is the same for any count)")
      ->capture_default_str()
      ->check(InRange(1, 1024));
  gen->add_option("--profile", gen_args->profile,
                  "Use another catalog model's generator profile (same layer count)");
  gen->add_option("--persistence", gen_args->persistence,
                  "Override the lag-1 persistence of each neuron (0..1)")
      ->check(InRange(0, 0.999));
  gen->add_option("--persistence-cold", gen_args->persistence_cold,
                  "Override the persistence of the coldest neurons (0..1)")
      ->check(InRange(0, 0.999));
  gen->add_option("--coactivation", gen_args->coactivation,
                  "Override the friend-group co-activation (0..1)")
      ->check(InRange(0, 1));
  gen->add_option("--predicted-ratio", gen_args->predicted_ratio,
                  "Override predicted set / true set (0 = no predictor sets)")
      ->check(InRange(0, 100));
  gen->add_option("--reuse-swing", gen_args->reuse_swing,
                  "Override the per-token swing of the share of neurons kept, shared by all "
                  "layers (0..1; 0 = every token alike)")
      ->check(InRange(0, 1));
  gen->add_flag("--force", gen_args->force, "Replace an existing output file");
  gen->callback(
      [&dispatch, gen_args] { dispatch.action = [gen_args] { return RunGen(*gen_args); }; });

  auto stats_path = std::make_shared<std::string>();
  auto stats_json = std::make_shared<bool>(false);
  CLI::App* stats = trace->add_subcommand(
      "stats", "Per-layer and overall statistics: active ratio, skew, reuse, window, LRU");
  stats->add_option("file", *stats_path, "Trace file")->required();
  stats->add_flag("--json", *stats_json, "Print one JSON object");
  stats->callback([&dispatch, stats_path, stats_json] {
    dispatch.action = [=] { return RunStats(*stats_path, *stats_json); };
  });

  auto imp = std::make_shared<ImportArgs>();
  CLI::App* import = trace->add_subcommand(
      "import",
      "Convert a text id list (A/P/G lines) or per-layer .npy arrays into a trace; prints "
      "the imported per-layer active ratios");
  import->footer(
      "--npy takes one file per layer, each a C-order 2-D array of shape (tokens, neurons). "
      "bool and integer arrays (int8..int64, uint8..uint64) are masks: non-zero = active. "
      "float16/32/64 arrays hold activation values: give --threshold T, and a neuron counts "
      "as active when |value| > T.");
  import->add_option("--model", imp->model, "Catalog model the trace belongs to")->required();
  import->add_option("--text", imp->text, "Text file: 'A <token> <layer> <ids...>' lines");
  import->add_option("--npy", imp->npy, "One .npy array per layer (tokens x neurons)");
  import
      ->add_option("--threshold", imp->threshold,
                   "For float arrays: active when |value| > T (required for them)")
      ->check(InRange(0, 1e30));
  import->add_option("--inputs", imp->inputs, "Description of the inputs (prompt set)");
  import->add_option("--out", imp->out, "Output trace file")->required();
  import->add_flag("--force", imp->force, "Replace an existing output file");
  import->callback([&dispatch, imp] { dispatch.action = [imp] { return RunImport(*imp);
};
}  // namespace sparseflash::cli
);

auto ex = std::make_shared<ExportArgs>();
CLI::App* exp = trace->add_subcommand(
    "export",
    "Write a trace as text (A/P/G lines) or as its cache requests (libCacheSim oracleGeneral)");
exp->add_option("file", ex->in, "Trace file")->required();
exp->add_option("--format", ex->format,
                "text: A/P/G lines; oracle-general: one 24-byte record per neuron access, "
                "as libCacheSim reads")
    ->check(CLI::IsMember({"text", "oracle-general"}));
exp->add_option("--set", ex->set, "For oracle-general: the neurons requested (active|predicted)");
exp->add_option("--object-bytes", ex->object_bytes,
                "For oracle-general: each neuron's object size");
exp->add_option("--out", ex->out, "Output file (default for text: stdout)");
exp->callback([&dispatch, ex] {
  dispatch.action = [=] {
    return ex->format == "text" ? RunExport(ex->in, ex->out)
                                : RunExportRequests(ex->in, ex->out, ex->set, ex->object_bytes);
  };
});
AddTraceCacheCommands(*trace, dispatch);
}

}  // namespace sparseflash::cli
