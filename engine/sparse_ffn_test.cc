// ClassifyWithPinned against ClassifyNeurons: the same counts, and the cache
// sees the same lookups and reads in the same order, whether the sets come
// with bitsets (AttachBits) or not.
#include "engine/sparse_ffn.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/random.h"

namespace sparseflash {
namespace {

std::vector<uint32_t> Draw(Random& rng, uint32_t n, double p) {
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < n; ++i) {
    if (rng.Uniform() < p) ids.push_back(i);
  }
  return ids;
}

void SetBit(std::vector<uint64_t>* bits, uint64_t k) { (*bits)[k >> 6] |= uint64_t{1} << (k & 63); }
bool Bit(const std::vector<uint64_t>& bits, uint64_t k) { return (bits[k >> 6] >> (k & 63)) & 1; }

// Sorted ids of every density, runs of one word and ids far apart: MarkIds
// sets exactly their bits in a clear bitset (growing it to the last id's word)
// and UnmarkIds clears them again.
TEST(MarkIds, SetsExactlyTheIdsBitsAndUnmarkClearsThem) {
  Random rng(5);
  std::vector<uint64_t> scratch;
  for (double p : {0.002, 0.05, 0.3, 0.9, 1.0}) {
    for (int round = 0; round < 20; ++round) {
      const uint32_t n = 1 + static_cast<uint32_t>(rng.Below(1000));
      const std::vector<uint32_t> ids = Draw(rng, n, p);
      MarkIds(ids, &scratch);
      std::vector<uint64_t> want(scratch.size());
      for (uint32_t id : ids) SetBit(&want, id);
      ASSERT_EQ(scratch, want) << "p " << p << ", " << ids.size() << " ids";
      if (!ids.empty()) {
        EXPECT_GE(scratch.size() * 64, uint64_t{ids.back()} + 1);
      }
      UnmarkIds(ids, &scratch);
      ASSERT_EQ(scratch, std::vector<uint64_t>(scratch.size(), 0));
    }
  }
}

TEST(ClassifyWithPinned, MatchesThePerNeuronClassification) {
  Random rng(3);
  // 100 neurons per slot (not a multiple of 64: slots start mid-word), 4 slots.
  constexpr uint32_t kNeurons = 100, kSlots = 4;
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> hot((kNeurons * kSlots + 63) / 64), npu(hot.size()), cold(hot.size());
    for (uint32_t k = 0; k < kNeurons * kSlots; ++k) {
      if (rng.Uniform() < 0.4) {
        SetBit(&hot, k);
        if (rng.Uniform() < 0.3) SetBit(&npu, k);
      } else if (rng.Uniform() < 0.5) {
        SetBit(&cold, k);
      }
    }
    // Some rounds have no pinned region at all (a null bitset).
    const bool no_pinned = round % 5 == 4;
    if (no_pinned) hot.assign(hot.size(), 0);
    const uint32_t slot = static_cast<uint32_t>(rng.Below(kSlots));
    const uint32_t base = slot * kNeurons;
    NeuronSet set;
    set.active = Draw(rng, kNeurons, 0.3);
    set.gate_only = Draw(rng, kNeurons, 0.1);
    set.predicted = Draw(rng, kNeurons, 0.5);
    // A predictor's own prediction (not the recorded set) in some rounds.
    const std::vector<uint32_t> predictor = Draw(rng, kNeurons, 0.5);
    const std::vector<uint32_t>& predicted = round % 3 == 1 ? predictor : set.predicted;
    if (round % 4 < 2) AttachBits(&set);  // the trace keeps bitsets of its sets
    const bool conditional = round % 2 == 0;
    const bool with_npu = round % 3 != 0;

    std::vector<CacheKey> looked, read;
    uint64_t pinned_expected = 0;
    FfnCounts expected = ClassifyNeurons(
        predicted, set, base, conditional,
        [&](CacheKey k) {
          if (Bit(hot, k)) {
            ++pinned_expected;
            return with_npu && Bit(npu, k) ? Residency::kElsewhere : Residency::kResident;
          }
          looked.push_back(k);
          return Bit(cold, k) ? Residency::kResident : Residency::kMissing;
        },
        [&](CacheKey k) { read.push_back(k); }, [](CacheKey) {});

    if (set.bits.present) {  // the same from the ids alone
      NeuronSet ids_only = set;
      ids_only.bits = {};
      FfnCounts from_ids = ClassifyNeurons(
          predicted, ids_only, base, conditional,
          [&](CacheKey k) {
            if (Bit(hot, k)) {
              return with_npu && Bit(npu, k) ? Residency::kElsewhere : Residency::kResident;
            }
            return Bit(cold, k) ? Residency::kResident : Residency::kMissing;
          },
          [](CacheKey) {}, [](CacheKey) {});
      ASSERT_EQ(from_ids.resident_active, expected.resident_active) << round;
      ASSERT_EQ(from_ids.resident_gate_zero, expected.resident_gate_zero) << round;
      ASSERT_EQ(from_ids.missing_active, expected.missing_active) << round;
      ASSERT_EQ(from_ids.missing_gate_zero, expected.missing_gate_zero) << round;
    }

    std::vector<CacheKey> looked2, read2, hinted;
    uint64_t pinned = 0;
    const bool hints = round % 7 < 4;
    FfnCounts got = ClassifyWithPinned(
        predicted, set, base, conditional,
        {.resident = no_pinned ? nullptr : &hot, .elsewhere = with_npu ? &npu : nullptr},
        [&](CacheKey k) {
          looked2.push_back(k);
          return Bit(cold, k) ? Residency::kResident : Residency::kMissing;
        },
        [&](CacheKey k) { read2.push_back(k); }, [&](CacheKey k) { hinted.push_back(k); }, hints,
        &pinned);

    ASSERT_EQ(got.resident_active, expected.resident_active) << round;
    ASSERT_EQ(got.resident_gate_zero, expected.resident_gate_zero) << round;
    ASSERT_EQ(got.missing_active, expected.missing_active) << round;
    ASSERT_EQ(got.missing_gate_zero, expected.missing_gate_zero) << round;
    ASSERT_EQ(pinned, pinned_expected) << round;
    ASSERT_EQ(looked2, looked) << round;
    ASSERT_EQ(read2, read) << round;
    // Hints, when asked for, name every looked-up key a word (64 keys) ahead:
    // all but those of the first word.
    std::vector<CacheKey> ahead;
    for (CacheKey k : looked) {
      if (hints && k >= base + 64) ahead.push_back(k);
    }
    ASSERT_EQ(hinted, ahead) << round;
  }
}

}  // namespace
}  // namespace sparseflash
