// report.html: one page per database, a section per device x model with its
// headline and charts, then predicted against measured, then every run.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "reports/report.h"
#include "reports/report_sections.h"
#include "reports/svg_chart.h"

namespace sparseflash {
namespace {

constexpr char kCss[] = R"css(
body { font-family: Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1440px;
       padding: 0 16px; color: #222; line-height: 1.45; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 21px; border-bottom: 2px solid #0072B2; padding-bottom: 4px; margin-top: 36px; }
p.meta { color: #555; margin-top: 0; }
p.headline { font-size: 17px; background: #f3f7fb; border-left: 4px solid #0072B2;
             padding: 10px 14px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 18px; }
.charts figure { margin: 0; border: 1px solid #e3e3e3; border-radius: 6px; padding: 6px; }
.charts svg { width: 100%; height: auto; }
figcaption { font-size: 13px; color: #555; padding: 2px 6px 4px; }
table { border-collapse: collapse; font-size: 13px; margin: 10px 0; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: right; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
details summary { cursor: pointer; font-weight: bold; margin: 12px 0; }
)css";

std::string Figure(const std::string& svg, const std::string& caption) {
  return absl::StrCat("<figure>", svg, "<figcaption>", EscapeXml(caption),
                      "</figcaption></figure>\n");
}

bool WideRange(double lo, double hi) { return lo > 0 && hi / lo > 20; }

// The unit of a study's budget axis (see ByteUnitFor).
ByteUnit BudgetUnit(const Study& s) {
  double largest = 0;
  for (const auto& [strategy, curve] : s.curves) {
    for (const BudgetPoint& p : curve) largest = std::max(largest, double(p.memory_bytes));
  }
  for (const Speedup& sp : s.speedups) largest = std::max(largest, double(sp.memory_bytes));
  return ByteUnitFor(largest);
}

std::string TokensChart(const Study& s) {
  const ByteUnit unit = BudgetUnit(s);
  XyChart c{.title = "Decode speed by memory budget",
            .x = {.label = absl::StrCat("memory budget (", unit.name, ")")},
            .y = {.label = "decode tokens/s"}};
  double lo = 1e300, hi = 0;
  for (const auto& [strategy, curve] : s.curves) {
    ChartSeries ser{.name = strategy == "in_memory" ? "in_memory (dense)" : strategy,
                    .color = ColorFor(strategy),
                    .dashed = strategy == "in_memory"};
    for (const BudgetPoint& p : curve) {
      ser.points.push_back({p.memory_bytes / unit.bytes, p.run->tokens_per_s});
      lo = std::min(lo, p.run->tokens_per_s), hi = std::max(hi, p.run->tokens_per_s);
    }
    c.series.push_back(std::move(ser));
  }
  if (WideRange(lo, hi)) c.y = {.label = "decode tokens/s (log scale)", .log = true};
  return RenderXyChart(c);
}

std::string SpeedupChart(const Study& s, const std::string& baseline, const std::string& name) {
  const ByteUnit unit = BudgetUnit(s);
  XyChart c{.title = absl::StrCat("Speedup over ", name),
            .x = {.label = absl::StrCat("memory budget (", unit.name, ")")},
            .y = {.label = absl::StrCat("tokens/s relative to ", name, " (x)")}};
  std::map<std::string, ChartSeries> series;
  for (const Speedup& sp : s.speedups) {
    if (sp.baseline != baseline) continue;
    ChartSeries& ser = series[sp.strategy];
    ser.name = sp.strategy;
    ser.color = ColorFor(sp.strategy);
    ser.dashed = sp.strategy == "in_memory";
    ser.points.push_back({sp.memory_bytes / unit.bytes, sp.factor});
  }
  // The baseline itself, at 1x.
  if (auto it = s.curves.find(baseline); it != s.curves.end()) {
    ChartSeries ser{.name = absl::StrCat(baseline, " (1x)"), .color = ColorFor(baseline)};
    for (const BudgetPoint& p : it->second) ser.points.push_back({p.memory_bytes / unit.bytes, 1});
    series[baseline] = ser;
  }
  double lo = 1e300, hi = 0;
  for (auto& [k, ser] : series) {
    for (const ChartPoint& p : ser.points) lo = std::min(lo, p.y), hi = std::max(hi, p.y);
    c.series.push_back(std::move(ser));
  }
  if (WideRange(lo, hi)) c.y.log = true, c.y.label += ", log scale";
  return RenderXyChart(c);
}

// Hit rate by cache size, a line per policy named at its end (coinciding lines
// stay visible); with a single cache size, a bar per policy instead.
std::string PolicyChart(const std::string& strategy,
                        const std::map<std::string, std::vector<const ReportRun*>>& policies) {
  const std::string title = absl::StrCat("Neuron-cache hit rate by policy (", strategy, ")");
  std::set<int64_t> sizes;
  for (const auto& [policy, runs] : policies) {
    for (const ReportRun* r : runs) sizes.insert(r->cache_bytes);
  }
  if (sizes.size() == 1) {
    StackedBarChart bars{.title = title,
                         .y_label = "hit rate (%)",
                         .y_max = 100,
                         .parts = {"hit rate"},
                         .colors = {ColorFor(strategy)}};
    for (const auto& [policy, runs] : policies) {
      bars.categories.push_back(policy);
      bars.values.push_back({100 * runs.front()->hit_rate});
      bars.totals.push_back(absl::StrFormat("%.1f%%", 100 * runs.front()->hit_rate));
    }
    return RenderStackedBars(bars);
  }
  const ByteUnit unit = ByteUnitFor(sizes.empty() ? 0 : static_cast<double>(*sizes.rbegin()));
  XyChart c{.title = title,
            .x = {.label = absl::StrCat("neuron cache (", unit.name, ")")},
            .y = {.label = "hit rate (%)", .max = 100},
            .end_labels = true};
  for (const auto& [policy, runs] : policies) {
    ChartSeries ser{.name = policy == "belady" ? "belady (ceiling)" : policy,
                    .color = ColorFor(policy),
                    .dashed = policy == "belady"};
    for (const ReportRun* r : runs) {
      ser.points.push_back({r->cache_bytes / unit.bytes, 100 * r->hit_rate});
    }
    c.series.push_back(std::move(ser));
  }
  return RenderXyChart(c);
}

// Shares of the mean token's critical path (bars of equal height, so a fast
// strategy's split is as readable as a slow one's), with the token's time on top.
std::string BreakdownChart(const Study& s) {
  StackedBarChart c{
      .title = absl::StrCat("Where a token's time goes at ", FormatMemory(s.chosen_budget)),
      .y_label = "share of token time (%)",
      .y_max = 100};
  static const std::map<std::string, std::string> kColors = {
      {"attention", "#56B4E9"}, {"predictor", "#CC79A7"},         {"ffn_compute", "#009E73"},
      {"io_wait", "#D55E00"},   {"memory_management", "#E69F00"}, {"other", "#999999"}};
  for (const ReportRun* r : s.at_chosen) {
    for (const auto& [part, ms] : r->breakdown_ms) {
      if (std::find(c.parts.begin(), c.parts.end(), part) == c.parts.end()) {
        c.parts.push_back(part);
        c.colors.push_back(kColors.count(part) ? kColors.at(part) : ColorFor(part));
      }
    }
  }
  for (const ReportRun* r : s.at_chosen) {
    double total = 0;
    for (const auto& [part, ms] : r->breakdown_ms) total += ms;
    c.categories.push_back(r->strategy);
    c.totals.push_back(total >= 100 ? absl::StrFormat("%.0f ms", total)
                                    : absl::StrFormat("%.3g ms", total));
    std::vector<double>& row = c.values.emplace_back(c.parts.size(), 0);
    for (const auto& [part, ms] : r->breakdown_ms) {
      row[std::find(c.parts.begin(), c.parts.end(), part) - c.parts.begin()] =
          total > 0 ? 100 * ms / total : 0;
    }
  }
  for (std::string& p : c.parts) std::replace(p.begin(), p.end(), '_', ' ');
  return RenderStackedBars(c);
}

std::string CdfChart(const Study& s) {
  XyChart c{.title = absl::StrCat("Per-token latency at ", FormatMemory(s.chosen_budget)),
            .x = {.label = "token latency (ms)"},
            .y = {.label = "tokens at or below (%)", .max = 100},
            .steps = true};
  double lo = 1e300, hi = 0;
  for (const ReportRun* r : s.at_chosen) {
    std::vector<double> v = r->latency_ms;
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    ChartSeries ser{.name = r->strategy, .color = ColorFor(r->strategy)};
    for (size_t i = 0; i < v.size(); ++i) {
      ser.points.push_back({v[i], 100.0 * static_cast<double>(i + 1) / v.size()});
    }
    lo = std::min(lo, v.front()), hi = std::max(hi, v.back());
    c.series.push_back(std::move(ser));
  }
  if (WideRange(lo, hi)) c.x = {.label = "token latency (ms, log scale)", .log = true};
  return RenderXyChart(c);
}

std::string StudySection(const Study& s) {
  std::string h =
      absl::StrCat("<h2 id=\"", EscapeXml(s.device + "-" + s.model), "\">", EscapeXml(s.model),
                   " on ", EscapeXml(s.device), "</h2>\n", "<p class=\"headline\">",
                   EscapeXml(StudyHeadline(s)), "</p>\n", "<div class=\"charts\">\n");
  absl::StrAppend(&h, Figure(TokensChart(s),
                             "Simulated decode speed of each strategy with its "
                             "default settings; higher is better."));
  if (s.curves.count("llamacpp")) {
    absl::StrAppend(&h,
                    Figure(SpeedupChart(s, "llamacpp", "llama.cpp"),
                           "Each strategy's tokens/s divided by llama.cpp's at the same budget."));
  }
  if (s.curves.count("llmflash")) {
    absl::StrAppend(&h, Figure(SpeedupChart(s, "llmflash", "LLM in a Flash"),
                               "Each strategy's tokens/s divided by LLM in a Flash's at the same "
                               "budget."));
  }
  for (const auto& [strategy, policies] : s.policies) {
    absl::StrAppend(&h, Figure(PolicyChart(strategy, policies),
                               "Cache policies on the same trace; Belady (knows the future) "
                               "bounds what any policy can do. The table below ranks them."));
  }
  if (!s.at_chosen.empty()) {
    absl::StrAppend(&h, Figure(BreakdownChart(s),
                               "The mean token's critical path, split by what "
                               "it waited for; the token's time is on top."));
    absl::StrAppend(&h, Figure(CdfChart(s),
                               "Distribution of per-token latency; further left is "
                               "faster, a long tail means stalls."));
  }
  absl::StrAppend(&h, "</div>\n", TableHtml(BudgetTable(s)));
  if (!s.policy_comparisons.empty()) absl::StrAppend(&h, TableHtml(PolicyTable(s)));
  return h;
}

std::string ReplaySection(const ReportData& d) {
  if (d.replays.empty()) return "";
  XyChart c{.title = "Predicted against measured decode speed",
            .x = {.label = "measured tokens/s"},
            .y = {.label = "predicted tokens/s"},
            .lines = false,
            .diagonal = true};
  std::map<std::string, ChartSeries> by_strategy;
  double lo = 1e300, hi = 0;
  for (const Replay& r : d.replays) {
    ChartSeries& ser = by_strategy[r.measured->strategy];
    ser.name = r.measured->strategy;
    ser.color = ColorFor(ser.name);
    ser.points.push_back({r.measured->tokens_per_s, r.predicted->tokens_per_s,
                          absl::StrFormat("%+.0f%%", 100 * r.error)});
    lo = std::min({lo, r.measured->tokens_per_s, r.predicted->tokens_per_s});
    hi = std::max({hi, r.measured->tokens_per_s, r.predicted->tokens_per_s});
  }
  for (auto& [k, s] : by_strategy) c.series.push_back(std::move(s));
  if (WideRange(lo, hi)) {
    c.x.log = c.y.log = true;
  }
  return absl::StrCat("<h2 id=\"replays\">Predicted against measured</h2>\n<div class=\"charts\">",
                      Figure(RenderXyChart(c),
                             "Each replay on real hardware beside the "
                             "simulator's prediction for the same configuration; "
                             "points on the dashed line are exact."),
                      "</div>\n", TableHtml(ReplayTable(d)));
}

// Published against simulated on log-log axes: y = x and a +-15 % band, one
// series per group of the catalog.
std::string ValidationSection(const ReportData& d) {
  if (d.validation.empty()) return "";
  XyChart c{.title = "Simulated against published (every metric, log-log)",
            .x = {.label = "published value (the entry's unit)", .log = true},
            .y = {.label = "simulated value (the same unit)", .log = true},
            .lines = false,
            .diagonal = true};
  std::map<std::string, ChartSeries> by_group;
  double lo = 1e300, hi = 0;
  for (const ValidationRow& v : d.validation) {
    if (!(v.published > 0 && v.simulated > 0)) continue;  // not drawable on log axes
    ChartSeries& ser = by_group[v.group];
    ser.name = absl::StrCat("group ", v.group);
    ser.points.push_back({v.published, v.simulated});
    lo = std::min({lo, v.published, v.simulated});
    hi = std::max({hi, v.published, v.simulated});
  }
  // One distinct colour per group (Okabe-Ito), in group order.
  static const char* kGroupColors[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                       "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
  for (auto& [k, s] : by_group) {
    s.color = kGroupColors[c.series.size() % (sizeof(kGroupColors) / sizeof(kGroupColors[0]))];
    c.series.push_back(std::move(s));
  }
  if (hi > 0) {
    for (double f : {0.85, 1.15}) {
      c.series.push_back({.name = f < 1 ? "-15 %" : "+15 %",
                          .color = "#999999",
                          .points = {{lo, lo * f}, {hi, hi * f}},
                          .dashed = true,
                          .guide = true});
    }
  }
  return absl::StrCat(
      "<h2 id=\"validation\">Validation against published results</h2>\n<div class=\"charts\">",
      Figure(RenderXyChart(c),
             "Each entry of the validation catalog: the published figure against what the "
             "simulator predicts for the same configuration. On the solid line the two agree; "
             "between the dashed lines they are within 15 %."),
      "</div>\n", TableHtml(ValidationTable(d)));
}

}  // namespace

std::string RenderHtml(const ReportData& d) {
  std::string h = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>sparseflash report</title><style>",
      kCss, "</style></head><body>\n<h1>sparseflash report</h1>\n<p class=\"meta\">",
      EscapeXml(d.db_path), ": ", d.runs.size(), " runs, ", d.studies.size(),
      " device and model pairs, ", d.replays.size(), " replays on real hardware.</p>\n");
  if (!d.studies.empty() || !d.replays.empty()) {
    h += "<p>Contents: ";
    for (const Study& s : d.studies) {
      absl::StrAppend(&h, "<a href=\"#", EscapeXml(s.device + "-" + s.model), "\">",
                      EscapeXml(s.model), " on ", EscapeXml(s.device), "</a> &middot; ");
    }
    if (!d.replays.empty()) h += "<a href=\"#replays\">predicted against measured</a> &middot; ";
    if (!d.validation.empty()) h += "<a href=\"#validation\">validation</a> &middot; ";
    h += "<a href=\"#runs\">every run</a></p>\n";
  }
  for (const Study& s : d.studies) h += StudySection(s);
  h += ReplaySection(d);
  if (const Table measured = MeasuredTable(d); !measured.rows.empty()) {
    absl::StrAppend(&h, "<h2 id=\"measured\">Measured elsewhere</h2>\n", TableHtml(measured));
  }
  h += ValidationSection(d);
  absl::StrAppend(&h, "<h2 id=\"runs\">Every run</h2>\n<details><summary>", d.runs.size(),
                  " runs (open)</summary>\n", TableHtml(RunsTable(d)),
                  "</details>\n</body></html>\n");
  return h;
}

}  // namespace sparseflash
