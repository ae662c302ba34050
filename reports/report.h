// The report of a results database: report.html (one self-contained page with
// inline SVG charts and CSS, no scripts), report.md, and CSV files of every run,
// of tokens/s by budget, of speedups and of predicted against measured runs.
// Files are written whole (to a temporary name, then renamed), so a failed
// write never leaves a half report.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reports/report_data.h"

namespace sparseflash {

std::string RenderHtml(const ReportData& data);
std::string RenderMarkdown(const ReportData& data);

// CSV files by name: runs.csv, budgets.csv, speedups.csv, replays.csv.
std::vector<std::pair<std::string, std::string>> RenderCsvFiles(const ReportData& data);

// Writes every file into `out_dir` (created if missing); returns their paths.
absl::StatusOr<std::vector<std::string>> WriteReport(const ReportData& data,
                                                     const std::string& out_dir);

}  // namespace sparseflash
