// Top-k expert routing of one MoE layer across tokens: experts have a Zipf-like
// popularity (a per-layer random order, exponent `skew`; 0 = uniform, as the
// load-balancing loss aims for), and each of the previous token's experts is kept
// with probability `persistence`. Not thread-safe; deterministic for a seed.
#pragma once

#include <cstdint>
#include <vector>

#include "common/random.h"

namespace sparseflash {

class ExpertRouter {
 public:
  // `identity` fixes which experts are popular; `seed` drives the routing.
  ExpertRouter(int experts, int top_k, double skew, double persistence, uint64_t identity,
               uint64_t seed);

  // The experts chosen for the next token, sorted ascending.
  const std::vector<uint32_t>& Next();
  // Long-run share of tokens that choose expert `e` (popularity only).
  double Share(uint32_t e) const;

 private:
  uint32_t DrawByPopularity(const std::vector<uint32_t>& exclude);

  int top_k_;
  double persistence_;
  Random rng_;
  std::vector<double> weight_;
  std::vector<uint32_t> chosen_;
  std::vector<uint32_t> previous_;
};

}  // namespace sparseflash
