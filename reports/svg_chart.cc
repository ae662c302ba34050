#include "reports/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sparseflash {
namespace {

constexpr double kWidth = 680, kHeight = 380;
constexpr double kLeft = 72, kRight = 190, kTop = 44, kBottom = 56;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

struct Range {
  double lo = 0, hi = 1;
};

// 1, 2 or 5 times a power of ten, near `raw`.
double NiceStep(double raw) {
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

std::string Number(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6) return absl::StrFormat("%.0fM", v / 1e6);
  if (a >= 1e4) return absl::StrFormat("%.0fk", v / 1e3);
  if (a < 1e-3) return absl::StrFormat("%.0e", v);
  if (a >= 100) return absl::StrFormat("%.0f", v);
  if (a >= 10) return absl::StrFormat("%.4g", v);
  return absl::StrFormat("%.3g", v);
}

// An axis scale: data range to pixels, and its ticks.
class Scale {
 public:
  Scale(const ChartAxis& axis, double lo, double hi, bool vertical)
      : log_(axis.log), vertical_(vertical) {
    if (log_) {
      lo = std::max(lo, 1e-9);
      hi = std::max(hi, lo * 1.0001);
      lo_ = std::pow(10.0, std::floor(std::log10(lo)));
      hi_ = std::pow(10.0, std::ceil(std::log10(hi)));
      // 1-2-5 ticks over up to three decades; over more, powers of ten only (labels fit).
      const bool wide = hi_ / lo_ > 1.001e3;
      for (double d = lo_; d <= hi_ * 1.0001; d *= 10) {
        for (double m : wide ? std::vector<double>{1.0} : std::vector<double>{1.0, 2.0, 5.0}) {
          if (d * m >= lo_ && d * m <= hi_ * 1.0001) ticks_.push_back(d * m);
        }
      }
      return;
    }
    if (axis.from_zero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    if (hi - lo < 1e-12) hi = lo + 1;
    if (axis.max > 0) hi = axis.max;
    const double step = NiceStep((hi - lo) / 5);
    if (axis.max <= 0) hi += (hi - lo) * 0.03;  // keep points off the frame
    if (!axis.from_zero || lo < 0) lo -= (hi - lo) * 0.03;
    lo_ = std::floor(lo / step) * step;
    hi_ = std::ceil(hi / step - 1e-9) * step;
    for (double t = lo_; t <= hi_ + step * 1e-6; t += step) ticks_.push_back(t);
  }

  double operator()(double v) const {
    double f = log_ ? (std::log10(std::max(v, lo_)) - std::log10(lo_)) /
                          (std::log10(hi_) - std::log10(lo_))
                    : (v - lo_) / (hi_ - lo_);
    f = std::clamp(f, -0.02, 1.02);
    return vertical_ ? kTop + kPlotH * (1 - f) : kLeft + kPlotW * f;
  }
  const std::vector<double>& ticks() const { return ticks_; }
  double lo() const { return lo_; }
  double hi() const { return hi_; }

 private:
  bool log_;
  bool vertical_;
  double lo_ = 0, hi_ = 1;
  std::vector<double> ticks_;
};

std::string Header(const std::string& title) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
      "height=\"%.0f\" role=\"img\" aria-label=\"%s\" font-family=\"Helvetica, Arial, "
      "sans-serif\" font-size=\"13\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
      "<text x=\"%.0f\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
      kWidth, kHeight, kWidth, kHeight, EscapeXml(title), kLeft, EscapeXml(title));
}

std::string XAxis(const Scale& x, const std::string& label) {
  std::string s =
      absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                      kLeft, kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH);
  for (double t : x.ticks()) {
    absl::StrAppendFormat(&s,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                          x(t), kTop, x(t), kTop + kPlotH, x(t), kTop + kPlotH + 18, Number(t));
  }
  absl::StrAppendFormat(&s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                        kLeft + kPlotW / 2, kHeight - 14, EscapeXml(label));
  return s;
}

std::string YAxis(const Scale& y, const std::string& label) {
  std::string s =
      absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                      kLeft, kTop, kLeft, kTop + kPlotH);
  for (double t : y.ticks()) {
    absl::StrAppendFormat(&s,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          kLeft, y(t), kLeft + kPlotW, y(t), kLeft - 6, y(t) + 4, Number(t));
  }
  absl::StrAppendFormat(&s,
                        "<text transform=\"translate(18 %.1f) rotate(-90)\" "
                        "text-anchor=\"middle\">%s</text>\n",
                        kTop + kPlotH / 2, EscapeXml(label));
  return s;
}

std::string Legend(const std::vector<std::pair<std::string, std::string>>& entries, bool bars) {
  std::string s;
  double y = kTop + 8;
  for (const auto& [name, color] : entries) {
    const double x = kLeft + kPlotW + 16;
    if (bars) {
      absl::StrAppendFormat(&s,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\"/>",
                            x, y - 10, color);
    } else {
      absl::StrAppendFormat(&s,
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                            "stroke-width=\"3\"/>",
                            x, y - 4, x + 16, y - 4, color);
    }
    absl::StrAppendFormat(&s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n", x + 22, y,
                          EscapeXml(name));
    y += 20;
  }
  return s;
}

// A series' name beside its last point.
struct EndLabel {
  std::string name, color;
  double x, y;  // the last point
};

// Names in the right margin at their series' last y, pushed apart to at least
// 15 px, each joined to its point by a thin line.
std::string EndLabels(std::vector<EndLabel> labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [](const EndLabel& a, const EndLabel& b) { return a.y < b.y; });
  std::vector<double> at(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    at[i] = std::max(labels[i].y, i == 0 ? kTop : at[i - 1] + 15);
  }
  const double bottom = kTop + kPlotH + 30;  // room below the plot if needed
  if (!at.empty() && at.back() > bottom) {
    const double shift = at.back() - bottom;
    for (double& a : at) a -= shift;
  }
  std::string s;
  const double tx = kLeft + kPlotW + 14;
  for (size_t i = 0; i < labels.size(); ++i) {
    absl::StrAppendFormat(&s,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"%s\" stroke-width=\"1\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"%s\">%s</text>\n",
                          labels[i].x + 6, labels[i].y, tx - 2, at[i] - 4, labels[i].color, tx,
                          at[i], labels[i].color, EscapeXml(labels[i].name));
  }
  return s;
}

std::string NoData(const std::string& title) {
  return Header(title) + absl::StrFormat(
                             "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#666\">no "
                             "runs for this chart</text></svg>\n",
                             kWidth / 2, kHeight / 2);
}

}  // namespace

std::string EscapeXml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ColorFor(const std::string& name) {
  // Okabe-Ito, then a few more; fixed names first so every chart agrees.
  static const std::vector<std::pair<std::string, std::string>> kFixed = {
      {"powerinfer2", "#0072B2"}, {"llmflash", "#E69F00"}, {"llamacpp", "#D55E00"},
      {"in_memory", "#009E73"},   {"lru", "#0072B2"},      {"fifo", "#E69F00"},
      {"lfu", "#CC79A7"},         {"sieve", "#56B4E9"},    {"s3fifo", "#009E73"},
      {"window", "#D55E00"},      {"static", "#999999"},   {"belady", "#000000"},
  };
  for (const auto& [n, c] : kFixed) {
    if (name == n) return c;
  }
  static const char* kOthers[] = {"#332288", "#117733", "#882255", "#44AA99", "#AA4499", "#DDCC77"};
  size_t h = 0;
  for (char c : name) h = h * 31 + static_cast<unsigned char>(c);
  return kOthers[h % (sizeof(kOthers) / sizeof(kOthers[0]))];
}

std::string RenderXyChart(const XyChart& c) {
  double xlo = std::numeric_limits<double>::max(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const ChartSeries& s : c.series) {
    for (const ChartPoint& p : s.points) {
      xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x);
      ylo = std::min(ylo, p.y), yhi = std::max(yhi, p.y);
    }
  }
  if (xlo > xhi) return NoData(c.title);
  if (c.diagonal) xlo = ylo = std::min(xlo, ylo), xhi = yhi = std::max(xhi, yhi);
  Scale x(c.x, xlo, xhi, false), y(c.y, ylo, yhi, true);
  std::string s = Header(c.title) + XAxis(x, c.x.label) + YAxis(y, c.y.label);
  if (c.diagonal) {
    const double lo = std::max(x.lo(), y.lo()), hi = std::min(x.hi(), y.hi());
    absl::StrAppendFormat(&s,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
                          "stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">"
                          "y = x</text>\n",
                          x(lo), y(lo), x(hi), y(hi), x(hi) - 30, y(hi) + 16);
  }
  std::vector<std::pair<std::string, std::string>> legend;
  std::vector<EndLabel> ends;
  int index = 0;
  for (const ChartSeries& ser : c.series) {
    if (ser.points.empty()) continue;
    legend.emplace_back(ser.name, ser.color);
    const ChartPoint& last = ser.points.back();
    ends.push_back({ser.name, ser.color, x(last.x), y(last.y)});
    // Later series get smaller markers: coinciding points show as nested rings.
    const double radius = c.end_labels ? std::max(2.0, 6.0 - 1.2 * index) : (c.lines ? 3.5 : 5);
    ++index;
    if ((c.lines || ser.guide) && ser.points.size() > 1) {
      std::string path;
      for (size_t i = 0; i < ser.points.size(); ++i) {
        const ChartPoint& p = ser.points[i];
        if (i > 0 && c.steps)
          absl::StrAppendFormat(&path, " L%.1f,%.1f", x(p.x), y(ser.points[i - 1].y));
        absl::StrAppendFormat(&path, "%s%.1f,%.1f", i == 0 ? "M" : " L", x(p.x), y(p.y));
      }
      absl::StrAppendFormat(
          &s, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n", path,
          ser.color, ser.guide ? "1.2" : "2.5", ser.dashed ? " stroke-dasharray=\"7 4\"" : "");
    }
    if (!c.steps && !ser.guide) {
      for (const ChartPoint& p : ser.points) {
        absl::StrAppendFormat(&s,
                              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" "
                              "stroke=\"#fff\" stroke-width=\"1\"/>",
                              x(p.x), y(p.y), radius, ser.color);
        if (!p.label.empty()) {
          absl::StrAppendFormat(&s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>",
                                x(p.x) + 7, y(p.y) - 6, EscapeXml(p.label));
        }
      }
      s += "\n";
    }
  }
  return s + (c.end_labels ? EndLabels(ends) : Legend(legend, false)) + "</svg>\n";
}

std::string RenderStackedBars(const StackedBarChart& c) {
  double top = 0;
  for (const auto& row : c.values) {
    double sum = 0;
    for (double v : row) sum += std::max(0.0, v);
    top = std::max(top, sum);
  }
  if (c.categories.empty() || top <= 0) return NoData(c.title);
  Scale y(ChartAxis{.label = c.y_label, .max = c.y_max}, 0, top, true);
  std::string s = Header(c.title) + YAxis(y, c.y_label);
  absl::StrAppendFormat(&s,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                        kLeft, kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH);
  const double slot = kPlotW / static_cast<double>(c.categories.size());
  const double bar = std::min(70.0, slot * 0.6);
  for (size_t i = 0; i < c.categories.size(); ++i) {
    const double cx = kLeft + slot * (static_cast<double>(i) + 0.5);
    double base = 0;
    for (size_t p = 0; p < c.parts.size() && p < c.values[i].size(); ++p) {
      const double v = std::max(0.0, c.values[i][p]);
      if (v <= 0) continue;
      absl::StrAppendFormat(&s,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "fill=\"%s\"><title>%s: %s %s</title></rect>",
                            cx - bar / 2, y(base + v), bar, y(base) - y(base + v), c.colors[p],
                            EscapeXml(c.parts[p]), Number(v), EscapeXml(c.y_label));
      base += v;
    }
    absl::StrAppendFormat(&s,
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%s"
                          "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                          cx, y(base) - 5,
                          i < c.totals.size() ? EscapeXml(c.totals[i]) : Number(base), cx,
                          kTop + kPlotH + 18, EscapeXml(c.categories[i]));
  }
  std::vector<std::pair<std::string, std::string>> legend;
  for (size_t p = c.parts.size(); p-- > 0;) legend.emplace_back(c.parts[p], c.colors[p]);
  return s + Legend(legend, true) + "</svg>\n";
}

}  // namespace sparseflash
