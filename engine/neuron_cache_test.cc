#include "engine/neuron_cache.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/random.h"
#include "engine/neuron_key.h"
#include "gtest/gtest.h"

namespace sparseflash {
namespace {

std::unique_ptr<NeuronCache> Cache(const std::string& policy, int64_t capacity) {
  auto cache = NeuronCache::Create(
      {.key_space = 16, .capacity_bytes = capacity, .policy = policy, .entry_bytes = 1});
  EXPECT_TRUE(cache.ok()) << cache.status();
  return *std::move(cache);
}

struct Expectation {
  const char* policy;
  uint64_t hits;
  std::set<CacheKey> resident;  // after the sequence
};

// A cache of 3 one-byte neurons; hits and final contents worked out by hand.
class ThreeNeuronCache : public ::testing::TestWithParam<Expectation> {};

TEST_P(ThreeNeuronCache, ExactHitsAndContents) {
  const Expectation& e = GetParam();
  auto cache = Cache(e.policy, 3);
  for (CacheKey k : {1, 2, 3, 1, 4, 1, 2, 5, 1, 2, 3, 4}) cache->Access(k, 1);
  EXPECT_EQ(cache->stats().hits, e.hits);
  EXPECT_EQ(cache->stats().misses, 12 - e.hits);
  std::set<CacheKey> resident;
  for (CacheKey k = 1; k <= 5; ++k) {
    if (cache->Contains(k)) resident.insert(k);
  }
  EXPECT_EQ(resident, e.resident);
  EXPECT_EQ(cache->used_bytes(), 3);
}

INSTANTIATE_TEST_SUITE_P(Policies, ThreeNeuronCache,
                         ::testing::Values(Expectation{"lru", 4, {2, 3, 4}},
                                           Expectation{"fifo", 3, {3, 4, 5}},
                                           Expectation{"lfu", 4, {1, 2, 4}},
                                           Expectation{"sieve", 4, {1, 3, 4}},
                                           // S3-FIFO (small 1, ghost 2): 1 was hit once
                                           // while small, under the threshold of 2, so it
                                           // leaves to the ghost at t=4; re-inserted at
                                           // t=5 it goes to main and leaves the ghost;
                                           // 2 likewise at t=6; hits at t=3, 8, 9.
                                           Expectation{"s3fifo", 3, {1, 2, 4}}),
                         [](const auto& info) { return std::string(info.param.policy); });

// The future of the 12-access sequence above, one access per "token".
class SequenceOracle : public AccessOracle {
 public:
  explicit SequenceOracle(std::vector<CacheKey> seq) : seq_(std::move(seq)) {}
  void set_now(uint32_t t) { now_ = t; }
  uint32_t NextUse(CacheKey key) const override {
    for (uint32_t t = now_ + 1; t < seq_.size(); ++t) {
      if (seq_[t] == key) return t;
    }
    return UINT32_MAX;
  }

 private:
  std::vector<CacheKey> seq_;
  uint32_t now_ = 0;
};

// Worked by hand: evicts 3 at t=4 (next uses 1:5 2:6 3:10), 4 at t=7, then on
// ties (no future use) the largest key: 5 at t=10 and 3 at t=11.
TEST(NeuronCache, BeladyIsExactOnTheSequence) {
  const std::vector<CacheKey> seq = {1, 2, 3, 1, 4, 1, 2, 5, 1, 2, 3, 4};
  SequenceOracle oracle(seq);
  auto cache = NeuronCache::Create({.key_space = 16,
                                    .capacity_bytes = 3,
                                    .policy = "belady",
                                    .entry_bytes = 1,
                                    .oracle = &oracle});
  ASSERT_TRUE(cache.ok()) << cache.status();
  for (uint32_t t = 0; t < seq.size(); ++t) {
    oracle.set_now(t);
    (*cache)->Access(seq[t], 1);
  }
  EXPECT_EQ((*cache)->stats().hits, 5u);  // LRU gets 4
  for (CacheKey k : {1, 2, 4}) EXPECT_TRUE((*cache)->Contains(k)) << k;
}

// Against MIN worked out directly: on a miss, while the new key does not fit,
// the resident key used furthest in the future leaves (ties: the larger key).
// Keys of one to three bytes, so a miss often evicts two or three keys in a
// row, and hits between misses: every residency must match, access by access.
TEST(NeuronCache, BeladyEvictsAsMinDoesWithEntriesOfSeveralSizes) {
  constexpr int kKeys = 40, kAccesses = 3000, kCapacity = 12;
  Random random(7);
  std::vector<CacheKey> seq;
  for (int i = 0; i < kAccesses; ++i) {
    // Skewed: low keys come back often, so the cache holds a mix of ages.
    const auto k = static_cast<CacheKey>(random.Uniform() * random.Uniform() * kKeys);
    seq.push_back(k);
  }
  auto bytes_of = [](CacheKey k) { return static_cast<int64_t>(1 + k % 3); };
  SequenceOracle oracle(seq);
  auto made = NeuronCache::Create({.key_space = kKeys,
                                   .capacity_bytes = kCapacity,
                                   .policy = "belady",
                                   .entry_bytes = 2,
                                   .oracle = &oracle});
  ASSERT_TRUE(made.ok()) << made.status();
  NeuronCache& cache = **made;
  std::set<CacheKey> min;  // the reference's resident keys
  int64_t min_used = 0;
  uint64_t min_hits = 0, multi_evictions = 0;
  for (uint32_t t = 0; t < seq.size(); ++t) {
    oracle.set_now(t);
    const CacheKey key = seq[t];
    if (min.count(key) > 0) {
      ++min_hits;
    } else {
      int evicted = 0;
      while (min_used + bytes_of(key) > kCapacity) {
        auto victim = std::max_element(min.begin(), min.end(), [&](CacheKey a, CacheKey b) {
          return std::make_pair(oracle.NextUse(a), a) < std::make_pair(oracle.NextUse(b), b);
        });
        min_used -= bytes_of(*victim);
        min.erase(victim);
        ++evicted;
      }
      multi_evictions += evicted > 1;
      min.insert(key);
      min_used += bytes_of(key);
    }
    cache.Access(key, bytes_of(key));
    for (CacheKey k = 0; k < kKeys; ++k) {
      ASSERT_EQ(cache.Contains(k), min.count(k) > 0) << "key " << k << " after access " << t;
    }
  }
  EXPECT_EQ(cache.stats().hits, min_hits);
  EXPECT_GT(multi_evictions, 100u);  // the path of evictions in a row ran
  EXPECT_GT(min_hits, 1000u);
}

TEST(NeuronCache, BeladyNeedsAnOracle) {
  auto cache = NeuronCache::Create({.key_space = 4, .capacity_bytes = 4, .policy = "belady"});
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("oracle"), std::string::npos);
}

TEST(NeuronCache, StaticSetServesMissesWithoutCaching) {
  auto cache = Cache("static", 3);
  for (CacheKey k : {1, 2, 3}) EXPECT_TRUE(cache->Preload(k, 1));
  EXPECT_FALSE(cache->Preload(9, 1));  // full
  for (CacheKey k : {1, 2, 3, 1, 4, 1, 2, 5, 1, 2, 3, 4}) cache->Access(k, 1);
  EXPECT_EQ(cache->stats().hits, 9u);
  EXPECT_EQ(cache->stats().rejected, 3u);
  EXPECT_FALSE(cache->Contains(4));
  EXPECT_TRUE(cache->Contains(3));
}

// Window k = 1: a neuron stays while it was used by the previous token.
// Tokens {1,2,3} {1,4,1} {2,5,1} {2,3,4}: hits 2 + 1 + 1; expired 2 + 1 + 2.
// A window-sized budget behaves as LLM in a Flash's sliding window: keys of the
// last token stay, the current token's keys never make room.
TEST(NeuronCache, SlidingWindowKeepsThePreviousToken) {
  auto cache = NeuronCache::Create({.key_space = 16,
                                    .capacity_bytes = 3,
                                    .policy = "window",
                                    .entry_bytes = 1,
                                    .window_tokens = 1});
  ASSERT_TRUE(cache.ok());
  const std::vector<std::vector<CacheKey>> tokens = {{1, 2, 3}, {1, 4, 1}, {2, 5, 1}, {2, 3, 4}};
  for (const auto& token : tokens) {
    for (CacheKey k : token) (*cache)->Access(k, 1);
    (*cache)->OnTokenEnd();
  }
  EXPECT_EQ((*cache)->stats().hits, 4u);  // 1 and 1, then 1, then 2
  std::set<CacheKey> resident;
  for (CacheKey k = 0; k < 16; ++k) {
    if ((*cache)->Contains(k)) resident.insert(k);
  }
  EXPECT_EQ(resident, (std::set<CacheKey>{2, 3, 4}));
}

// Selective persistence: with room beyond the window, keys that left it stay
// (memory is not left unused), and the heaviest of them stay longest.
TEST(NeuronCache, SlidingWindowKeepsTheMostUsedKeysBeyondIt) {
  auto roomy = NeuronCache::Create({.key_space = 16,
                                    .capacity_bytes = 16,
                                    .policy = "window",
                                    .entry_bytes = 1,
                                    .window_tokens = 1});
  ASSERT_TRUE(roomy.ok());
  for (const auto& token :
       std::vector<std::vector<CacheKey>>{{1, 2, 3}, {1, 4, 1}, {2, 5, 1}, {2, 3, 4}}) {
    for (CacheKey k : token) (*roomy)->Access(k, 1);
    (*roomy)->OnTokenEnd();
  }
  EXPECT_EQ((*roomy)->stats().hits, 7u);
  EXPECT_EQ((*roomy)->used_bytes(), 5);

  auto run = [](std::vector<float> weight) {
    auto cache = NeuronCache::Create({.key_space = 16,
                                      .capacity_bytes = 3,
                                      .policy = "window",
                                      .entry_bytes = 1,
                                      .window_tokens = 0,
                                      .key_weight = std::move(weight)});
    for (const auto& token : std::vector<std::vector<CacheKey>>{{9, 1, 2}, {3, 4}, {5, 9}}) {
      for (CacheKey k : token) (*cache)->Access(k, 1);
      (*cache)->OnTokenEnd();
    }
    return (*cache)->stats().hits;
  };
  std::vector<float> hot9(16, 0.0f);
  hot9[9] = 10;
  EXPECT_EQ(run(hot9), 1u);  // 9 outlived 1 and 2
  EXPECT_EQ(run({}), 0u);    // oldest first: 9 went first
}

// A key hit after it left the window is no longer a victim: once the current
// token has used every cached key, a new key is not kept (it used to evict
// one the token had just used, as if the hit key still waited in the archive).
TEST(NeuronCache, SlidingWindowNeverEvictsAKeyTheTokenUsedAfterItReturned) {
  auto cache = NeuronCache::Create({.key_space = 16,
                                    .capacity_bytes = 2,
                                    .policy = "window",
                                    .entry_bytes = 1,
                                    .window_tokens = 0});
  ASSERT_TRUE(cache.ok());
  for (CacheKey k : {1, 2}) (*cache)->Access(k, 1);
  (*cache)->OnTokenEnd();  // 1 and 2 leave the window, still cached
  for (CacheKey k : {1, 2, 3}) (*cache)->Access(k, 1);
  EXPECT_EQ((*cache)->stats().hits, 2u);
  EXPECT_TRUE((*cache)->Contains(1));
  EXPECT_TRUE((*cache)->Contains(2));
  EXPECT_FALSE((*cache)->Contains(3)) << "3 evicted a key this token used";
}

// LFU (ties to the least recently used) against a brute-force reference.
TEST(NeuronCache, LfuMatchesBruteForce) {
  auto cache = Cache("lfu", 10);
  std::vector<uint64_t> count(16, 0), last(16, 0);
  std::set<CacheKey> resident;
  uint64_t hits = 0;
  uint64_t state = 12345;
  for (uint64_t t = 1; t <= 5000; ++t) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const CacheKey k = static_cast<CacheKey>((state >> 33) % 16);
    if (resident.count(k)) {
      ++hits;
      ++count[k];
    } else {
      if (resident.size() == 10) {
        CacheKey victim = *resident.begin();
        for (CacheKey r : resident) {
          if (count[r] < count[victim] || (count[r] == count[victim] && last[r] < last[victim])) {
            victim = r;
          }
        }
        resident.erase(victim);
      }
      resident.insert(k);
      count[k] = 1;
    }
    last[k] = t;
    cache->Access(k, 1);
  }
  EXPECT_EQ(cache->stats().hits, hits);
  for (CacheKey k = 0; k < 16; ++k) EXPECT_EQ(cache->Contains(k), resident.count(k) == 1) << k;
}

TEST(NeuronCache, ByteBudgetBoundsEntries) {
  auto cache = Cache("lru", 10);
  for (CacheKey k = 0; k < 5; ++k) cache->Access(k, 4);
  EXPECT_EQ(cache->entries(), 2u);
  EXPECT_EQ(cache->used_bytes(), 8);
  EXPECT_EQ(cache->stats().evictions, 3u);
}

// Entries of one size keep no per-key sizes; a second size must still be
// accounted exactly for the keys cached before it arrived.
TEST(NeuronCache, MixedEntrySizesKeepTheByteCountExact) {
  auto cache = Cache("lru", 12);
  for (CacheKey k = 0; k < 3; ++k) cache->Access(k, 4);  // 12 bytes of 4-byte entries
  cache->Access(3, 2);                                   // evicts key 0 (4 bytes): 10 bytes
  EXPECT_EQ(cache->used_bytes(), 10);
  cache->Access(4, 6);  // evicts key 1: 4 + 2 + 6 bytes
  EXPECT_EQ(cache->used_bytes(), 12);
  EXPECT_EQ(cache->entries(), 3u);
  cache->Access(5, 4);  // evicts key 2: 2 + 6 + 4 bytes
  EXPECT_EQ(cache->used_bytes(), 12);
  cache->Access(6, 4);  // evicts key 3 (2 bytes) and key 4 (6 bytes)
  EXPECT_EQ(cache->used_bytes(), 8);
  EXPECT_EQ(cache->entries(), 2u);
  EXPECT_TRUE(cache->Contains(5));
  EXPECT_TRUE(cache->Contains(6));
  EXPECT_FALSE(cache->Contains(4));
  EXPECT_EQ(cache->stats().evictions, 5u);
}

TEST(NeuronCache, TooLargeIsRejectedNotCached) {
  auto cache = Cache("lru", 3);
  EXPECT_FALSE(cache->Access(7, 4));
  EXPECT_FALSE(cache->Contains(7));
  EXPECT_EQ(cache->stats().rejected, 1u);
}

TEST(NeuronCache, AdmissionIsSeparateFromEviction) {
  struct EvenOnly : AdmissionPolicy {
    bool Admit(CacheKey key, int64_t) override { return key % 2 == 0; }
  };
  auto cache =
      NeuronCache::Create({.key_space = 4, .capacity_bytes = 4, .policy = "lru", .entry_bytes = 1},
                          std::make_unique<EvenOnly>());
  ASSERT_TRUE(cache.ok());
  for (CacheKey k : {1, 2, 1, 2}) (*cache)->Access(k, 1);
  EXPECT_EQ((*cache)->stats().hits, 1u);  // only key 2 was admitted
  EXPECT_FALSE((*cache)->Contains(1));
}

TEST(NeuronCache, UnknownPolicyListsKnownOnes) {
  auto cache = NeuronCache::Create({.key_space = 4, .capacity_bytes = 4, .policy = "clock"});
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("s3fifo"), std::string::npos);
}

TEST(NeuronCache, NeedsAKeySpace) { EXPECT_FALSE(NeuronCache::Create({.capacity_bytes = 4}).ok()); }

TEST(NeuronCache, RefusesMoreKeysThanItsPositionsCover) {
  absl::StatusOr<std::unique_ptr<NeuronCache>> cache =
      NeuronCache::Create({.key_space = kMaxKeySpace + 1, .capacity_bytes = 4});
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("key space"), std::string::npos) << cache.status();
}

TEST(NeuronIndexer, RoundTrips) {
  NeuronIndexer index(32, 8, 14336);
  EXPECT_EQ(index.key_space(), 32u * 8 * 14336);
  EXPECT_EQ(index.Key(31, 7, 14335), index.key_space() - 1);
  NeuronId id = index.Id(index.Key(31, 7, 14335));
  EXPECT_EQ(id.layer, 31u);
  EXPECT_EQ(id.expert, 7u);
  EXPECT_EQ(id.neuron, 14335u);
}

// Slot's division by multiplication against the division, at every slot's
// first and last key and at a spread of keys, for several widths (1 included).
TEST(NeuronIndexer, SlotIsTheKeyDividedByTheWidth) {
  for (uint32_t d_ffn : {1u, 3u, 64u, 1000u, 11008u, 14336u, 65521u}) {
    const NeuronIndexer index(32, 8, d_ffn);
    for (uint32_t slot = 0; slot < 32 * 8; ++slot) {
      ASSERT_EQ(index.Slot(slot * d_ffn), slot) << d_ffn;
      ASSERT_EQ(index.Slot(slot * d_ffn + d_ffn - 1), slot) << d_ffn;
    }
    for (uint32_t key = 0; key < index.key_space(); key += 7919) {
      ASSERT_EQ(index.Slot(key), key / d_ffn) << d_ffn << " " << key;
    }
  }
  // The identity holds for any 32-bit key.
  const NeuronIndexer wide(1, 1, 14336);
  EXPECT_EQ(wide.Slot(~uint32_t{0}), ~uint32_t{0} / 14336);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// A file read cyclically (as llama.cpp reads its weights every token), larger
// than the cache: strict LRU keeps evicting what comes next and hits nothing at
// any size; the refault-protected page cache keeps a stable part once it holds
// at least half of the file, and then hits about its share of the file.
TEST(NeuronCache, CyclicScanHitsOnlyWithRefaultProtection) {
  const uint32_t file = 100;
  auto hit_rate = [&](const std::string& policy, int64_t capacity) {
    auto cache = NeuronCache::Create(
        {.key_space = file, .capacity_bytes = capacity, .policy = policy, .entry_bytes = 1});
    EXPECT_TRUE(cache.ok()) << cache.status();
    for (int pass = 0; pass < 20; ++pass) {
      for (CacheKey k = 0; k < file; ++k) (*cache)->Access(k, 1);
    }
    return (*cache)->stats().hit_rate();
  };
  for (int64_t c : {30, 60, 90}) EXPECT_EQ(hit_rate("lru", c), 0.0) << c;
  EXPECT_LT(hit_rate("workingset", 30), 0.02);
  EXPECT_NEAR(hit_rate("workingset", 60), 0.5, 0.1);
  EXPECT_NEAR(hit_rate("workingset", 90), 0.75, 0.1);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// Per token: `warm` keys accessed every token (twice in the first, so they are
// re-hit before anything else arrives), then `fresh` new keys, each of which
// comes back the next token with probability 1/2 (the lag-1 reuse of neuron
// traces: a key's next access is a whole token's accesses later).
uint64_t TokenBatchedHits(const std::string& policy, int capacity, int warm, int fresh,
                          std::vector<CacheKey>* resident_warm) {
  auto cache = NeuronCache::Create(
      {.key_space = 1 << 20, .capacity_bytes = capacity, .policy = policy, .entry_bytes = 1});
  EXPECT_TRUE(cache.ok()) << cache.status();
  Random rng(5);
  std::vector<CacheKey> last, now;
  CacheKey next_key = warm;
  for (int t = 0; t < 400; ++t) {
    for (int pass = 0; pass < (t == 0 ? 2 : 1); ++pass) {
      for (CacheKey k = 0; k < static_cast<CacheKey>(warm); ++k) (*cache)->Access(k, 1);
    }
    now.clear();
    for (CacheKey k : last) {
      if (rng.Uniform() < 0.5) now.push_back(k);
    }
    while (static_cast<int>(now.size()) < fresh) now.push_back(next_key++);
    for (CacheKey k : now) (*cache)->Access(k, 1);
    last = now;
  }
  for (CacheKey k = 0; k < static_cast<CacheKey>(warm); ++k) {
    if ((*cache)->Contains(k)) resident_warm->push_back(k);
  }
  return (*cache)->stats().hits;
}

// Why LFU and SIEVE give identical results on neuron traces, generated or
// recorded: a token's misses outnumber the room the keys already re-hit leave,
// so every new key is evicted before its reuse a token later; no key re-hit
// since its insertion is ever evicted (LFU's counts never decay, and SIEVE's
// hand, always finding an unvisited new key ahead, never comes back to clear
// the old ones); and both evict the oldest key never re-hit. They part only when
// new keys live long enough to be re-hit and fill the cache.
TEST(NeuronCache, LfuAndSieveCoincideWhenATokensMissesOutgrowTheRoomLeft) {
  std::vector<CacheKey> lfu_warm, sieve_warm;
  const uint64_t lfu = TokenBatchedHits("lfu", 40, 20, 50, &lfu_warm);
  const uint64_t sieve = TokenBatchedHits("sieve", 40, 20, 50, &sieve_warm);
  EXPECT_EQ(lfu, sieve);
  EXPECT_EQ(lfu_warm.size(), 20u) << "a re-hit key was evicted";
  EXPECT_EQ(sieve_warm.size(), 20u) << "a re-hit key was evicted";
  EXPECT_LT(lfu - 400u * 20, 400u * 50 / 100)
      << "new keys hardly ever hit: they leave before their reuse";
  // Lag-1 reuse with room for a token's new keys coincides as well: the keys
  // re-hit once are dead a few tokens later and clog both alike.
  std::vector<CacheKey> unused;
  EXPECT_EQ(TokenBatchedHits("lfu", 40, 4, 12, &unused),
            TokenBatchedHits("sieve", 40, 4, 12, &unused));
  // They part when new keys are re-hit before they could be evicted (here each
  // access comes twice) and the keys in use change: LFU keeps the old ones,
  // which were hit more often; SIEVE's hand, finding every new key visited,
  // comes round and lets the old ones go.
  auto phase_change_hits = [](const std::string& policy) {
    auto cache = NeuronCache::Create(
        {.key_space = 64, .capacity_bytes = 40, .policy = policy, .entry_bytes = 1});
    for (int t = 0; t < 100; ++t) {
      const CacheKey first = t < 50 ? 0 : 30;
      for (CacheKey k = first; k < first + 30; ++k) {
        (*cache)->Access(k, 1);
        (*cache)->Access(k, 1);
      }
    }
    return (*cache)->stats().hits;
  };
  EXPECT_GT(phase_change_hits("sieve"), phase_change_hits("lfu") + 40 * 30);
}

}  // namespace
}  // namespace sparseflash
