// NeuronStream against its model's closed forms: each neuron's marginals, its
// chain's transitions and the co-firing of friend groups, counted over many
// tokens and compared in aggregate (SparseBernoulli's skips must not bend them).
#include "traces/neuron_stream.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "traces/skew.h"
#include "traces/sparse_bernoulli.h"

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

TEST(SparseBernoulli, EveryItemFiresAtItsProbability) {
  // Probabilities across every kind of class: scanned, skipped, tiny, never.
  std::vector<float> p;
  for (float x : {1.0f, 0.7f, 0.3f, 0.1f, 0.02f, 0.003f, 0.0f}) p.insert(p.end(), 200, x);
  SparseBernoulli draws(p);
  Random rng(3);
  std::vector<double> fired(p.size(), 0), visited(p.size(), 0);
  int64_t wrong_p = 0;  // visits whose p is not the item's own
  const int rounds = 20000;
  for (int r = 0; r < rounds; ++r) {
    draws.ForEachCandidate(rng, [&](uint32_t id, float u, float p_id) {
      wrong_p += p_id != p[id];
      EXPECT_LT(u, SparseBernoulli::ClassBound(p[id]));
      visited[id] += 1;
      fired[id] += u < p[id];
    });
  }
  EXPECT_EQ(wrong_p, 0);
  for (size_t block = 0; block < p.size(); block += 200) {
    double sum = 0, seen = 0;
    for (size_t i = block; i < block + 200; ++i) {
      sum += fired[i];
      seen += visited[i];
    }
    const double expected = 200.0 * rounds * p[block];
    EXPECT_NEAR(sum, expected, 5 * std::sqrt(expected + 1) + 1) << "p = " << p[block];
    // Items are visited only as often as their class bound says, not every round.
    EXPECT_NEAR(seen, 200.0 * rounds * SparseBernoulli::ClassBound(p[block]),
                0.02 * 200 * rounds + 1)
        << "p = " << p[block];
  }
}

}  // namespace
TEST(SparseBernoulli, PrefetchedVisitsAreTheSameCandidatesAndDraws) {
  std::vector<float> p;
  for (float x : {0.9f, 0.2f, 0.05f, 0.004f, 0.0f, 0.0003f}) p.insert(p.end(), 500, x);
  SparseBernoulli draws(p);
  Random plain(11), prefetched(11);
  struct Visit {
    uint32_t id;
    float u, p;
    bool operator==(const Visit&) const = default;
  };
  std::vector<Visit> a, b;
  std::vector<uint32_t> hinted;
  for (int round = 0; round < 50; ++round) {
    draws.ForEachCandidate(
        plain,
        [&](uint32_t id, float u, float q) {
          a.push_back({id, u, q});
        },
        [&](uint32_t id, int) { hinted.push_back(id); });
    draws.ForEachCandidatePrefetched(prefetched, [&](uint32_t id, float u, float q) {
      b.push_back({id, u, q});
    });
    ASSERT_EQ(a.size(), b.size()) << "round " << round;
    ASSERT_TRUE(a == b) << "round " << round;
    EXPECT_EQ(plain.Next(), prefetched.Next()) << "the streams drew differently";
  }
  // Every candidate's data is hinted, and no id outside the items.
  EXPECT_GE(hinted.size(), a.size());
  for (uint32_t id : hinted) ASSERT_LT(id, p.size());
}

}  // namespace sparseflash
