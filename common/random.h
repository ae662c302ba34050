// A small, fast, portable pseudo-random generator (xoshiro256**, seeded through
// splitmix64). Unlike <random> distributions, its outputs are identical on every
// platform and standard library, so a seed always gives the same trace bytes.
// Not thread-safe: one instance per thread or per stream.
#pragma once

#include <cstdint>

namespace sparseflash {

class Random {
 public:
  explicit Random(uint64_t seed);

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 bits of precision.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0.
  uint32_t Below(uint32_t n) {
    return static_cast<uint32_t>((static_cast<__uint128_t>(Next() >> 32) * n) >> 32);
  }
  bool Bernoulli(double p) { return Uniform() < p; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  uint64_t s_[4];
};

// Mixes several values into one seed (for per-layer / per-expert streams).
uint64_t MixSeed(uint64_t a, uint64_t b);

}  // namespace sparseflash
