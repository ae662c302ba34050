// Shared by the sparse strategies: classify one layer's predicted neurons into
// resident / missing and gate-non-zero / gate-zero (the FfnCounts the pipeline
// planner needs), consulting and updating a cache through two callbacks.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "engine/eviction_policy.h"
#include "engine/ffn_plan.h"
#include "engine/neuron_key.h"
#include "traces/activation.h"

namespace sparseflash {

enum class Residency { kMissing, kResident, kElsewhere };

// Sorted neuron ids as bits of a bitset the caller keeps (grown as needed),
// whose bits are otherwise clear; UnmarkIds clears them again.
void MarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits);
void UnmarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits);
// Sorted ids as a bitset for the length of a scope: the caller's own bitset of
// them (`kept`) when there is one, else the ids marked into `scratch` (a
// bitset whose bits are otherwise clear) and cleared again at the scope's end.
class ScopedIdBits {
 public:
  ScopedIdBits(const std::vector<uint32_t>& ids, const std::vector<uint64_t>* kept,
               std::vector<uint64_t>* scratch)
      : ids_(ids), scratch_(kept == nullptr ? scratch : nullptr), bits_(kept ? *kept : *scratch) {
    if (scratch_ != nullptr) MarkIds(ids_, scratch_);
  }
  ~ScopedIdBits() {
    if (scratch_ != nullptr) UnmarkIds(ids_, scratch_);
  }
  ScopedIdBits(const ScopedIdBits&) = delete;
  ScopedIdBits& operator=(const ScopedIdBits&) = delete;
  const std::vector<uint64_t>& bits() const { return bits_; }

 private:
  const std::vector<uint32_t>& ids_;
  std::vector<uint64_t>* scratch_;  // null: the caller's bitset is used
  const std::vector<uint64_t>& bits_;
};
// Fills set->bits from its ids.
void AttachBits(NeuronSet* set);
// The 64 bits of `bits` from bit `at` on; bits past the end read as 0.
inline uint64_t BitsFrom(const std::vector<uint64_t>& bits, uint64_t at) {
  const size_t w = at >> 6;
  const unsigned shift = at & 63;
  const uint64_t low = w < bits.size() ? bits[w] >> shift : 0;
  const uint64_t high = shift != 0 && w + 1 < bits.size() ? bits[w + 1] << (64 - shift) : 0;
  return low | high;
}

namespace internal {
// Counts one classified neuron and reads a missing one's bundle if it must be.
template <typename Fetched>
void CountNeuron(Residency r, bool gate, CacheKey key, bool second_conditional, int64_t n[4],
                 Fetched& fetched) {
  if (r == Residency::kElsewhere) return;
  const bool missing = r == Residency::kMissing;
  // Indexed by missing x 2 + gate zero, the order of FfnCounts' fields.
  ++n[(missing ? 2 : 0) + (gate ? 0 : 1)];
  if (missing && (gate || !second_conditional)) fetched(key);
}
inline FfnCounts ToCounts(const int64_t n[4]) {
  return {.resident_active = n[0],
          .resident_gate_zero = n[1],
          .missing_active = n[2],
          .missing_gate_zero = n[3]};
}
}  // namespace internal

// `resident(key)` looks a neuron up (counting hit or miss) and says whether this
// planner computes it (kElsewhere: another unit does, e.g. the NPU's hot rows);
// `fetched(key)` is called for each missing neuron whose whole bundle is read (all of them unless
// the second part is conditional, then those with a non-zero gate). A neuron's
// gate is non-zero when it is active or gate-only.
template <typename Resident, typename Fetched, typename Prefetch>
FfnCounts ClassifyNeurons(const std::vector<uint32_t>& predicted, const NeuronSet& set,
                          uint32_t key_base, bool second_conditional, Resident&& resident,
                          Fetched&& fetched, Prefetch&& prefetch) {
  // A bit test per neuron instead of merging two sorted lists: the merge's
  // data-dependent branches were the loop's cost.
  // The trace's own bitsets when it keeps them, else marked here.
  static thread_local std::vector<uint64_t> active_scratch, gate_only_scratch;
  const bool kept = set.bits.present;
  const ScopedIdBits active_bits(set.active, kept ? &set.bits.active : nullptr, &active_scratch);
  const ScopedIdBits gate_only_bits(set.gate_only, kept ? &set.bits.gate_only : nullptr,
                                    &gate_only_scratch);
  const std::vector<uint64_t>& active = active_bits.bits();
  const std::vector<uint64_t>& gate_only = gate_only_bits.bits();
  int64_t n[4] = {0, 0, 0, 0};
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < std::min(kAhead, predicted.size()); ++i) prefetch(key_base + predicted[i]);
  for (size_t i = 0; i < predicted.size(); ++i) {
    const uint32_t id = predicted[i];
    if (i + kAhead < predicted.size()) prefetch(key_base + predicted[i + kAhead]);
    const bool gate = ((BitsFrom(active, id) | BitsFrom(gate_only, id)) & 1) != 0;
    const CacheKey key = key_base + id;
    internal::CountNeuron(resident(key), gate, key, second_conditional, n, fetched);
  }
  return internal::ToCounts(n);
}

// Keys a cache holds pinned, looked up without changing any state: bit k of
// `resident` (per key; null: no key is pinned) says key k is in memory; of
// `elsewhere` (may be null), that another unit computes it.
struct PinnedKeys {
  const std::vector<uint64_t>* resident = nullptr;
  const std::vector<uint64_t>* elsewhere = nullptr;
};

// For the function that runs ClassifyWithPinned's word loop: on x86-64 it is
// compiled twice, with and without the POPCNT instruction, and the loader picks
// one for the CPU. Without it the portable build's std::popcount is a library
// call per word. Not under ThreadSanitizer: the loader runs the clone's
// resolver while relocating, before TSan's runtime exists, and the resolver's
// instrumentation crashes every program that links it.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SF_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SF_THREAD_SANITIZER 1
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(SF_THREAD_SANITIZER)
#define SF_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define SF_POPCNT_CLONES
#endif

// ClassifyNeurons for a cache with a pinned region: pinned neurons are counted
// 64 at a time, and only the others go through `resident` and `fetched`, in
// the same ascending order, so the cache sees the same operations; when
// `hints`, `prefetch` is called on them a word of 64 neurons ahead (a cache
// whose policy gains nothing from hints is faster without the extra pass over
// each word). Adds the pinned predicted
// neurons to *pinned_hits. `predicted` is sorted and unique. Always inlined,
// so that it is compiled for its caller's target (SF_POPCNT_CLONES).
template <typename Resident, typename Fetched, typename Prefetch>
[[gnu::always_inline]] inline FfnCounts ClassifyWithPinned(
    const std::vector<uint32_t>& predicted, const NeuronSet& set, uint32_t key_base,
    bool second_conditional, const PinnedKeys& pinned, Resident&& resident, Fetched&& fetched,
    Prefetch&& prefetch, bool hints, uint64_t* pinned_hits) {
  // The sets as bitsets: the trace's own when it keeps them, else marked here.
  static thread_local std::vector<uint64_t> wanted_scratch, active_scratch, gate_only_scratch;
  const NeuronBits& kept = set.bits;
  const bool kept_predicted = kept.present && &predicted == &set.predicted;
  const ScopedIdBits wanted_bits(predicted, kept_predicted ? &kept.predicted : nullptr,
                                 &wanted_scratch);
  const ScopedIdBits active_bits(set.active, kept.present ? &kept.active : nullptr,
                                 &active_scratch);
  const ScopedIdBits gate_only_bits(set.gate_only, kept.present ? &kept.gate_only : nullptr,
                                    &gate_only_scratch);
  const std::vector<uint64_t>& wanted = wanted_bits.bits();
  const std::vector<uint64_t>& active = active_bits.bits();
  const std::vector<uint64_t>& gate_only = gate_only_bits.bits();
  // The loop reads the bitsets through plain pointers: thread-local vectors
  // would be looked up again after every callback.
  const uint64_t* want_words = wanted.data();
  const size_t words = wanted.size();
  const uint64_t* active_words = active.data();
  const uint64_t* gate_only_words = gate_only.data();
  const size_t active_size = active.size(), gate_only_size = gate_only.size();
  int64_t n[4] = {0, 0, 0, 0};
  // The pinned neurons' counts, kept apart from n until the end: added to n
  // word by word, they were one 16-byte load of two counters CountNeuron had
  // just stored one at a time, a load the CPU cannot forward from the stores.
  int64_t pinned_count = 0, pinned_gate = 0;
  // The pinned keys of the word at key `at` (none without a pinned region).
  auto pinned_at = [&](uint64_t at) {
    return pinned.resident != nullptr ? BitsFrom(*pinned.resident, at) : 0;
  };
  auto cold_of = [&](size_t w) {
    return w < words ? want_words[w] & ~pinned_at(key_base + 64 * w) : 0;
  };
  for (size_t w = 0; w < words; ++w) {
    for (uint64_t next = hints ? cold_of(w + 1) : 0; next != 0; next &= next - 1) {
      prefetch(static_cast<CacheKey>(key_base + 64 * (w + 1) + std::countr_zero(next)));
    }
    const uint64_t want = want_words[w];
    if (want == 0) continue;
    const uint64_t at = uint64_t{key_base} + 64 * w;
    const uint64_t gate =
        (w < active_size ? active_words[w] : 0) | (w < gate_only_size ? gate_only_words[w] : 0);
    const uint64_t hot = want & pinned_at(at);
    const uint64_t away = pinned.elsewhere != nullptr ? hot & BitsFrom(*pinned.elsewhere, at) : 0;
    const uint64_t here = hot & ~away;
    const int here_count = std::popcount(here), here_gate = std::popcount(here & gate);
    *pinned_hits += static_cast<uint64_t>(here_count + (away != 0 ? std::popcount(away) : 0));
    pinned_count += here_count;
    pinned_gate += here_gate;
    for (uint64_t rest = want & ~hot; rest != 0; rest &= rest - 1) {
      const int bit = std::countr_zero(rest);
      const CacheKey key = static_cast<CacheKey>(at) + static_cast<CacheKey>(bit);
      internal::CountNeuron(resident(key), (gate >> bit) & 1, key, second_conditional, n, fetched);
    }
  }
  n[0] += pinned_gate;
  n[1] += pinned_count - pinned_gate;
  return internal::ToCounts(n);
}

}  // namespace sparseflash
