// sparseflash db: maintenance of results databases (merge of sweep shards,
// import of real llama.cpp measurements).
#include "absl/strings/str_format.h"
#include "common/units.h"
#include "reports/db_merge.h"
#include "reports/llama_bench_import.h"
#include "tools/cli.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

struct MergeArgs {
  std::string out;
  std::vector<std::string> inputs;
  bool keep_both = false;
};

int RunMerge(const MergeArgs& a) {
  // Inputs first: a bad input leaves OUT as it was (not even created).
  if (absl::Status s = CheckMergeInputs(a.out, a.inputs); !s.ok()) return ReportError(s);
  absl::StatusOr<std::unique_ptr<ResultsDb>> out = ResultsDb::Open(a.out);
  if (!out.ok()) return ReportError(out.status());
  absl::StatusOr<MergeStats> stats = MergeDatabases(**out, a.inputs, a.keep_both);
  if (!stats.ok()) return ReportError(stats.status());
  absl::PrintF(
      "merged %zu databases into %s: %lld runs copied, %lld identical skipped, %lld kept "
      "beside a different result\n",
      a.inputs.size(), a.out, static_cast<long long>(stats->copied),
      static_cast<long long>(stats->identical), static_cast<long long>(stats->kept_both));
  return 0;
}

struct ImportArgs {
  std::string db, llama_bench, device, model, memory;
};

int RunImport(const ImportArgs& a) {
  LlamaBenchContext c{.device = a.device, .model = a.model};
  if (absl::StatusOr<ModelSpec> m = LoadModel(a.model); !m.ok()) return ReportError(m.status());
  if (!a.memory.empty()) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(a.memory);
    if (!bytes.ok()) return ReportError(bytes.status());
    c.memory_bytes = *bytes;
  }
  absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(a.db);
  if (!db.ok()) return ReportError(db.status());
  absl::StatusOr<ImportCounts> n = ImportLlamaBench(**db, a.llama_bench, c);
  if (!n.ok()) return ReportError(n.status());
  absl::PrintF(
      "%s: %lld llama.cpp runs stored in %s, %lld already there, %lld prompt-only "
      "tests skipped\n",
      a.llama_bench, static_cast<long long>(n->stored), a.db,
      static_cast<long long>(n->already_stored), static_cast<long long>(n->skipped_prompt_only));
  return 0;
}

}  // namespace

void AddDbCommands(CLI::App& app, Dispatch& dispatch) {
  CLI::App* db = app.add_subcommand("db", "Results databases");
  db->require_subcommand(1);
  auto m = std::make_shared<MergeArgs>();
  CLI::App* merge =
      db->add_subcommand("merge", "Merge databases (e.g. sweep shards) into OUT; all or nothing");
  merge->add_option("OUT", m->out, "Database to merge into (created if missing)")->required();
  merge->add_option("IN", m->inputs, "Databases to merge")->required();
  merge->add_flag("--keep-both", m->keep_both,
                  "Keep a run whose configuration is stored with different figures (otherwise "
                  "the merge stops and writes nothing)");
  merge->callback([&dispatch, m] { dispatch.action = [m] { return RunMerge(*m); }; });

  auto i = std::make_shared<ImportArgs>();
  CLI::App* import = db->add_subcommand(
      "import", "Store measurements made outside sparseflash as real runs (llama-bench -o json)");
  import->add_option("--llama-bench", i->llama_bench, "JSON printed by llama-bench -o json")
      ->required();
  import->add_option("--db", i->db, "Results database (created if missing)")->required();
  import->add_option("--device", i->device, "Profile name of the machine it ran on")->required();
  import->add_option("--model", i->model, "Catalog model the GGUF file stands for")->required();
  import->add_option("--memory", i->memory,
                     "Memory limit it ran under (e.g. 2GiB, a cgroup's memory.max); none if "
                     "not given");
  import->callback([&dispatch, i] { dispatch.action = [i] { return RunImport(*i);
};
}  // namespace sparseflash::cli
);
}

}  // namespace sparseflash::cli
