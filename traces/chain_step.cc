// Compiled once per SIMD target (hwy/foreach_target.h re-includes this file).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "traces/chain_step.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#ifndef SPARSEFLASH_CHAIN_STEP_SHARED
#define SPARSEFLASH_CHAIN_STEP_SHARED
#include <algorithm>
#include <bit>
#include <cstring>

#include "common/prefetch.h"
#include "traces/chain_step.h"

namespace sparseflash {
namespace chain_step_internal {

// A 32-bit integer hash with full avalanche (Wellons' "triple32").
inline uint32_t DrawHash(uint32_t x) {
  x ^= x >> 17;
  x *= 0xed5ad4bbu;
  x ^= x >> 11;
  x *= 0xac4c1b51u;
  x ^= x >> 15;
  x *= 0x31848babu;
  x ^= x >> 14;
  return x;
}

// Item i's uniform draw under `key`, 30 bits.
inline int32_t Draw(uint32_t i, uint32_t key) {
  return static_cast<int32_t>(DrawHash(i ^ key) >> (32 - kChainProbabilityBits));
}

inline bool Bit(const uint64_t* bits, size_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }

// The vector paths' widest vector, in 32-bit lanes.
constexpr size_t kMaxLanes = 16;
static_assert(kChainIdSlack >= kMaxLanes);

// How far ahead, in 64-neuron words, the threshold arrays are fetched. A
// population's arrays are read once a token (from DRAM for an MoE model, whose
// routed experts change from token to token) in short runs the hardware
// prefetcher does not follow far enough.
constexpr size_t kPrefetchWords = 8;

// Asks for word w's thresholds of every array the step reads, a 64-byte cache
// line (16 thresholds) at a time.
inline void PrefetchThresholds(const ChainThresholds& t, int regime, bool predictor, bool gates,
                               size_t w) {
  for (size_t i = w * 64; i < w * 64 + 64; i += 16) {
    PrefetchLineL1(t.stay_on[regime].data() + i);
    PrefetchLineL1(t.turn_on[regime].data() + i);
    if (predictor) {
      PrefetchLineL1(t.in_keep.data() + i);
      PrefetchLineL1(t.out_fire.data() + i);
    }
    if (gates) PrefetchLineL1(t.gate_only.data() + i);
  }
}

// StepToken one neuron at a time: the reference's bits, and their ids.
StepCounts StepTokenScalar(const ChainThresholds& t, const ChainKeys& keys, bool predictor,
                           bool gates, const uint64_t* on, const StepSinks& out);

}  // namespace chain_step_internal
}  // namespace sparseflash
#endif  // SPARSEFLASH_CHAIN_STEP_SHARED

HWY_BEFORE_NAMESPACE();
namespace sparseflash {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes, so one 64-bit word of neuron bits is a whole number of
// vectors and a vector's bits fit a 32-bit lane.
using DU = hn::CappedTag<uint32_t, chain_step_internal::kMaxLanes>;
using DI = hn::RebindToSigned<DU>;
using VU = hn::Vec<DU>;
using VI = hn::Vec<DI>;

VU HashV(DU du, VU x) {
  x = hn::Xor(x, hn::ShiftRight<17>(x));
  x = hn::Mul(x, hn::Set(du, 0xed5ad4bbu));
  x = hn::Xor(x, hn::ShiftRight<11>(x));
  x = hn::Mul(x, hn::Set(du, 0xac4c1b51u));
  x = hn::Xor(x, hn::ShiftRight<15>(x));
  x = hn::Mul(x, hn::Set(du, 0x31848babu));
  return hn::Xor(x, hn::ShiftRight<14>(x));
}

VI DrawV(DU du, VU index, uint32_t key) {
  const VU h = HashV(du, hn::Xor(index, hn::Set(du, key)));
  return hn::BitCast(DI(), hn::ShiftRight<32 - kChainProbabilityBits>(h));
}

// Lanes whose bit is set in `chunk` (lane k: bit k).
hn::Mask<DI> LaneMask(DU du, uint64_t chunk, VU lane_bit) {
  const VU v = hn::And(hn::Set(du, static_cast<uint32_t>(chunk)), lane_bit);
  return hn::RebindMask(DI(), hn::Ne(v, hn::Zero(du)));
}

// The mask as bits, lane k at bit k.
uint64_t MaskBits(DI di, hn::Mask<DI> m) {
  uint8_t bytes[8] = {};
  hn::StoreMaskBits(di, m, bytes);
  uint64_t v;
  std::memcpy(&v, bytes, 8);
  const size_t lanes = hn::Lanes(di);
  return lanes >= 64 ? v : v & ((uint64_t{1} << lanes) - 1);
}

// Stores the lanes of `index` in `set`, in order, at `out`; returns the end.
uint32_t* StoreLanes(DU du, VU index, hn::Mask<DI> set, uint32_t* out) {
  const auto m = hn::RebindMask(du, set);
  hn::StoreU(hn::Compress(index, m), du, out);
  return out + hn::CountTrue(du, m);
}

// The gate-only draws of the candidates at [ids, end) (increasing), in place:
// keeps those whose draw falls below their gate_only threshold, sets their
// bits in `bits` (whose words are zero) and returns the end of the kept ids.
// With a predictor few neurons may be gate-only (on but not active): drawing
// for them alone, after the step, spares a hash for every other neuron.
uint32_t* KeepGateOnly(const ChainThresholds& t, uint32_t key, uint32_t* ids, uint32_t* end,
                       uint64_t* bits) {
  const DU du;
  const DI di;
  const size_t lanes = hn::Lanes(du);
  uint32_t* kept = ids;
  // A vector is loaded before its kept lanes are stored at `kept` (never past
  // it), and a last partial vector reads into the ids' slack.
  for (uint32_t* at = ids; at < end; at += lanes) {
    const auto valid = hn::FirstN(di, static_cast<size_t>(end - at));
    const VU index = hn::IfThenElseZero(hn::RebindMask(du, valid), hn::LoadU(du, at));
    const VI threshold = hn::GatherIndex(di, t.gate_only.data(), hn::BitCast(di, index));
    const auto fires = hn::And(valid, hn::Lt(DrawV(du, index, key), threshold));
    kept = StoreLanes(du, index, fires, kept);
  }
  // One loop over all the kept ids: one per vector would mispredict its exit
  // at every vector.
  for (const uint32_t* id = ids; id < kept; ++id) bits[*id >> 6] |= uint64_t{1} << (*id & 63);
  return kept;
}

// The next on bits, the sets and their ids of one step (StepToken), a vector
// of neurons at a time, word by word.
StepCounts StepTokenImpl(const ChainThresholds& t, const ChainKeys& keys, bool predictor,
                         bool gates, const uint64_t* on, const StepSinks& out) {
  const DU du;
  const DI di;
  const size_t lanes = hn::Lanes(du);
  const int shift = std::countr_zero(t.group_size);
  // A word of 64 neurons must be whole vectors (SVE may have other lengths),
  // and the vector path finds a neuron's group by a shift.
  if (64 % lanes != 0 || !std::has_single_bit(t.group_size)) {
    return chain_step_internal::StepTokenScalar(t, keys, predictor, gates, on, out);
  }
  const VU iota = hn::Iota(du, 0);
  const VU lane_bit = hn::Shl(hn::Set(du, 1), iota);
  const VI coactivation = hn::Set(di, t.coactivation);
  // A draw is never below a zero threshold: without coactivation no neuron
  // follows its group, and neither the follow nor the group draw matters.
  const bool follow = t.coactivation > 0;
  // When a word's groups fit one vector, their draws are hashed once per word
  // and spread over its neurons by a lane permutation.
  const bool word_groups = (size_t{64} >> std::min(shift, 6)) <= lanes;
  const int regime = t.regime(keys.shifting);
  const int32_t* stay_on = t.stay_on[regime].data();
  const int32_t* turn_on = t.turn_on[regime].data();
  uint32_t* on_ids = out.on_ids;
  uint32_t* active_ids = out.active_ids;
  uint32_t* gate_ids = out.gate_only_ids;
  StepCounts counts;
  for (size_t w = 0; w < t.words(); ++w) {
    const uint32_t word_base = static_cast<uint32_t>(w * 64);
    if (w + chain_step_internal::kPrefetchWords < t.words()) {
      chain_step_internal::PrefetchThresholds(t, regime, predictor, gates,
                                              w + chain_step_internal::kPrefetchWords);
    }
    const VI group_draws =
        follow && word_groups
            ? DrawV(du, hn::Add(hn::Set(du, word_base >> shift), iota), keys.group)
            : hn::Zero(di);
    uint64_t on_bits = 0, active_bits = 0, gate_bits = 0;
    for (size_t j = 0; j < 64; j += lanes) {
      const size_t base = word_base + j;
      const VU index = hn::Add(hn::Set(du, static_cast<uint32_t>(base)), iota);
      const auto was_on = LaneMask(du, on[w] >> j, lane_bit);
      VI u = DrawV(du, index, keys.own);
      if (follow) {
        const auto follows = hn::Lt(DrawV(du, index, keys.follow), coactivation);
        VI shared;
        if (word_groups) {
          // The lane's group within the word: a word starts a group, or lies
          // inside one (shift >= 6).
          const VU within =
              shift >= 6
                  ? hn::Zero(du)
                  : hn::ShiftRightSame(hn::Add(hn::Set(du, static_cast<uint32_t>(j)), iota), shift);
          shared =
              hn::TableLookupLanes(group_draws, hn::IndicesFromVec(di, hn::BitCast(di, within)));
        } else {
          shared = DrawV(du, hn::ShiftRightSame(index, shift), keys.group);
        }
        u = hn::IfThenElse(follows, shared, u);
      }
      const VI step_threshold =
          hn::IfThenElse(was_on, hn::LoadU(di, stay_on + base), hn::LoadU(di, turn_on + base));
      const auto now_on = hn::Lt(u, step_threshold);
      auto is_active = now_on;
      if (predictor) {
        const VI threshold = hn::IfThenElse(now_on, hn::LoadU(di, t.in_keep.data() + base),
                                            hn::LoadU(di, t.out_fire.data() + base));
        is_active = hn::Lt(DrawV(du, index, keys.set_a), threshold);
      }
      on_bits |= MaskBits(di, now_on) << j;
      active_bits |= MaskBits(di, is_active) << j;
      // Compressed in a register, then stored: a compressing store to memory is
      // microcoded and slow on some CPUs (AMD Zen 4).
      if (on_ids != nullptr) on_ids = StoreLanes(du, index, now_on, on_ids);
      active_ids = StoreLanes(du, index, is_active, active_ids);
      if (gates && predictor) {
        // The candidates (on, not active); KeepGateOnly draws for them below.
        gate_ids = StoreLanes(du, index, hn::AndNot(is_active, now_on), gate_ids);
      } else if (gates) {
        const auto fires =
            hn::Lt(DrawV(du, index, keys.set_b), hn::LoadU(di, t.gate_only.data() + base));
        const auto gate = hn::AndNot(now_on, fires);
        gate_bits |= MaskBits(di, gate) << j;
        gate_ids = StoreLanes(du, index, gate, gate_ids);
      }
    }
    out.on[w] = on_bits;
    out.active[w] = active_bits;
    out.gate_only[w] = gate_bits;
    counts.on += hwy::PopCount(on_bits);
    counts.active += hwy::PopCount(active_bits);
    counts.gate_only += hwy::PopCount(gate_bits);
  }
  if (gates && predictor) {
    counts.gate_only = static_cast<size_t>(
        KeepGateOnly(t, keys.set_b, out.gate_only_ids, gate_ids, out.gate_only) -
        out.gate_only_ids);
  }
  return counts;
}

const char* ChainStepTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace sparseflash
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflash {

HWY_EXPORT(StepTokenImpl);
HWY_EXPORT(ChainStepTargetName);

using chain_step_internal::Bit;
using chain_step_internal::Draw;

StepCounts StepToken(const ChainThresholds& t, const ChainKeys& keys, bool predictor, bool gates,
                     const uint64_t* on, const StepSinks& out) {
  return HWY_DYNAMIC_DISPATCH(StepTokenImpl)(t, keys, predictor, gates, on, out);
}

void PrefetchStepStart(const ChainThresholds& t, bool shifting, bool predictor, bool gates) {
  const size_t words = std::min(chain_step_internal::kPrefetchWords, t.words());
  for (size_t w = 0; w < words; ++w) {
    chain_step_internal::PrefetchThresholds(t, t.regime(shifting), predictor, gates, w);
  }
}

size_t StepChainsScalar(const ChainThresholds& t, const ChainKeys& keys, const uint64_t* on,
                        uint64_t* next) {
  const int regime = t.regime(keys.shifting);
  size_t count = 0;
  for (size_t w = 0; w < t.words(); ++w) {
    uint64_t bits = 0;
    for (uint32_t b = 0; b < 64; ++b) {
      const uint32_t i = static_cast<uint32_t>(w * 64 + b);
      const int32_t u = Draw(i, keys.follow) < t.coactivation ? Draw(i / t.group_size, keys.group)
                                                              : Draw(i, keys.own);
      const int32_t threshold = Bit(on, i) ? t.stay_on[regime][i] : t.turn_on[regime][i];
      bits |= uint64_t{u < threshold} << b;
    }
    next[w] = bits;
    count += std::popcount(bits);
  }
  return count;
}

SetCounts DrawSetBitsScalar(const ChainThresholds& t, const ChainKeys& keys, bool predictor,
                            bool gates, const uint64_t* on, uint64_t* active, uint64_t* gate_only) {
  SetCounts counts;
  for (size_t w = 0; w < t.words(); ++w) {
    uint64_t active_bits = 0, gate_bits = 0;
    for (uint32_t b = 0; b < 64; ++b) {
      const uint32_t i = static_cast<uint32_t>(w * 64 + b);
      const bool was_on = Bit(on, i);
      bool is_active = was_on, may = !was_on;
      if (predictor) {
        is_active = Draw(i, keys.set_a) < (was_on ? t.in_keep[i] : t.out_fire[i]);
        may = was_on && !is_active;
      }
      const bool gate = gates && may && Draw(i, keys.set_b) < t.gate_only[i];
      active_bits |= uint64_t{is_active} << b;
      gate_bits |= uint64_t{gate} << b;
    }
    active[w] = active_bits;
    gate_only[w] = gate_bits;
    counts.active += std::popcount(active_bits);
    counts.gate_only += std::popcount(gate_bits);
  }
  return counts;
}

namespace chain_step_internal {
namespace {

// The ids of the set bits of `words` words, in increasing order, at `out`.
void WriteIds(const uint64_t* bits, size_t words, uint32_t* out) {
  for (size_t w = 0; w < words; ++w) {
    for (uint64_t b = bits[w]; b != 0; b &= b - 1) {
      *out++ = static_cast<uint32_t>(w * 64 + std::countr_zero(b));
    }
  }
}

}  // namespace

StepCounts StepTokenScalar(const ChainThresholds& t, const ChainKeys& keys, bool predictor,
                           bool gates, const uint64_t* on, const StepSinks& out) {
  StepCounts counts;
  counts.on = StepChainsScalar(t, keys, on, out.on);
  const SetCounts sets =
      DrawSetBitsScalar(t, keys, predictor, gates, out.on, out.active, out.gate_only);
  counts.active = sets.active;
  counts.gate_only = sets.gate_only;
  if (out.on_ids != nullptr) WriteIds(out.on, t.words(), out.on_ids);
  WriteIds(out.active, t.words(), out.active_ids);
  WriteIds(out.gate_only, t.words(), out.gate_only_ids);
  return counts;
}

}  // namespace chain_step_internal

const char* ChainStepTarget() { return HWY_DYNAMIC_DISPATCH(ChainStepTargetName)(); }

}  // namespace sparseflash
#endif  // HWY_ONCE
