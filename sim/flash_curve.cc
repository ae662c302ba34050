#include "sim/flash_curve.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sparseflash {
namespace {

double Lerp(double x0, double y0, double x1, double y1, double x) {
  return x1 == x0 ? y0 : y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

double LogDistance(int64_t a, int64_t b) {
  // Range 0 means "large"; treat it as 64 GB.
  auto v = [](int64_t r) { return std::log2(static_cast<double>(r > 0 ? r : int64_t{64} << 30)); };
  return std::fabs(v(a) - v(b));
}

}  // namespace

FlashCurve::FlashCurve(const DeviceProfile& profile)
    : points_(profile.flash.points), cores_(profile.cores) {}

std::vector<FlashPoint> FlashCurve::Select(const FlashRequestShape& shape) const {
  std::vector<FlashPoint> reader;
  for (const FlashPoint& p : points_) {
    if (p.page_cache == shape.page_cache) reader.push_back(p);
  }
  if (reader.empty()) reader = points_;
  std::vector<FlashPoint> same;
  for (const FlashPoint& p : reader) {
    if (p.sequential == shape.sequential) same.push_back(p);
  }
  if (same.empty()) same = reader;
  if (shape.sequential) return same;
  // Nearest measured address range (in log scale).
  double best = std::numeric_limits<double>::max();
  for (const FlashPoint& p : same)
    best = std::min(best, LogDistance(p.range_bytes, shape.range_bytes));
  std::vector<FlashPoint> out;
  for (const FlashPoint& p : same) {
    if (LogDistance(p.range_bytes, shape.range_bytes) == best) out.push_back(p);
  }
  // Prefer points measured with the issuing core class (or unstated).
  std::vector<FlashPoint> by_core;
  for (const FlashPoint& p : out) {
    if (p.core_class.empty() || p.core_class == shape.core_class) by_core.push_back(p);
  }
  return by_core.empty() ? out : by_core;
}

double FlashCurve::SizeCurve(const std::vector<FlashPoint>& pts, int64_t bytes) const {
  std::vector<std::pair<int64_t, double>> curve;
  for (const FlashPoint& p : pts) curve.push_back({p.request_bytes, p.throughput_bytes_per_s});
  std::sort(curve.begin(), curve.end());
  if (bytes <= curve.front().first) {  // below the smallest size: same IOPS
    return curve.front().second * static_cast<double>(bytes) / curve.front().first;
  }
  for (size_t i = 1; i < curve.size(); ++i) {
    if (bytes <= curve[i].first) {
      return Lerp(curve[i - 1].first, curve[i - 1].second, curve[i].first, curve[i].second, bytes);
    }
  }
  return curve.back().second;
}

double FlashCurve::Throughput(const FlashRequestShape& shape) const {
  const double tp = MeasuredThroughput(shape);
  if (!shape.sequential) return tp;
  // Sequential reads are never slower than random reads of the same size and
  // depth: below the smallest sequential point the random points bound them.
  FlashRequestShape random = shape;
  random.sequential = false;
  const bool any_random = std::any_of(points_.begin(), points_.end(),
                                      [](const FlashPoint& p) { return !p.sequential; });
  return any_random ? std::max(tp, MeasuredThroughput(random)) : tp;
}

double FlashCurve::MeasuredThroughput(const FlashRequestShape& shape) const {
  std::vector<FlashPoint> pts = Select(shape);
  // Queue depth: interpolate between the measured depths that bracket the request.
  std::vector<int> depths;
  for (const FlashPoint& p : pts) {
    if (p.queue_depth > 0) depths.push_back(p.queue_depth);
  }
  double tp;
  if (depths.empty()) {
    tp = SizeCurve(pts, shape.request_bytes);
  } else {
    std::sort(depths.begin(), depths.end());
    depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
    auto at_depth = [&](int d) {
      std::vector<FlashPoint> sub;
      for (const FlashPoint& p : pts) {
        if (p.queue_depth == d) sub.push_back(p);
      }
      return SizeCurve(sub, shape.request_bytes);
    };
    const int qd = std::max(1, shape.queue_depth);
    if (qd <= depths.front()) {
      tp = at_depth(depths.front()) * qd / depths.front();  // fewer in flight: proportionally less
    } else if (qd >= depths.back()) {
      tp = at_depth(depths.back());
    } else {
      auto hi = std::upper_bound(depths.begin(), depths.end(), qd);
      int d1 = *hi, d0 = *std::prev(hi);
      tp = Lerp(d0, at_depth(d0), d1, at_depth(d1), qd);
    }
  }
  // Unclassed points stand for the first (fastest) class; scale for the issuer.
  bool classed = std::any_of(pts.begin(), pts.end(),
                             [&](const FlashPoint& p) { return !p.core_class.empty(); });
  if (!classed && !cores_.empty() && !shape.core_class.empty()) {
    for (const CoreClassSpec& c : cores_) {
      if (c.name == shape.core_class) tp *= c.io_issue_factor / cores_.front().io_issue_factor;
    }
  }
  return tp;
}

}  // namespace sparseflash
