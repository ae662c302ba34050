#include "engine/real/sparse_ffn_kernel.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/random.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"

namespace sparseflash {
namespace {

struct Case {
  int bits, group;
  bool gated;
};

class KernelMatchesScalar : public ::testing::TestWithParam<Case> {};

TEST_P(KernelMatchesScalar, OnRandomBundles) {
  const Case c = GetParam();
  FfnKernelShape s{.d_model = 256, .group = c.group, .bits = c.bits, .gated = c.gated};
  Random rng(c.bits * 100 + c.group);
  const int count = 37;
  std::vector<uint8_t> data(s.bundle_bytes() * count);
  std::vector<const uint8_t*> bundles;
  for (int k = 0; k < count; ++k) {
    uint8_t* b = data.data() + k * s.bundle_bytes();
    for (int m = 0; m < (s.gated ? 3 : 2); ++m) {
      uint8_t* row = b + m * s.row_bytes();
      const int64_t weight_bytes = int64_t{s.d_model} * s.bits / 8;
      for (int64_t i = 0; i < weight_bytes; ++i) row[i] = static_cast<uint8_t>(rng.Next());
      uint16_t* scales = reinterpret_cast<uint16_t*>(row + weight_bytes);
      for (int g = 0; g < s.d_model / s.group; ++g) {
        scales[g] = FloatToHalf(0.001f + 0.01f * static_cast<float>(rng.Uniform()));
      }
    }
    bundles.push_back(b);
  }
  std::vector<float> x(s.d_model), scalar(s.d_model, 0.5f);
  for (float& v : x) v = static_cast<float>(rng.Uniform() * 2 - 1);
  SparseFfnScalar(s, bundles.data(), count, x.data(), scalar.data());
  double max_abs = 0;
  for (float v : scalar) max_abs = std::max(max_abs, std::fabs(double(v)));
  ASSERT_GT(max_abs, 0.5);  // some neurons were active
  // Every SIMD target this build compiled that the CPU (or emulator) runs, not
  // only the one the dispatcher would pick: the phone's code is tested too.
  std::vector<std::string> tested;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    ASSERT_EQ(std::string(SparseFfnTarget()), hwy::TargetName(target));
    std::vector<float> simd(s.d_model, 0.5f);
    SparseFfn(s, bundles.data(), count, x.data(), simd.data());
    for (int i = 0; i < s.d_model; ++i) {
      EXPECT_NEAR(simd[i], scalar[i], 1e-4 * max_abs) << i << " on " << SparseFfnTarget();
    }
    tested.push_back(SparseFfnTarget());
  }
  hwy::SetSupportedTargetsForTest(0);
  ASSERT_FALSE(tested.empty());
  RecordProperty("targets", absl::StrJoin(tested, " "));
  std::printf("sparse FFN kernel checked on: %s\n", absl::StrJoin(tested, " ").c_str());
}

INSTANTIATE_TEST_SUITE_P(Formats, KernelMatchesScalar,
                         ::testing::Values(Case{4, 16, true}, Case{4, 32, true}, Case{4, 64, false},
                                           Case{8, 16, true}, Case{8, 32, false}));

TEST(HalfFloat, RoundTripsRepresentableValues) {
  for (float f : {0.0f, 1.0f, -2.5f, 0.0009765625f, 65504.0f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f);
  }
}

}  // namespace
}  // namespace sparseflash
