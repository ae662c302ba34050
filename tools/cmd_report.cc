// sparseflash report: the HTML, Markdown and CSV report of a results database.
#include <cstdio>
#include <filesystem>

#include "reports/report.h"
#include "tools/cli.h"

namespace sparseflash::cli {
namespace {

struct ReportArgs {
  std::string db, out = "report";
};

int RunReport(const ReportArgs& a) {
  absl::StatusOr<ReportData> data = LoadReportData(a.db);
  if (!data.ok()) return ReportError(data.status());
  absl::StatusOr<std::vector<std::string>> files = WriteReport(*data, a.out);
  if (!files.ok()) return ReportError(files.status());
  std::printf("report of %zu runs written to %s\n", data->runs.size(),
              (std::filesystem::path(a.out) / "report.html").c_str());
  for (const std::string& f : *files) std::printf("  %s\n", f.c_str());
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& app, Dispatch& dispatch) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* r = app.add_subcommand(
      "report", "Write report.html (charts), report.md and CSV files from a results database");
  r->add_option("--db", a->db, "Results database (SQLite)")->required();
  r->add_option("--out", a->out, "Output directory")->capture_default_str();
  r->callback([&dispatch, a] { dispatch.action = [a] { return RunReport(*a); }; });
}

}  // namespace sparseflash::cli
