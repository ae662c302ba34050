// Draws many independent Bernoulli events with small, fixed, per-item
// probabilities in time proportional to the events, not the items: items are
// grouped into classes by probability (bounds 1, 1/2, 1/4, ...); a class with
// a bound of 1/8 or more draws one uniform per item, a smaller one jumps
// between candidates by geometric skips. Every item i has a uniform u_i; the
// sampler visits every item of the first kind and the items of the second
// whose u_i falls below their class bound, and gives u_i and p_i, so
// `u_i < p_i` is item i's event with probability p_i, and a caller may use u_i
// itself (for example as a shared draw). An item not visited has u_i uniform
// on [ClassBound(p_i), 1). An item keeps its p_i beside its id, so a visit
// reads one sequential array, not the caller's per-item data.
// Not thread-safe; the draws come from the caller's Random.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/random.h"

namespace sparseflash {

// Uniform in (0, 1], so that its logarithm is finite.
inline double OpenUniform(Random& rng) {
  return static_cast<double>((rng.Next() >> 11) + 1) * 0x1.0p-53;
}

class SparseBernoulli {
 public:
  SparseBernoulli() = default;
  // Item ids are indices into `p`; items with p <= 0 are never visited.
  explicit SparseBernoulli(const std::vector<float>& p);

  // Calls visit(id, u, p) for each candidate (p exactly as given), class by
  // class; within a class in increasing id order.
  template <typename Visit>
  void ForEachCandidate(Random& rng, Visit&& visit) const {
    ForEachCandidate(rng, visit, [](uint32_t, int) {});
  }
  // Also calls ahead(id, distance) before visiting, as a hint to fetch an
  // item's data: for a scanned class, on the items 8 (distance 2) and 4
  // (distance 1) places ahead; for a skipped one, on each candidate once found.
  template <typename Visit, typename Ahead>
  void ForEachCandidate(Random& rng, Visit&& visit, Ahead&& ahead) const;
  // As ForEachCandidate, with the same candidates and draws, for a visit that
  // draws nothing from `rng`: a skipped class's candidates are found a batch at
  // a time and their items fetched together, so visits do not wait on memory
  // one after another.
  template <typename Visit>
  void ForEachCandidatePrefetched(Random& rng, Visit&& visit) const;

  // The bound below which the uniform of an item of probability `p` makes it
  // a candidate: 1 for the items visited every time, 0 for items never visited
  // (p <= 0). Computed, not stored: a stream keeps several samplers per neuron.
  static float ClassBound(float p);

 private:
  struct Item {
    uint32_t id;
    float p;
  };
  struct Class {
    float bound = 0;
    double log_miss = 0;  // log(1 - bound), for the geometric skips
    std::vector<Item> items;
  };
  static constexpr float kScanBound = 0.125f;  // at or above: one draw per item
  static constexpr int kBatch = 16;            // candidates fetched together

  // Item index of the class's next candidate after `k`: a geometric skip.
  static int64_t NextCandidate(const Class& c, int64_t k, Random& rng) {
    return k + 1 + static_cast<int64_t>(std::log(OpenUniform(rng)) / c.log_miss);
  }
  static float ScanUniform(Random& rng) {
    return static_cast<float>(rng.Next() >> 40) * 0x1.0p-24f;
  }

  std::vector<Class> classes_;
};

template <typename Visit, typename Ahead>
void SparseBernoulli::ForEachCandidate(Random& rng, Visit&& visit, Ahead&& ahead) const {
  for (const Class& c : classes_) {
    const int64_t n = static_cast<int64_t>(c.items.size());
    if (c.bound >= kScanBound) {
      for (int64_t k = 0; k < n; ++k) {
        if (k + 8 < n) ahead(c.items[k + 8].id, 2);
        if (k + 4 < n) ahead(c.items[k + 4].id, 1);
        visit(c.items[k].id, ScanUniform(rng), c.items[k].p);
      }
      continue;
    }
    for (int64_t k = NextCandidate(c, -1, rng); k < n; k = NextCandidate(c, k, rng)) {
      const Item& item = c.items[k];
      ahead(item.id, 0);
      visit(item.id, static_cast<float>(rng.Uniform()) * c.bound, item.p);
    }
  }
}

template <typename Visit>
void SparseBernoulli::ForEachCandidatePrefetched(Random& rng, Visit&& visit) const {
  for (const Class& c : classes_) {
    if (c.bound >= kScanBound) {
      for (const Item& item : c.items) visit(item.id, ScanUniform(rng), item.p);
      continue;
    }
    const int64_t n = static_cast<int64_t>(c.items.size());
    const Item* batch[kBatch];
    float u[kBatch];
    for (int64_t k = NextCandidate(c, -1, rng); k < n;) {
      int count = 0;
      for (; count < kBatch && k < n; k = NextCandidate(c, k, rng)) {
        batch[count] = &c.items[k];
        __builtin_prefetch(batch[count]);
        u[count++] = static_cast<float>(rng.Uniform()) * c.bound;
      }
      for (int b = 0; b < count; ++b) visit(batch[b]->id, u[b], batch[b]->p);
    }
  }
}

}  // namespace sparseflash
