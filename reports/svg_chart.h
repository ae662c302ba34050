// Small SVG charts for the report: lines (also CDFs), scatter plots with the
// y = x line, and stacked bars. Every chart has a title, labelled axes with
// units, a legend and fonts readable at normal zoom. Each renders to one
// standalone <svg> element: no scripts, no external resources.
#pragma once

#include <string>
#include <vector>

namespace sparseflash {

struct ChartPoint {
  double x = 0, y = 0;
  std::string label;  // drawn beside the point when not empty
};

struct ChartSeries {
  std::string name, color;
  std::vector<ChartPoint> points;  // drawn in order
  bool dashed = false;
  bool guide = false;  // a thin line without markers, even in a scatter plot (e.g. a band)
};

struct ChartAxis {
  std::string label;  // with the unit, e.g. "memory budget (GB)"
  bool log = false;
  bool from_zero = true;  // include 0 in a linear axis
  double max = 0;         // a fixed top (e.g. 100 for percentages); 0 = from the data
};

struct XyChart {
  std::string title;
  ChartAxis x, y;
  std::vector<ChartSeries> series;
  bool lines = true;      // false: markers only (scatter)
  bool diagonal = false;  // draw y = x
  bool steps = false;     // draw as a step function (CDF)
  // Instead of a legend, name each series beside its last point (names pushed
  // apart so none covers another, with a leader line), and draw coinciding
  // markers as nested rings, so series that lie on top of each other stay visible.
  bool end_labels = false;
};

struct StackedBarChart {
  std::string title, y_label;
  double y_max = 0;                         // fixed top of the axis; 0 = the tallest bar
  std::vector<std::string> categories;      // one bar each
  std::vector<std::string> parts, colors;   // stacked from the bottom
  std::vector<std::vector<double>> values;  // [category][part]
  std::vector<std::string> totals;          // label above each bar; default: the sum
};

std::string RenderXyChart(const XyChart& chart);
std::string RenderStackedBars(const StackedBarChart& chart);

// A stable colour for a strategy or policy name (a palette readable by people
// with common colour-vision deficiencies).
std::string ColorFor(const std::string& name);

// Escapes text for HTML and SVG.
std::string EscapeXml(const std::string& text);

}  // namespace sparseflash
