#include "traces/expert_router.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sparseflash {

ExpertRouter::ExpertRouter(int experts, int top_k, double skew, double persistence,
                           uint64_t identity, uint64_t seed)
    : top_k_(top_k), persistence_(persistence), rng_(seed), weight_(experts) {
  std::vector<uint32_t> order(experts);
  std::iota(order.begin(), order.end(), 0);
  Random popularity(identity);
  for (int i = experts - 1; i > 0; --i) std::swap(order[i], order[popularity.Below(i + 1)]);
  for (int r = 0; r < experts; ++r) weight_[order[r]] = 1.0 / std::pow(r + 1.0, skew);
}

double ExpertRouter::Share(uint32_t e) const {
  double total = 0;
  for (double w : weight_) total += w;
  return std::min(1.0, top_k_ * weight_[e] / total);
}

uint32_t ExpertRouter::DrawByPopularity(const std::vector<uint32_t>& exclude) {
  double total = 0;
  for (uint32_t e = 0; e < weight_.size(); ++e) {
    if (std::find(exclude.begin(), exclude.end(), e) == exclude.end()) total += weight_[e];
  }
  double u = rng_.Uniform() * total;
  uint32_t last = 0;
  for (uint32_t e = 0; e < weight_.size(); ++e) {
    if (std::find(exclude.begin(), exclude.end(), e) != exclude.end()) continue;
    last = e;
    if ((u -= weight_[e]) < 0) return e;
  }
  return last;
}

const std::vector<uint32_t>& ExpertRouter::Next() {
  chosen_.clear();
  for (uint32_t e : previous_) {
    if (static_cast<int>(chosen_.size()) < top_k_ && rng_.Uniform() < persistence_) {
      chosen_.push_back(e);
    }
  }
  while (static_cast<int>(chosen_.size()) < top_k_) chosen_.push_back(DrawByPopularity(chosen_));
  std::sort(chosen_.begin(), chosen_.end());
  previous_ = chosen_;
  return chosen_;
}

}  // namespace sparseflash
