#include "reports/report_sections.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "reports/svg_chart.h"

namespace sparseflash {
namespace {

TableCell Text(const std::string& s) { return {.text = s}; }
// Three significant digits, without exponents for the magnitudes reports show.
TableCell Empty() { return {.text = "–"}; }
TableCell Num(double v) {
  if (std::isnan(v)) return Empty();  // not observed
  const double a = std::fabs(v);
  std::string text = a >= 100  ? absl::StrFormat("%.0f", v)
                     : a >= 10 ? absl::StrFormat("%.1f", v)
                     : a >= 1  ? absl::StrFormat("%.2f", v)
                               : absl::StrFormat("%.3g", v);
  return {.text = text, .value = v, .numeric = true};
}
TableCell Fixed(double v, int digits) {
  if (std::isnan(v)) return Empty();  // not observed
  return {.text = absl::StrFormat("%.*f", digits, v), .value = v, .numeric = true};
}

// A column of byte counts: its unit fits the largest (see ByteUnitFor).
template <typename Rows, typename BytesOf>
ByteUnit ColumnUnit(const Rows& rows, BytesOf bytes_of) {
  double largest = 0;
  for (const auto& r : rows) largest = std::max(largest, static_cast<double>(bytes_of(r)));
  return ByteUnitFor(largest);
}
std::string WithUnit(const std::string& label, ByteUnit u) {
  return absl::StrCat(label, " (", u.name, ")");
}
TableCell Bytes(double bytes, ByteUnit u) { return Fixed(bytes / u.bytes, 2); }

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Table BudgetTable(const Study& s) {
  Table t{.title = absl::StrCat("Decode tokens/s by memory budget, ", s.model, " on ", s.device)};
  std::set<int64_t> budgets;
  for (const auto& [strategy, curve] : s.curves) {
    for (const BudgetPoint& p : curve) budgets.insert(p.memory_bytes);
  }
  const ByteUnit unit = ByteUnitFor(budgets.empty() ? 0 : *budgets.rbegin());
  t.header = {WithUnit("memory budget", unit)};
  for (const auto& [strategy, curve] : s.curves) t.header.push_back(strategy);
  t.header.push_back("fastest offloading");
  std::map<int64_t, const ReportRun*> fastest(s.fastest.begin(), s.fastest.end());
  for (int64_t b : budgets) {
    std::vector<TableCell> row = {Bytes(b, unit)};
    for (const auto& [strategy, curve] : s.curves) {
      auto it = std::find_if(curve.begin(), curve.end(),
                             [&](const BudgetPoint& p) { return p.memory_bytes == b; });
      row.push_back(it == curve.end() ? Empty() : Num(it->run->tokens_per_s));
    }
    row.push_back(fastest.count(b) ? Text(fastest[b]->strategy) : Empty());
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table SpeedupTable(const Study& s) {
  Table t{.title = absl::StrCat("Speedup at equal memory budget, ", s.model, " on ", s.device),
          .left_columns = 3};
  const ByteUnit unit = ColumnUnit(s.speedups, [](const Speedup& sp) { return sp.memory_bytes; });
  t.header = {"strategy", "over", WithUnit("memory budget", unit), "speedup (x)"};
  for (const Speedup& sp : s.speedups) {
    t.rows.push_back(
        {Text(sp.strategy), Text(sp.baseline), Bytes(sp.memory_bytes, unit), Fixed(sp.factor, 2)});
  }
  return t;
}

Table PolicyTable(const Study& s) {
  Table t{.title = absl::StrCat("Cache policies, ", s.model, " on ", s.device), .left_columns = 3};
  const ByteUnit unit =
      ColumnUnit(s.policy_comparisons, [](const PolicyComparison& g) { return g.memory_bytes; });
  t.header = {"strategy",
              WithUnit("memory budget", unit),
              "policy",
              "tokens/s",
              "hit rate (%)",
              "tokens/s vs LRU (x)",
              "hit rate, % of Belady's"};
  for (const PolicyComparison& g : s.policy_comparisons) {
    std::vector<std::pair<std::string, const ReportRun*>> runs(g.runs.begin(), g.runs.end());
    std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
      return a.second->tokens_per_s > b.second->tokens_per_s;
    });
    const ReportRun* lru = g.runs.count("lru") ? g.runs.at("lru") : nullptr;
    const ReportRun* belady = g.runs.count("belady") ? g.runs.at("belady") : nullptr;
    for (const auto& [policy, r] : runs) {
      t.rows.push_back(
          {Text(g.strategy), Bytes(g.memory_bytes, unit), Text(policy), Num(r->tokens_per_s),
           Fixed(100 * r->hit_rate, 1),
           lru && lru->tokens_per_s > 0 ? Fixed(r->tokens_per_s / lru->tokens_per_s, 3) : Empty(),
           belady && belady->hit_rate > 0 ? Fixed(100 * r->hit_rate / belady->hit_rate, 1)
                                          : Empty()});
    }
  }
  return t;
}

namespace {

// The median of the absolute values; empty for none.
TableCell MedianAbsPercent(std::vector<double> v) {
  if (v.empty()) return Text("");
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return Fixed(100 * (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2), 1);
}

}  // namespace

Table ReplayTable(const ReportData& d) {
  Table t{.title =
              "Replays: measured on this hardware against the simulator's prediction "
              "(and, where replay --recheck-compute measured them, at the compute rates "
              "around the run)",
          .left_columns = 4};
  const ByteUnit unit =
      ColumnUnit(d.replays, [](const Replay& r) { return r.measured->memory_bytes; });
  t.header = {
      "strategy",          "device profile",     "model",     WithUnit("memory budget", unit),
      "measured tokens/s", "predicted tokens/s", "error (%)", "at the rates now",
      "its error (%)"};
  std::vector<double> errors, errors_now;
  for (const Replay& r : d.replays) {
    const double now = r.measured->predicted_now_tokens_per_s;
    const double error_now = now / r.measured->tokens_per_s - 1;
    errors.push_back(r.error);
    if (now > 0 && r.measured->tokens_per_s > 0) errors_now.push_back(error_now);
    t.rows.push_back(
        {Text(r.measured->strategy), Text(r.measured->device), Text(r.measured->model),
         Bytes(r.measured->memory_bytes, unit), Num(r.measured->tokens_per_s),
         Num(r.predicted->tokens_per_s), Fixed(100 * r.error, 1), now > 0 ? Num(now) : Empty(),
         now > 0 && r.measured->tokens_per_s > 0 ? Fixed(100 * error_now, 1) : Empty()});
  }
  if (!d.replays.empty()) {
    t.rows.push_back({Text("median |error|"), Text(""), Text(""), Text(""), Text(""), Text(""),
                      MedianAbsPercent(errors), Text(""), MedianAbsPercent(errors_now)});
  }
  return t;
}

Table MeasuredTable(const ReportData& d) {
  Table t{.title = "Measured elsewhere (db import), beside the simulator", .left_columns = 4};
  auto elsewhere = [](const ReportRun& m) { return m.mode == "real" && m.linked_run == 0; };
  const ByteUnit unit = ColumnUnit(
      d.runs, [&](const ReportRun& m) { return elsewhere(m) ? m.memory_bytes : int64_t{0}; });
  t.header = {"strategy",
              "device",
              "model",
              WithUnit("memory budget", unit),
              "threads",
              "measured tokens/s",
              "simulated tokens/s",
              "error (%)"};
  for (const ReportRun& m : d.runs) {
    if (!elsewhere(m)) continue;  // a replay's measurement has its own
    const ReportRun* sim = nullptr;
    for (const ReportRun& r : d.runs) {
      if (r.mode == "simulated" && r.strategy == m.strategy && r.device == m.device &&
          r.model == m.model && r.memory_bytes == m.memory_bytes && r.prompt_tokens == 0) {
        sim = &r;
        break;
      }
    }
    t.rows.push_back({Text(m.strategy), Text(m.device), Text(m.model),
                      m.memory_bytes > 0 ? Bytes(m.memory_bytes, unit) : Text("unlimited"),
                      Fixed(m.threads, 0), Num(m.tokens_per_s),
                      sim ? Num(sim->tokens_per_s) : Empty(),
                      sim ? Fixed(100 * (sim->tokens_per_s / m.tokens_per_s - 1), 1) : Empty()});
  }
  return t;
}

Table ValidationTable(const ReportData& d) {
  Table t{.title = "Validation: published figures against the simulator (sparseflash validate)",
          .left_columns = 4,
          .notes_column = true};
  t.header = {"entry",         "source",    "metric",
              "tolerance (%)", "published", "simulated",
              "error (%)",     "within",    "why outside (the catalog's known_miss)"};
  std::map<std::string, std::vector<double>> by_group;
  for (const ValidationRow& v : d.validation) {
    const bool within = std::fabs(v.error) <= v.tolerance;
    t.rows.push_back({Text(v.entry), Text(absl::StrCat(v.source, " ", v.tag)), Text(v.metric),
                      Fixed(100 * v.tolerance, 0), Num(v.published), Num(v.simulated),
                      Fixed(100 * v.error, 1), Text(within ? "yes" : "no"),
                      Text(within                 ? ""
                           : v.known_miss.empty() ? "no reason recorded"
                                                  : v.known_miss)});
    by_group[v.group].push_back(std::fabs(v.error));
    by_group["all"].push_back(std::fabs(v.error));
  }
  for (auto& [group, errors] : by_group) {
    std::sort(errors.begin(), errors.end());
    const size_t n = errors.size();
    const double median = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
    t.rows.push_back({Text(absl::StrCat("group ", group, ": median |error|, max")), Text(""),
                      Text(""), Text(""), Text(""), Text(""), Fixed(100 * median, 1),
                      Text(absl::StrFormat("max %.1f %%", 100 * errors.back())), Text("")});
  }
  return t;
}

Table RunsTable(const ReportData& d) {
  Table t{.title = "Every run", .left_columns = 8};
  t.header = {"id",       "mode",         "device",         "model",         "strategy",
              "policy",   "options",      "trace",          "threads",       "tokens",
              "memory",   "cache",        "tokens/s",       "ttft (ms)",     "p50 (ms)",
              "p99 (ms)", "hit rate (%)", "flash MB/token", "I/O stall (%)", "linked run"};
  const ByteUnit memory = ColumnUnit(d.runs, [](const ReportRun& r) { return r.memory_bytes; });
  const ByteUnit cache = ColumnUnit(d.runs, [](const ReportRun& r) { return r.cache_bytes; });
  t.header[10] = WithUnit(t.header[10], memory);
  t.header[11] = WithUnit(t.header[11], cache);
  for (const ReportRun& r : d.runs) {
    t.rows.push_back({Fixed(static_cast<double>(r.id), 0),
                      Text(r.mode + (r.origin.empty() ? "" : " (" + r.origin + ")")),
                      Text(r.device),
                      Text(r.model),
                      Text(r.strategy),
                      Text(r.policy_used.empty() ? "–" : r.policy_used),
                      Text(r.options),
                      Text(r.trace),
                      Fixed(r.threads_used, 0),
                      Fixed(static_cast<double>(r.tokens), 0),
                      Bytes(r.memory_bytes, memory),
                      Bytes(r.cache_bytes, cache),
                      Num(r.tokens_per_s),
                      Num(r.ttft_ms),
                      Num(r.p50_ms),
                      Num(r.p99_ms),
                      Fixed(100 * r.hit_rate, 1),
                      Num(r.flash_bytes_per_token / 1e6),
                      Fixed(100 * r.io_stall_share, 1),
                      r.linked_run ? Fixed(static_cast<double>(r.linked_run), 0) : Text("")});
  }
  return t;
}

std::string TableHtml(const Table& t) {
  std::string h = absl::StrCat("<table><caption>", EscapeXml(t.title), "</caption>\n<tr>");
  for (size_t i = 0; i < t.header.size(); ++i) {
    absl::StrAppend(&h, "<th", t.AlignedLeft(i) ? " class=\"l\"" : "", ">", EscapeXml(t.header[i]),
                    "</th>");
  }
  h += "</tr>\n";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&h, "<td", t.AlignedLeft(i) && !row[i].numeric ? " class=\"l\"" : "", ">",
                      EscapeXml(row[i].text), "</td>");
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

std::string TableMarkdown(const Table& t) {
  std::string m = absl::StrCat("| ", absl::StrJoin(t.header, " | "), " |\n|");
  for (size_t i = 0; i < t.header.size(); ++i) {
    m += t.AlignedLeft(i) ? "---|" : "---:|";
  }
  m += "\n";
  for (const auto& row : t.rows) {
    m += "|";
    for (const TableCell& c : row) {
      std::string text = c.text;
      std::replace(text.begin(), text.end(), '|', '/');
      absl::StrAppend(&m, " ", text, " |");
    }
    m += "\n";
  }
  return m;
}

std::string TableCsv(const Table& t) {
  std::vector<std::string> header;
  for (const std::string& h : t.header) header.push_back(CsvField(h));
  std::string c = absl::StrCat(absl::StrJoin(header, ","), "\n");
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    for (const TableCell& cell : row) {
      cells.push_back(cell.numeric ? absl::StrFormat("%.10g", cell.value)
                                   : CsvField(cell.text == "–" ? "" : cell.text));
    }
    absl::StrAppend(&c, absl::StrJoin(cells, ","), "\n");
  }
  return c;
}

}  // namespace sparseflash
