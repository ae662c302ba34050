// Shared by the sparse strategies: classify one layer's predicted neurons into
// resident / missing and gate-non-zero / gate-zero (the FfnCounts the pipeline
// planner needs), consulting and updating a cache through two callbacks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/eviction_policy.h"
#include "engine/ffn_plan.h"
#include "engine/neuron_key.h"
#include "traces/activation.h"

namespace sparseflash {

enum class Residency { kMissing, kResident, kElsewhere };

// `resident(key)` looks a neuron up (counting hit or miss) and says whether this
// planner computes it (kElsewhere: another unit does, e.g. the NPU's hot rows);
// `fetched(key)` is called for each missing neuron whose whole bundle is read (all of them unless
// the second part is conditional, then those with a non-zero gate).
template <typename Resident, typename Fetched, typename Prefetch>
FfnCounts ClassifyNeurons(const std::vector<uint32_t>& predicted, const NeuronSet& set,
                          uint32_t key_base, bool second_conditional, Resident&& resident,
                          Fetched&& fetched, Prefetch&& prefetch) {
  FfnCounts c;
  size_t a = 0, g = 0;
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < std::min(kAhead, predicted.size()); ++i) prefetch(key_base + predicted[i]);
  for (size_t i = 0; i < predicted.size(); ++i) {
    const uint32_t id = predicted[i];
    if (i + kAhead < predicted.size()) prefetch(key_base + predicted[i + kAhead]);
    while (a < set.active.size() && set.active[a] < id) ++a;
    while (g < set.gate_only.size() && set.gate_only[g] < id) ++g;
    const bool gate = (a < set.active.size() && set.active[a] == id) ||
                      (g < set.gate_only.size() && set.gate_only[g] == id);
    const CacheKey key = key_base + id;
    const Residency r = resident(key);
    if (r == Residency::kElsewhere) continue;
    if (r == Residency::kResident) {
      (gate ? c.resident_active : c.resident_gate_zero) += 1;
    } else {
      (gate ? c.missing_active : c.missing_gate_zero) += 1;
      if (gate || !second_conditional) fetched(key);
    }
  }
  return c;
}

}  // namespace sparseflash
