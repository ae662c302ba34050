// sparseflash generate / trace record: the real TinyStories model decoded
// through the flash-offloaded engine on this machine.
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/units.h"
#include "engine/real/tiny_generate.h"
#include "engine/real/tiny_record.h"
#include "tools/cli.h"

namespace sparseflash::cli {
namespace {

struct GenerateArgs {
  std::string model_file, tokenizer, prompt, strategy = "powerinfer2", policy, memory, io = "auto";
  std::string scratch, trace_out;
  double ffn_resident = -1;
  int tokens = 0;
  bool force = false, quiet = false;
};

absl::StatusOr<TinyGenerateResult> Run(const GenerateArgs& a, TinyModel* model_out) {
  absl::StatusOr<TinyModel> model = TinyModel::Load(a.model_file);
  if (!model.ok()) return model.status();
  absl::StatusOr<Tokenizer> tok = Tokenizer::Load(a.tokenizer, model->config().vocab);
  if (!tok.ok()) return tok.status();
  TinyGenerateOptions o;
  o.prompt = a.prompt;
  o.positions = a.tokens;
  o.io = a.io;
  const std::string dir =
      a.scratch.empty() ? std::filesystem::temp_directory_path().string() : a.scratch;
  o.flash_file =
      (std::filesystem::path(dir) / absl::StrCat("sparseflash-", getpid(), ".sfweights")).string();
  o.strategy.strategy = a.strategy;
  o.strategy.policy = a.policy;
  if (!a.memory.empty()) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(a.memory);
    if (!bytes.ok()) return bytes.status();
    o.strategy.memory_bytes = *bytes;
  } else {
    o.strategy.ffn_resident = a.ffn_resident >= 0 ? a.ffn_resident : 0.5;
  }
  absl::StatusOr<TinyGenerateResult> r = GenerateTiny(*model, *tok, o);
  std::filesystem::remove(o.flash_file);
  *model_out = *std::move(model);
  return r;
}

void PrintStats(const TinyGenerateResult& r) {
  double seconds = 0;
  for (const StepRecord& t : r.record.tokens) seconds += t.latency.seconds();
  if (!r.notice.empty()) std::fprintf(stderr, "%s\n", r.notice.c_str());
  absl::FPrintF(stderr,
                "%zu positions in %.1f ms (%.0f tokens/s); cache %lld bundles (%s), hit rate "
                "%.1f %%; flash read by the engine %s, by the process per the kernel %s\n",
                r.record.tokens.size(), seconds * 1e3, r.record.tokens.size() / seconds,
                static_cast<long long>(r.cache_neurons), FormatBytes(r.memory.cache_bytes),
                r.cache_accesses ? 100.0 * r.cache_hits / r.cache_accesses : 0.0,
                FormatBytes(r.engine_read_bytes), FormatBytes(r.kernel_read_bytes));
}

void AddCommonOptions(CLI::App* cmd, GenerateArgs* a) {
  a->model_file = ShippedData("tinystories-relu-260k/model_qint80.bin");
  a->tokenizer = ShippedData("tinystories-relu-260k/tok1024.bin");
  cmd->add_option("--model-file", a->model_file, "TinyStories int8 model (model_qint80.bin)")
      ->capture_default_str();
  cmd->add_option("--tokenizer", a->tokenizer, "Tokenizer file (tok1024.bin)")
      ->capture_default_str();
  cmd->add_option("--prompt", a->prompt, "Prompt text (default: start from BOS)");
  cmd->add_option("--tokens", a->tokens, "Positions to run (default: the model's context)")
      ->check(InRange(1, kMaxTokensOption));
  cmd->add_option("--strategy", a->strategy, "powerinfer2 | llmflash | llamacpp | in_memory")
      ->capture_default_str();
  cmd->add_option("--policy", a->policy, "Cache policy (default: the strategy's)");
  auto* memory = cmd->add_option(
      "--memory", a->memory,
      "Memory budget of the model: its resident weights and neuron cache (e.g. 200KiB). Not "
      "the process's: the program itself holds a few MB, a hundred times this model");
  auto* ffn = cmd->add_option("--ffn-resident", a->ffn_resident,
                              "Share of FFN bundles the cache holds, 0..1 (default 0.5)")
                  ->check(InRange(0, 1));
  memory->excludes(ffn);
  cmd->add_option("--io", a->io, "uring | pread | auto")
      ->capture_default_str()
      ->check(CLI::IsMember({"uring", "pread", "auto"}));
  cmd->add_option("--scratch", a->scratch,
                  "Directory for the flash-layout weight file (default: the temp directory)");
}

}  // namespace

void AddGenerateCommands(CLI::App& app, CLI::App& trace, Dispatch& dispatch) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* gen = app.add_subcommand(
      "generate", "Decode the real TinyStories model through the flash-offloaded engine");
  AddCommonOptions(gen, a.get());
  gen->callback([&dispatch, a] {
    dispatch.action = [a] {
      TinyModel model;
      absl::StatusOr<TinyGenerateResult> r = Run(*a, &model);
      if (!r.ok()) return ReportError(r.status());
      std::cout << r->text << "\n";
      PrintStats(*r);
      return 0;
    };
  });
  auto b = std::make_shared<GenerateArgs>();
  CLI::App* rec = trace.add_subcommand(
      "record", "Run the real TinyStories model (as generate) and write its activations");
  AddCommonOptions(rec, b.get());
  rec->add_option("--out", b->trace_out, "Trace file to write")->required();
  rec->add_flag("--force", b->force, "Replace an existing file");
  rec->callback([&dispatch, b] {
    dispatch.action = [b] {
      TinyModel model;
      absl::StatusOr<TinyGenerateResult> r = Run(*b, &model);
      if (!r.ok()) return ReportError(r.status());
      absl::Status s = WriteTinyTrace(model, *r, b->prompt, b->trace_out, b->force);
      if (!s.ok()) return ReportError(s);
      std::fprintf(stderr, "wrote %s: %zu tokens\n", b->trace_out.c_str(), r->output.active.size());
      return 0;
    };
  });
}

}  // namespace sparseflash::cli
