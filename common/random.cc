#include "common/random.h"

namespace sparseflash {
namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Random::Random(uint64_t seed) {
  for (uint64_t& s : s_) s = SplitMix64(&seed);
}

uint64_t MixSeed(uint64_t a, uint64_t b) {
  uint64_t state = a ^ (b * 0xd1b54a32d192ed03ULL);
  return SplitMix64(&state);
}

}  // namespace sparseflash
