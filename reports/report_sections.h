// The report's tables, built once and rendered as HTML, Markdown or CSV (CSV
// keeps full precision; the others show rounded text).
#pragma once

#include <string>
#include <vector>

#include "reports/report_data.h"

namespace sparseflash {

struct TableCell {
  std::string text;
  double value = 0;
  bool numeric = false;
};

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<TableCell>> rows;
  int left_columns = 1;       // leading text columns, aligned left
  bool notes_column = false;  // the last column is free text, aligned left too

  bool AlignedLeft(size_t column) const {
    return static_cast<int>(column) < left_columns || (notes_column && column + 1 == header.size());
  }
};

// Tokens/s of each strategy (columns) at each budget (rows) of a study.
Table BudgetTable(const Study& study);
// Speedups over llama.cpp and LLM in a Flash, per strategy and budget.
Table SpeedupTable(const Study& study);
// Cache policies per strategy and budget, fastest first: tokens/s, hit rate,
// tokens/s relative to LRU and hit rate as a share of Belady's (the ceiling).
Table PolicyTable(const Study& study);
// Replays: measured and predicted tokens/s and the error.
Table ReplayTable(const ReportData& data);
// Measured runs not made by a replay (e.g. llama-bench imports), each beside the
// simulated run of its strategy on the same device, model and budget, if any.
Table MeasuredTable(const ReportData& data);
// Validation: each published figure against the simulator's, with the error,
// then the median and largest |error| per group.
Table ValidationTable(const ReportData& data);
// Every run with its configuration and figures.
Table RunsTable(const ReportData& data);

std::string TableHtml(const Table& table);
std::string TableMarkdown(const Table& table);
std::string TableCsv(const Table& table);

}  // namespace sparseflash
