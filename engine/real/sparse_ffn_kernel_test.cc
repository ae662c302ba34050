#include "engine/real/sparse_ffn_kernel.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/random.h"
#include "engine/real/bundle_prefetch.h"
#include "engine/real/sparse_ffn_vnni.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"

namespace sparseflash {
namespace {

struct Case {
  int bits, group;
  bool gated;
};

// `count` bundles of random weights and scales, and a random x.
struct RandomLayer {
  std::vector<uint8_t> data;
  std::vector<const uint8_t*> bundles;
  std::vector<float> x;
};

RandomLayer MakeRandomLayer(const FfnKernelShape& s, int count, uint64_t seed) {
  Random rng(seed);
  RandomLayer layer;
  std::vector<uint8_t>& data = layer.data;
  std::vector<const uint8_t*>& bundles = layer.bundles;
  data.resize(s.bundle_bytes() * count);
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
  layer.x.resize(s.d_model);
  for (float& v : layer.x) v = static_cast<float>(rng.Uniform() * 2 - 1);
  return layer;
}

double MaxAbs(const std::vector<float>& v) {
  double max_abs = 0;
  for (float e : v) max_abs = std::max(max_abs, std::fabs(double(e)));
  return max_abs;
}

class KernelMatchesScalar : public ::testing::TestWithParam<Case> {};

TEST_P(KernelMatchesScalar, OnRandomBundles) {
  const Case c = GetParam();
  FfnKernelShape s{.d_model = 256, .group = c.group, .bits = c.bits, .gated = c.gated};
  const int count = 37;
  const RandomLayer layer = MakeRandomLayer(s, count, c.bits * 100 + c.group);
  const auto& bundles = layer.bundles;
  const auto& x = layer.x;
  std::vector<float> scalar(s.d_model, 0.5f);
  SparseFfnScalar(s, bundles.data(), count, x.data(), scalar.data());
  const double max_abs = MaxAbs(scalar);
  ASSERT_GT(max_abs, 0.5);  // some neurons were active
  // Every SIMD target this build compiled that the CPU (or emulator) runs, not
  // only the one the dispatcher would pick: the phone's code is tested too.
  FfnKernelShape wide = s;
  wide.d_model = 1024;
  const RandomLayer other = MakeRandomLayer(wide, 5, 99);
  std::vector<std::string> tested;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    ASSERT_EQ(std::string(SparseFfnPortableTarget()), hwy::TargetName(target));
    std::vector<float> simd(s.d_model, 0.5f);
    SparseFfnPortable(s, bundles.data(), count, x.data(), simd.data());
    for (int i = 0; i < s.d_model; ++i) {
      EXPECT_NEAR(simd[i], scalar[i], 1e-4 * max_abs) << i << " on " << SparseFfnPortableTarget();
    }
    // Buffers kept from call to call: a wider call in between changes nothing.
    std::vector<float> wide_out(wide.d_model, 0.0f), again(s.d_model, 0.5f);
    SparseFfnPortable(wide, other.bundles.data(), 5, other.x.data(), wide_out.data());
    SparseFfnPortable(s, bundles.data(), count, x.data(), again.data());
    for (int i = 0; i < s.d_model; ++i) ASSERT_EQ(again[i], simd[i]) << i;
    tested.push_back(SparseFfnPortableTarget());
  }
  hwy::SetSupportedTargetsForTest(0);
  ASSERT_FALSE(tested.empty());
  RecordProperty("targets", absl::StrJoin(tested, " "));
  std::printf("sparse FFN kernel checked on: %s\n", absl::StrJoin(tested, " ").c_str());
}

// The VNNI path rounds x to int8 per group: it matches the scalar reference
// with that rounding to float precision, and the exact reference to the
// rounding's error (under 1 % of the largest output on these layers).
TEST_P(KernelMatchesScalar, VnniPathMatchesTheInt8Reference) {
  const Case c = GetParam();
  FfnKernelShape s{.d_model = 512, .group = c.group, .bits = c.bits, .gated = c.gated};
  if (!SparseFfnVnniSupports(s)) GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  const int count = 41;
  const RandomLayer layer = MakeRandomLayer(s, count, c.bits * 31 + c.group);
  std::vector<float> exact(s.d_model, 0.5f), q8(s.d_model, 0.5f), vnni(s.d_model, 0.5f),
      dispatched(s.d_model, 0.5f);
  SparseFfnScalar(s, layer.bundles.data(), count, layer.x.data(), exact.data());
  SparseFfnScalarQ8(s, layer.bundles.data(), count, layer.x.data(), q8.data());
  SparseFfnVnni(s, layer.bundles.data(), count, layer.x.data(), vnni.data());
  SparseFfn(s, layer.bundles.data(), count, layer.x.data(), dispatched.data());
  const double max_abs = MaxAbs(exact);
  ASSERT_GT(max_abs, 0.5);
  double worst = 0;
  for (int i = 0; i < s.d_model; ++i) {
    EXPECT_NEAR(vnni[i], q8[i], 1e-4 * max_abs) << i;
    EXPECT_EQ(dispatched[i], vnni[i]) << i;
    worst = std::max(worst, std::fabs(double(q8[i]) - exact[i]));
  }
  EXPECT_LT(worst, 1e-2 * max_abs);
  EXPECT_GT(worst, 0.0);  // the int8 rounding is real: the reference is not the exact one
  EXPECT_STREQ(SparseFfnTarget(s), "AVX512_VNNI");
  // The path keeps its buffers from call to call: a call on a wider layer in
  // between leaves nothing behind that changes the next result.
  FfnKernelShape wide = s;
  wide.d_model = 1024;
  const RandomLayer other = MakeRandomLayer(wide, 5, 99);
  std::vector<float> wide_out(wide.d_model, 0.0f), again(s.d_model, 0.5f);
  SparseFfnVnni(wide, other.bundles.data(), 5, other.x.data(), wide_out.data());
  SparseFfnVnni(s, layer.bundles.data(), count, layer.x.data(), again.data());
  for (int i = 0; i < s.d_model; ++i) EXPECT_EQ(again[i], vnni[i]) << i;
}

// The dense GEMV over a layer's consecutive rows (the bundles' rows read as
// one matrix): every compiled SIMD target to float precision, and the VNNI path
// to its int8 rounding of x (under 1 % of the largest output).
TEST_P(KernelMatchesScalar, DenseGemvMatchesTheReference) {
  const Case c = GetParam();
  FfnKernelShape s{.d_model = 512, .group = c.group, .bits = c.bits, .gated = c.gated};
  const RandomLayer layer = MakeRandomLayer(s, 7, c.bits * 17 + c.group);
  const int64_t rows = 7 * (s.gated ? 3 : 2);
  std::vector<float> exact(rows), y(rows, -1.0f);
  DenseGemvScalar(s, layer.data.data(), rows, layer.x.data(), exact.data());
  const double max_abs = MaxAbs(exact);
  ASSERT_GT(max_abs, 0.05);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    DenseGemvPortable(s, layer.data.data(), rows, layer.x.data(), y.data());
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_NEAR(y[r], exact[r], 1e-4 * max_abs) << r << " on " << SparseFfnPortableTarget();
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  std::vector<float> dispatched(rows, -1.0f);
  DenseGemv(s, layer.data.data(), rows, layer.x.data(), dispatched.data());
  for (int64_t r = 0; r < rows; ++r) EXPECT_NEAR(dispatched[r], exact[r], 1e-2 * max_abs) << r;
  if (!SparseFfnVnniSupports(s)) return;
  DenseGemvVnni(s, layer.data.data(), rows, layer.x.data(), y.data());
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_NEAR(y[r], exact[r], 1e-2 * max_abs) << r;
    EXPECT_EQ(dispatched[r], y[r]) << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, KernelMatchesScalar,
                         ::testing::Values(Case{4, 16, true}, Case{4, 32, true}, Case{4, 64, false},
                                           Case{4, 128, true}, Case{8, 16, true},
                                           Case{8, 32, false}, Case{8, 128, true}));

TEST(BundlePrefetcher, KeepsAbout14KiBOfBundlesInFlightAndStaysInsideTheList) {
  const FfnKernelShape mistral{.d_model = 4096, .group = 32, .bits = 4, .gated = true};
  EXPECT_EQ(BundlePrefetcher(nullptr, 0, mistral.bundle_bytes()).distance(), 2);  // 6,912 B each
  const FfnKernelShape int8{.d_model = 4096, .group = 64, .bits = 8, .gated = true};
  EXPECT_EQ(BundlePrefetcher(nullptr, 0, int8.bundle_bytes()).distance(), 1);
  EXPECT_EQ(BundlePrefetcher(nullptr, 0, 1 << 20).distance(), 1);  // one bundle past the window
  // Fewer bundles than the window: asks only for those in the list (ASan
  // reports a read past the heap-allocated list).
  const RandomLayer layer = MakeRandomLayer(mistral, 3, 1);
  auto* list = new const uint8_t* [3] { layer.bundles[0], layer.bundles[1], layer.bundles[2] };
  const BundlePrefetcher prefetch(list, 3, mistral.bundle_bytes());
  for (int k = 0; k < 3; ++k) prefetch.Before(k);
  delete[] list;
}

TEST(PacedLines, SpreadsARowsLinesOverTheStepsAndAsksForEachOnce) {
  std::vector<uint8_t> row(2304);  // 36 lines over 32 steps: two lines a step
  PacedLines fetch(row.data(), static_cast<int64_t>(row.size()), 32);
  fetch.Step();
  EXPECT_FALSE(fetch.done());  // not all at once
  for (int step = 1; step < 17; ++step) fetch.Step();
  EXPECT_FALSE(fetch.done());
  fetch.Step();
  EXPECT_TRUE(fetch.done());  // within the steps
  fetch.Step();
  fetch.Rest();
  EXPECT_TRUE(fetch.done());
  PacedLines rest(row.data(), static_cast<int64_t>(row.size()), 1);
  rest.Rest();
  EXPECT_TRUE(rest.done());
  PacedLines nothing(nullptr, 2304, 32);
  EXPECT_TRUE(nothing.done());
}

TEST(BundlePrefetcher, SplitsTheBundleAheadAtItsFirstRow) {
  std::vector<uint8_t> arena(4 * 1024);
  const uint8_t* list[4] = {&arena[0], &arena[1024], &arena[2048], &arena[3072]};
  const BundlePrefetcher prefetch(list, 4, 1024);  // 14 KiB window: every bundle is ahead
  ASSERT_EQ(prefetch.distance(), 14);
  EXPECT_EQ(prefetch.AheadSplit(0, 256).first, nullptr);  // past the list's end

  const BundlePrefetcher wide(list, 4, 64 << 10);  // one bundle a window; nothing is read
  ASSERT_EQ(wide.distance(), 1);
  const BundleAhead ahead = wide.AheadSplit(1, 256);
  EXPECT_EQ(ahead.first, list[2]);
  EXPECT_EQ(ahead.first_bytes, 256);
  EXPECT_EQ(ahead.rest, list[2] + 256);
  EXPECT_EQ(ahead.rest_bytes, (64 << 10) - 256);
  EXPECT_EQ(wide.AheadSplit(3, 256).rest, nullptr);
}

TEST(HalfFloat, RoundTripsRepresentableValues) {
  for (float f : {0.0f, 1.0f, -2.5f, 0.0009765625f, 65504.0f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f);
  }
}

}  // namespace
}  // namespace sparseflash
