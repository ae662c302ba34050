// Draws many independent Bernoulli events with small, fixed, per-item
// probabilities in time proportional to the events, not the items: items are
// grouped into classes by probability (bounds 1, 1/2, 1/4, ...); a class with
// a bound of 1/8 or more draws one uniform per item, a smaller one jumps
// between candidates by geometric skips. Every item i has a uniform u_i; the
// sampler visits every item of the first kind and the items of the second
// whose u_i falls below their class bound, and gives u_i, so `u_i < p_i` is
// item i's event with probability p_i, and a caller may use u_i itself (for
// example as a shared draw). An item not visited has u_i uniform on
// [ClassBound(p_i), 1).
// Not thread-safe; the draws come from the caller's Random.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/random.h"

namespace sparseflash {

class SparseBernoulli {
 public:
  SparseBernoulli() = default;
  // Item ids are indices into `p`; items with p <= 0 are never visited.
  explicit SparseBernoulli(const std::vector<float>& p);

  // Calls visit(id, u) for each candidate, class by class; within a class in
  // increasing id order.
  template <typename Visit>
  void ForEachCandidate(Random& rng, Visit&& visit) const;

  // The bound below which the uniform of an item of probability `p` makes it
  // a candidate: 1 for the items visited every time, 0 for items never visited
  // (p <= 0). Computed, not stored: a stream keeps several samplers per neuron.
  static float ClassBound(float p);

 private:
  struct Class {
    float bound = 0;
    double log_miss = 0;  // log(1 - bound), for the geometric skips
    std::vector<uint32_t> ids;
  };
  static constexpr float kScanBound = 0.125f;  // at or above: one draw per item

  std::vector<Class> classes_;
};

// Uniform in (0, 1], so that its logarithm is finite.
inline double OpenUniform(Random& rng) {
  return static_cast<double>((rng.Next() >> 11) + 1) * 0x1.0p-53;
}

template <typename Visit>
void SparseBernoulli::ForEachCandidate(Random& rng, Visit&& visit) const {
  for (const Class& c : classes_) {
    const int64_t n = static_cast<int64_t>(c.ids.size());
    if (c.bound >= kScanBound) {
      for (int64_t k = 0; k < n; ++k)
        visit(c.ids[k], static_cast<float>(rng.Next() >> 40) * 0x1.0p-24f);
      continue;
    }
    // Items before the next candidate: geometric with success probability bound.
    for (int64_t k = -1;;) {
      k += 1 + static_cast<int64_t>(std::log(OpenUniform(rng)) / c.log_miss);
      if (k >= n) break;
      visit(c.ids[k], static_cast<float>(rng.Uniform()) * c.bound);
    }
  }
}

}  // namespace sparseflash
