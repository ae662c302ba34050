#include "traces/skew.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace sparseflash {
namespace {

std::vector<double> FromCdf(int n, double p, const std::function<double(double)>& cdf) {
  std::vector<double> q(n);
  double prev = 0;
  for (int r = 0; r < n; ++r) {
    double next = cdf(static_cast<double>(r + 1) / n);
    q[r] = n * p * (next - prev);
    prev = next;
  }
  CapPreservingMean(&q, 1.0);
  return q;
}

}  // namespace

std::vector<double> PropensitiesFromAnchors(int neurons, double active_ratio,
                                            const std::vector<SkewAnchor>& anchors) {
  std::vector<SkewAnchor> pts{{0, 0}};
  for (const SkewAnchor& a : anchors) pts.push_back(a);
  pts.push_back({1, 1});
  std::sort(pts.begin(), pts.end(), [](const SkewAnchor& a, const SkewAnchor& b) {
    return a.neuron_fraction < b.neuron_fraction;
  });
  auto cdf = [&pts](double x) {
    for (size_t i = 1; i < pts.size(); ++i) {
      if (x <= pts[i].neuron_fraction) {
        double span = pts[i].neuron_fraction - pts[i - 1].neuron_fraction;
        double t = span > 0 ? (x - pts[i - 1].neuron_fraction) / span : 1;
        return pts[i - 1].activation_share +
               t * (pts[i].activation_share - pts[i - 1].activation_share);
      }
    }
    return 1.0;
  };
  return FromCdf(neurons, active_ratio, cdf);
}

std::vector<double> PropensitiesPowerLaw(int neurons, double active_ratio,
                                         double top80_share) {
  double b = std::log(0.8) / std::log(std::clamp(top80_share, 1e-6, 0.999999));
  return FromCdf(neurons, active_ratio, [b](double x) { return std::pow(x, b); });
}

void CapPreservingMean(std::vector<double>* values, double cap) {
  std::vector<double>& v = *values;
  const double total = std::accumulate(v.begin(), v.end(), 0.0);
  if (total >= cap * v.size()) {
    std::fill(v.begin(), v.end(), cap);
    return;
  }
  for (int iter = 0; iter < 64; ++iter) {
    double capped = 0, free_sum = 0;
    for (double x : v) (x >= cap ? capped : free_sum) += (x >= cap ? cap : x);
    double excess = total - capped - free_sum;
    if (excess <= total * 1e-12 || free_sum <= 0) break;
    double scale = (free_sum + excess) / free_sum;
    for (double& x : v) x = x >= cap ? cap : std::min(cap, x * scale);
  }
  for (double& x : v) x = std::min(x, cap);
}

double ShareOfNeuronsCarrying(std::vector<double> counts, double share) {
  std::sort(counts.begin(), counts.end(), std::greater<>());
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  if (total <= 0) return 0;
  double sum = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    sum += counts[i];
    if (sum >= share * total) {
      // Interpolate inside the neuron that crosses the threshold.
      double over = (sum - share * total) / counts[i];
      return (static_cast<double>(i + 1) - over) / counts.size();
    }
  }
  return 1;
}

}  // namespace sparseflash
