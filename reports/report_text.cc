// report.md and the CSV files, and writing the report's files whole.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "reports/report.h"
#include "reports/report_sections.h"

namespace sparseflash {
namespace {

std::string StudyMarkdown(const Study& s) {
  std::string m = absl::StrCat("## ", s.model, " on ", s.device, "\n\n", StudyHeadline(s), "\n\n");
  absl::StrAppend(&m, "Decode tokens/s by memory budget (simulated, default settings):\n\n",
                  TableMarkdown(BudgetTable(s)), "\n");
  if (!s.speedups.empty())
    absl::StrAppend(&m, "Speedups:\n\n", TableMarkdown(SpeedupTable(s)), "\n");
  if (!s.at_chosen.empty()) {
    absl::StrAppend(&m, "Where the mean token's time goes at ", FormatMemory(s.chosen_budget),
                    " (ms):\n\n| strategy |");
    const auto& parts = s.at_chosen.front()->breakdown_ms;
    for (const auto& [part, ms] : parts) absl::StrAppend(&m, " ", part, " |");
    m += " hit rate (%) |\n|---|";
    for (size_t i = 0; i <= parts.size(); ++i) m += "---:|";
    m += "\n";
    for (const ReportRun* r : s.at_chosen) {
      absl::StrAppend(&m, "| ", r->strategy, " |");
      for (const auto& [part, ms] : r->breakdown_ms) absl::StrAppendFormat(&m, " %.2f |", ms);
      absl::StrAppendFormat(&m, " %.1f |\n", 100 * r->hit_rate);
    }
    m += "\n";
  }
  if (!s.policy_comparisons.empty()) {
    absl::StrAppend(&m, "Cache policies, fastest first at each budget:\n\n",
                    TableMarkdown(PolicyTable(s)), "\n");
  }
  return m;
}

absl::Status WriteWhole(const std::string& path, const std::string& content) {
  return WriteFileAtomically(path, content, {.sync = false});
}

}  // namespace

std::string RenderMarkdown(const ReportData& d) {
  std::string m = absl::StrCat("# sparseflash report\n\n", d.db_path, ": ", d.runs.size(),
                               " runs, ", d.studies.size(), " device and model pairs, ",
                               d.replays.size(), " replays on real hardware.\n\n");
  for (const Study& s : d.studies) m += StudyMarkdown(s);
  if (!d.replays.empty()) {
    absl::StrAppend(&m, "## Predicted against measured\n\n", TableMarkdown(ReplayTable(d)), "\n");
  }
  if (const Table measured = MeasuredTable(d); !measured.rows.empty()) {
    absl::StrAppend(&m, "## Measured elsewhere\n\n", TableMarkdown(measured), "\n");
  }
  if (!d.validation.empty()) {
    absl::StrAppend(&m, "## Validation against published results\n\n",
                    TableMarkdown(ValidationTable(d)), "\n");
  }
  absl::StrAppend(&m, "Every run is in runs.csv.\n");
  return m;
}

std::vector<std::pair<std::string, std::string>> RenderCsvFiles(const ReportData& d) {
  std::string budgets, speedups;
  for (const Study& s : d.studies) {
    // Strategy columns differ between studies, so the CSV files are long-form.
    for (const auto& [strategy, curve] : s.curves) {
      for (const BudgetPoint& p : curve) {
        absl::StrAppendFormat(&budgets, "%s,%s,%s,%d,%.10g,%.10g,%.10g\n", s.device, s.model,
                              strategy, p.memory_bytes, p.run->tokens_per_s, p.run->hit_rate,
                              p.run->io_stall_share);
      }
    }
    for (const Speedup& sp : s.speedups) {
      absl::StrAppendFormat(&speedups, "%s,%s,%s,%s,%d,%.10g\n", s.device, s.model, sp.strategy,
                            sp.baseline, sp.memory_bytes, sp.factor);
    }
  }
  // Every study's policy table, each row prefixed with its device and model.
  Table policies{.title = "policies"};
  for (const Study& s : d.studies) {
    const Table t = PolicyTable(s);
    if (policies.header.empty()) {
      policies.header = {"device", "model"};
      policies.header.insert(policies.header.end(), t.header.begin(), t.header.end());
    }
    for (const auto& row : t.rows) {
      std::vector<TableCell> r = {{.text = s.device}, {.text = s.model}};
      r.insert(r.end(), row.begin(), row.end());
      policies.rows.push_back(std::move(r));
    }
  }
  return {
      {"runs.csv", TableCsv(RunsTable(d))},
      {"policies.csv", TableCsv(policies)},
      {"budgets.csv",
       "device,model,strategy,memory_bytes,decode_tokens_per_s,hit_rate,io_stall_share\n" +
           budgets},
      {"speedups.csv", "device,model,strategy,over,memory_bytes,speedup\n" + speedups},
      {"replays.csv", TableCsv(ReplayTable(d))},
      {"validation.csv", TableCsv(ValidationTable(d))},
  };
}

absl::StatusOr<std::vector<std::string>> WriteReport(const ReportData& d, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create: ", ec.message()));
  std::vector<std::pair<std::string, std::string>> files = {{"report.html", RenderHtml(d)},
                                                            {"report.md", RenderMarkdown(d)}};
  for (auto& f : RenderCsvFiles(d)) files.push_back(std::move(f));
  std::vector<std::string> written;
  for (const auto& [name, content] : files) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (absl::Status s = WriteWhole(path, content); !s.ok()) return s;
    written.push_back(path);
  }
  return written;
}

}  // namespace sparseflash
