// sparseflash db: maintenance of results databases (merge of sweep shards).
#include "absl/strings/str_format.h"
#include "reports/db_merge.h"
#include "tools/cli.h"

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
  absl::PrintF("merged %zu databases into %s: %lld runs copied, %lld identical skipped, %lld kept "
               "beside a different result\n",
               a.inputs.size(), a.out, static_cast<long long>(stats->copied),
               static_cast<long long>(stats->identical), static_cast<long long>(stats->kept_both));
  return 0;
}

}  // namespace

void AddDbCommands(CLI::App& app, Dispatch& dispatch) {
  CLI::App* db = app.add_subcommand("db", "Results databases");
  db->require_subcommand(1);
  auto m = std::make_shared<MergeArgs>();
  CLI::App* merge = db->add_subcommand(
      "merge", "Merge databases (e.g. sweep shards) into OUT; all or nothing");
  merge->add_option("OUT", m->out, "Database to merge into (created if missing)")->required();
  merge->add_option("IN", m->inputs, "Databases to merge")->required();
  merge->add_flag("--keep-both", m->keep_both,
                  "Keep a run whose configuration is stored with different figures (otherwise "
                  "the merge stops and writes nothing)");
  merge->callback([&dispatch, m] { dispatch.action = [m] { return RunMerge(*m); }; });
}

}  // namespace sparseflash::cli
