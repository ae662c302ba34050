// NeuronStream against its model's closed forms: each neuron's marginals, its
// chain's transitions and the co-firing of friend groups, counted over many
// tokens and compared in aggregate (the hashed, vectorized draws must not bend
// them); and the SIMD step against the scalar reference.
#include "traces/neuron_stream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/random.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "traces/chain_step.h"
#include "traces/skew.h"

namespace sparseflash {
namespace {

struct Counts {
  double on = 0, stay = 0, off = 0, turn_on = 0;   // observed
  double expected_stay = 0, expected_turn_on = 0;  // from the chain
  // Friends both on next token, by their states now (both off, both on, one
  // each): observed, expected, and expected if they drew alone.
  double both_on[3] = {}, expected_both[3] = {}, expected_both_alone[3] = {};
  double active = 0, predicted = 0, gate_only = 0;
};

NeuronStreamParams Params(int n, bool predictor, int group) {
  NeuronStreamParams p;
  p.propensity = PropensitiesPowerLaw(n, 0.1, 0.3);
  p.persistence = 0.55;
  p.coactivation = 0.6;
  p.group_size = group;
  p.predicted_ratio = predictor ? 1.3 : 0;
  p.recall = 0.95;
  p.gate_only_ratio = 0.25;
  return p;
}

// The envelope's stationary probabilities, as the stream derives them.
std::vector<double> Envelope(const NeuronStreamParams& p) {
  std::vector<double> e = p.propensity;
  if (p.predicted_ratio > 0) {
    for (double& x : e) x *= p.predicted_ratio;
    CapPreservingMean(&e, 1.0);
  }
  return e;
}

Counts CountSteps(const NeuronStreamParams& p, int tokens) {
  const int n = static_cast<int>(p.propensity.size());
  const std::vector<double> e = Envelope(p);
  std::vector<double> stay(n), turn(n);
  for (int i = 0; i < n; ++i) {
    const double rho = p.persistence;  // no spread, no cold persistence
    stay[i] = e[i] + rho * (1 - e[i]);
    turn[i] = e[i] * (1 - rho);
  }
  const double c2 = p.coactivation * p.coactivation;
  NeuronStream stream(p, 7);
  NeuronSet set;
  std::vector<uint8_t> was(n, 0), now(n, 0);
  Counts k;
  for (int t = 0; t < tokens; ++t) {
    stream.Step(&set);
    // The envelope is the predicted set with a predictor, the active set without.
    std::fill(now.begin(), now.end(), 0);
    for (uint32_t i : p.predicted_ratio > 0 ? set.predicted : set.active) now[i] = 1;
    k.active += set.active.size();
    k.predicted += set.predicted.size();
    k.gate_only += set.gate_only.size();
    if (t == 0) {
      was = now;
      continue;
    }
    for (int i = 0; i < n; ++i) {
      if (was[i]) {
        k.on += 1;
        k.stay += now[i];
        k.expected_stay += stay[i];
      } else {
        k.off += 1;
        k.turn_on += now[i];
        k.expected_turn_on += turn[i];
      }
    }
    for (int g = 0; g + p.group_size <= n; g += p.group_size) {
      for (int i = g; i < g + p.group_size; ++i) {
        for (int j = i + 1; j < g + p.group_size; ++j) {
          const int kind = was[i] && was[j] ? 1 : (was[i] || was[j] ? 2 : 0);
          const double ti = was[i] ? stay[i] : turn[i], tj = was[j] ? stay[j] : turn[j];
          k.both_on[kind] += now[i] & now[j];
          k.expected_both[kind] += c2 * std::min(ti, tj) + (1 - c2) * ti * tj;
          k.expected_both_alone[kind] += ti * tj;
        }
      }
    }
    was.swap(now);
  }
  return k;
}

void ExpectModel(const NeuronStreamParams& p, const Counts& k, int tokens) {
  const std::vector<double> e = Envelope(p);
  double sum_q = 0, sum_e = 0, sum_gate = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const double q = p.propensity[i];
    sum_q += q;
    sum_e += e[i];
    // Gate-only among the envelope's inactive neurons (with a predictor) or all
    // inactive ones, at most all of them.
    const double room = p.predicted_ratio > 0 ? e[i] - q * p.recall : 1 - q;
    sum_gate += std::min(room, p.gate_only_ratio * q);
  }
  EXPECT_NEAR(k.stay / k.expected_stay, 1.0, 0.01);
  EXPECT_NEAR(k.turn_on / k.expected_turn_on, 1.0, 0.02);
  // Friends follow one shared draw whatever their states: they turn on, stay
  // on, or one stays while the other turns on together more often than
  // independent neurons would.
  const double apart[3] = {3.0, 1.04, 1.08};  // co-firing's least effect per kind here
  for (int kind = 0; kind < 3; ++kind) {
    EXPECT_NEAR(k.both_on[kind] / k.expected_both[kind], 1.0, 0.06) << "kind " << kind;
    EXPECT_GT(k.both_on[kind], apart[kind] * k.expected_both_alone[kind]) << "kind " << kind;
  }
  EXPECT_NEAR(k.active / (tokens * sum_q), 1.0, 0.02);
  if (p.predicted_ratio > 0) {
    EXPECT_NEAR(k.predicted / (tokens * sum_e), 1.0, 0.02);
  }
  EXPECT_NEAR(k.gate_only / (tokens * sum_gate), 1.0, 0.03);
}

TEST(NeuronStream, ChainsMarginalsAndFriendsFollowTheModelWithAPredictor) {
  const NeuronStreamParams p = Params(2048, /*predictor=*/true, 8);
  ExpectModel(p, CountSteps(p, 6000), 6000);
}

TEST(NeuronStream, ChainsMarginalsAndFriendsFollowTheModelWithoutAPredictor) {
  const NeuronStreamParams p = Params(2046, /*predictor=*/false, 6);  // groups of 6
  ExpectModel(p, CountSteps(p, 6000), 6000);
}

TEST(NeuronStream, ItsBitsetsAreItsIdLists) {
  auto bit = [](const std::vector<uint64_t>& bits, uint32_t i) {
    return i / 64 < bits.size() && ((bits[i / 64] >> (i % 64)) & 1) != 0;
  };
  for (bool predictor : {false, true}) {
    const NeuronStreamParams p = Params(1000, predictor, 8);
    NeuronStream stream(p, 5);
    NeuronSet set;
    for (int t = 0; t < 50; ++t) {
      stream.Step(&set);
      ASSERT_TRUE(set.bits.present);
      const std::pair<const std::vector<uint32_t>*, const std::vector<uint64_t>*> sets[] = {
          {&set.active, &set.bits.active},
          {&set.predicted, &set.bits.predicted},
          {&set.gate_only, &set.bits.gate_only}};
      for (const auto& [ids, bits] : sets) {
        std::vector<uint32_t> from_bits;
        for (uint32_t i = 0; i < 1024; ++i) {
          if (bit(*bits, i)) from_bits.push_back(i);
        }
        ASSERT_EQ(from_bits, *ids) << "token " << t << ", predictor " << predictor;
      }
      EXPECT_EQ(set.predicted.empty(), !predictor);
    }
  }
}

// The ids of the set bits of `bits`, in order.
std::vector<uint32_t> IdsOf(const std::vector<uint64_t>& bits) {
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < bits.size() * 64; ++i) {
    if ((bits[i / 64] >> (i % 64)) & 1) ids.push_back(i);
  }
  return ids;
}

// StepToken from `on` against StepChainsScalar and DrawSetBitsScalar: the same
// bits, counts and ids (`where` names the case).
void ExpectStepEqualsScalar(const ChainThresholds& t, const ChainKeys& keys, bool predictor,
                            bool gates, const std::vector<uint64_t>& on, const std::string& where) {
  const size_t n = on.size() * 64;
  std::vector<uint64_t> next(on.size()), active(on.size()), gate(on.size());
  std::vector<uint32_t> next_ids(n + kChainIdSlack, 7), active_ids(n + kChainIdSlack, 7),
      gate_ids(n + kChainIdSlack, 7);
  const StepCounts counts = StepToken(t, keys, predictor, gates, on.data(),
                                      {.on = next.data(),
                                       .active = active.data(),
                                       .gate_only = gate.data(),
                                       .on_ids = next_ids.data(),
                                       .active_ids = active_ids.data(),
                                       .gate_only_ids = gate_ids.data()});
  std::vector<uint64_t> want_next(on.size()), want_active(on.size()), want_gate(on.size());
  const size_t want_on = StepChainsScalar(t, keys, on.data(), want_next.data());
  const SetCounts sets = DrawSetBitsScalar(t, keys, predictor, gates, want_next.data(),
                                           want_active.data(), want_gate.data());
  ASSERT_EQ(next, want_next) << where;
  ASSERT_EQ(active, want_active) << where;
  ASSERT_EQ(gate, want_gate) << where;
  ASSERT_EQ(counts.on, want_on) << where;
  ASSERT_EQ(counts.active, sets.active) << where;
  ASSERT_EQ(counts.gate_only, sets.gate_only) << where;
  next_ids.resize(counts.on);
  active_ids.resize(counts.active);
  gate_ids.resize(counts.gate_only);
  EXPECT_EQ(next_ids, IdsOf(want_next)) << where;
  EXPECT_EQ(active_ids, IdsOf(want_active)) << where;
  EXPECT_EQ(gate_ids, IdsOf(want_gate)) << where;
}

// Random thresholds and on bits (with empty and full words), the one-pass step
// against the scalar reference, bit for bit and id for id, for every group
// size (within a word, whole words, and not a power of two) and with no
// coactivation: any SIMD width draws the same sets.
TEST(ChainStep, OnePassStepEqualsTheScalarReference) {
  Random rng(11);
  ChainThresholds t;
  const size_t n = 64 * 37;
  for (std::vector<int32_t>* v : {&t.stay_on[0], &t.turn_on[0], &t.stay_on[1], &t.turn_on[1],
                                  &t.in_keep, &t.out_fire, &t.gate_only}) {
    v->resize(n);
    for (int32_t& x : *v) x = ChainThreshold(rng.Uniform());
  }
  std::vector<uint64_t> on(n / 64);
  for (uint64_t& w : on) w = rng.Next();
  on[0] = 0;
  on[1] = ~uint64_t{0};
  // Every SIMD target this build compiled that the CPU runs, not only the one
  // the dispatcher picks.
  std::vector<std::string> tested;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    ASSERT_EQ(std::string(ChainStepTarget()), hwy::TargetName(target));
    tested.push_back(ChainStepTarget());
    for (double coactivation : {0.0, 0.4, 1.0}) {
      t.coactivation = ChainThreshold(coactivation);
      for (uint32_t group : {1u, 2u, 3u, 4u, 8u, 16u, 64u, 128u}) {
        t.group_size = group;
        // Steady and shifting tokens alternate with the group sizes.
        const ChainKeys keys{.follow = static_cast<uint32_t>(rng.Next()),
                             .own = static_cast<uint32_t>(rng.Next()),
                             .group = static_cast<uint32_t>(rng.Next()),
                             .set_a = static_cast<uint32_t>(rng.Next()),
                             .set_b = static_cast<uint32_t>(rng.Next()),
                             .shifting = (group & 1) != 0};
        for (bool predictor : {false, true}) {
          for (bool gates : {false, true}) {
            ExpectStepEqualsScalar(
                t, keys, predictor, gates, on,
                absl::StrCat("coactivation ", coactivation, " group ", group, " predictor ",
                             predictor, " gates ", gates, " on ", ChainStepTarget()));
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  ASSERT_FALSE(tested.empty());
  std::printf("chain step checked on: %s\n", absl::StrJoin(tested, " ").c_str());
}

// Each neuron turns on at its threshold's probability, whatever its index: a
// hashed draw per (neuron, step) is uniform, also at small probabilities.
TEST(ChainStep, EveryNeuronTurnsOnAtItsProbability) {
  ChainThresholds t;
  const size_t n = 64 * 64;
  const double p[] = {0.001, 0.01, 0.1, 0.5, 0.9};
  for (std::vector<int32_t>* v :
       {&t.stay_on[0], &t.turn_on[0], &t.in_keep, &t.out_fire, &t.gate_only}) {
    v->assign(n, 0);
  }
  for (size_t i = 0; i < n; ++i) t.turn_on[0][i] = ChainThreshold(p[i % 5]);
  Random rng(3);
  std::vector<uint64_t> off(n / 64, 0), next(n / 64);
  double fired[5] = {}, count[5] = {};
  for (int s = 0; s < 2000; ++s) {
    const ChainKeys keys{.follow = static_cast<uint32_t>(rng.Next()),
                         .own = static_cast<uint32_t>(rng.Next())};
    std::vector<uint64_t> active(n / 64), gate(n / 64);
    std::vector<uint32_t> active_ids(n + kChainIdSlack), gate_ids(n + kChainIdSlack);
    StepToken(t, keys, false, false, off.data(),
              {.on = next.data(),
               .active = active.data(),
               .gate_only = gate.data(),
               .active_ids = active_ids.data(),
               .gate_only_ids = gate_ids.data()});
    for (size_t i = 0; i < n; ++i) {
      fired[i % 5] += (next[i / 64] >> (i % 64)) & 1;
      count[i % 5] += 1;
    }
  }
  for (int k = 0; k < 5; ++k) {
    const double expected = count[k] * p[k];
    EXPECT_NEAR(fired[k], expected, 5 * std::sqrt(expected * (1 - p[k]))) << "p " << p[k];
  }
}

}  // namespace
}  // namespace sparseflash
