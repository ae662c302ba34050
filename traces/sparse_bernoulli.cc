#include "traces/sparse_bernoulli.h"

#include <algorithm>
#include <cmath>

namespace sparseflash {
namespace {

// Classes cover (2^-(k+1), 2^-k] for k < kClasses - 1; the last takes the rest.
constexpr int kClasses = 32;

int ClassOf(float p) {
  int exponent = 0;
  const float mantissa = std::frexp(p, &exponent);  // p = mantissa * 2^exponent
  const int k = mantissa == 0.5f ? 1 - exponent : -exponent;
  return std::min(k, kClasses - 1);
}

}  // namespace

float SparseBernoulli::ClassBound(float p) {
  if (!(p > 0)) return 0.f;
  const float bound = std::ldexp(1.0f, -ClassOf(p));
  return bound >= kScanBound ? 1.f : bound;
}

SparseBernoulli::SparseBernoulli(const std::vector<float>& p) {
  std::vector<Class> by_class(kClasses);
  for (int k = 0; k < kClasses; ++k) {
    by_class[k].bound = std::ldexp(1.0f, -k);
    by_class[k].log_miss = std::log1p(-static_cast<double>(by_class[k].bound));
  }
  for (uint32_t i = 0; i < p.size(); ++i) {
    if (!(p[i] > 0)) continue;
    by_class[ClassOf(p[i])].items.push_back({i, p[i]});
  }
  for (Class& c : by_class) {
    if (!c.items.empty()) classes_.push_back(std::move(c));
  }
}

}  // namespace sparseflash
