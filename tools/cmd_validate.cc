// sparseflash validate: the built-in catalog of published results (and any
// catalog files of the user's own) through the simulator, predicted against
// published with the error per entry and per source, optionally stored.
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "reports/results_db.h"
#include "tools/cli.h"
#include "tools/run_store.h"
#include "tools/validation.h"

namespace sparseflash::cli {
namespace {

struct ValidateArgs {
  std::vector<std::string> catalogs;
  std::string db, only;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool json = false;
  bool markdown = false;
};

void PrintTable(const std::vector<ValidationResult>& results) {
  absl::PrintF("%-34s %-17s %10s %10s %8s\n", "entry", "metric", "published", "simulated", "error");
  std::map<std::string, std::vector<const ValidationResult*>> by_group;
  for (const ValidationResult& r : results) {
    const ValidationCase& e = *r.entry;
    by_group[e.group].push_back(&r);
    if (!r.status.ok()) {
      absl::PrintF("%-34s %-17s %10s %10s %8s  %s\n", e.id, MetricName(e.metric),
                   FormatMetricValue(e.metric, e.published), "failed", "", r.status.message());
      continue;
    }
    absl::PrintF(
        "%-34s %-17s %10s %10s %+7.1f%%%s\n", e.id, MetricName(e.metric),
        FormatMetricValue(e.metric, e.published), FormatMetricValue(e.metric, r.simulated),
        100 * r.error,
        r.within() ? "" : "  (outside " + absl::StrFormat("%.0f", 100 * e.tolerance) + " %)");
  }
  absl::PrintF("\n%-8s %8s %8s %10s %10s\n", "group", "entries", "within", "median", "max");
  std::vector<const ValidationResult*> all;
  for (const auto& [group, rs] : by_group) {
    const ErrorSummary s = Summarize(rs);
    absl::PrintF("%-8s %8d %8d %9.1f%% %9.1f%%\n", group, s.entries, s.within, 100 * s.median,
                 100 * s.max);
    all.insert(all.end(), rs.begin(), rs.end());
  }
  const ErrorSummary s = Summarize(all);
  absl::PrintF("%-8s %8d %8d %9.1f%% %9.1f%%\n", "all", s.entries, s.within, 100 * s.median,
               100 * s.max);
  bool header = false;
  for (const ValidationResult& r : results) {
    const std::string why = r.Explanation();
    if (why.empty() || !r.status.ok()) continue;  // a failure printed its own reason
    if (!header) absl::PrintF("\noutside the tolerance, and why:\n");
    header = true;
    absl::PrintF("  %-32s %s\n", r.entry->id, why);
  }
}

nlohmann::ordered_json ToJson(const std::vector<ValidationResult>& results) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ValidationResult& r : results) out.push_back(ValidationResultJson(r));
  return out;
}

int RunValidate(const ValidateArgs& a) {
  absl::StatusOr<std::vector<ValidationCase>> cases = LoadValidationCatalog(a.catalogs);
  if (!cases.ok()) return ReportError(cases.status());
  if (!a.only.empty()) {
    std::set<std::string> groups;
    for (const ValidationCase& c : *cases) groups.insert(c.group);
    std::erase_if(*cases, [&](const ValidationCase& c) {
      return c.group != a.only && !c.id.starts_with(a.only);
    });
    if (cases->empty()) {
      return ReportError(absl::NotFoundError(absl::StrCat(
          "--only ", a.only, ": no entry of that group or whose id starts so (groups: ",
          absl::StrJoin(groups, ", "), "; `validate --json` lists every id)")));
    }
  }
  // A database that cannot take the results fails before the runs; it is
  // opened after every other check, so a refused command creates none.
  if (!a.db.empty()) {
    absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(a.db);
    if (!db.ok()) return ReportError(db.status());
  }
  ProgressBar bar("validate");
  const auto start = std::chrono::steady_clock::now();
  std::vector<ValidationResult> results = RunValidation(
      *cases,
      {.jobs = a.jobs, .progress = [&](int done, int total) {
         bar(done, total,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
       }});
  if (!a.db.empty()) {
    absl::Status s = StoreValidation(a.db, results);
    if (!s.ok()) return ReportError(s);
    std::fprintf(stderr, "stored %zu results in %s\n", results.size(), a.db.c_str());
  }
  if (a.json) {
    std::cout << ToJson(results).dump(2) << "\n";
  } else if (a.markdown) {
    std::cout << ValidationMarkdown(results);
  } else {
    PrintTable(results);
    const std::string command = results.size() == 1 ? SimulateCommand(*results[0].entry) : "";
    if (!command.empty()) {
      absl::PrintF("\nthis entry alone, with every figure of the run:\n  %s\n", command);
    }
  }
  for (const ValidationResult& r : results) {
    if (!r.status.ok()) return 1;
  }
  return 0;
}

}  // namespace

void AddValidateCommand(CLI::App& app, Dispatch& dispatch) {
  auto a = std::make_shared<ValidateArgs>();
  CLI::App* v = app.add_subcommand(
      "validate",
      "Run the catalog of published results (validation/*.textproto, built in) through the "
      "simulator and print predicted against published, with the error per entry and group");
  v->add_option("--catalog", a->catalogs,
                "Also run the entries of this catalog file (repeatable; same format)");
  v->add_option("--only", a->only, "Only the entries of this group (a-h) or whose id starts so");
  v->add_option("--jobs", a->jobs, "Entries in parallel")
      ->capture_default_str()
      ->check(InRange(1, kMaxJobs));
  v->add_option("--db", a->db, "Store the results (and the simulated runs) in this database");
  v->add_flag("--json", a->json, "Print one JSON array");
  v->add_flag("--markdown", a->markdown,
              "Print Markdown tables (the form docs/dev-targets.md keeps)")
      ->excludes("--json");
  v->callback([&dispatch, a] { dispatch.action = [a] { return RunValidate(*a); }; });
}

}  // namespace sparseflash::cli
