// Each eviction policy against a reference written from its definition (every
// eviction names the same key) and the bound on its state.
#include <algorithm>
#include <iterator>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/random.h"
#include "engine/eviction_policy.h"
#include "engine/policies/lru.h"
#include "gtest/gtest.h"

namespace sparseflash {
namespace {

// Drives a policy as a cache of `capacity` keys does: a hit refreshes the key;
// a miss evicts when the cache is full and inserts, unless the policy
// withholds its victim (then Access returns false: the key is not cached).
struct PolicyAsCache {
  EvictionPolicy& policy;
  size_t capacity;
  std::vector<uint8_t> resident;
  size_t size = 0;

  PolicyAsCache(EvictionPolicy& p, size_t capacity_keys, uint32_t key_space)
      : policy(p), capacity(capacity_keys), resident(key_space, 0) {}
  bool Access(CacheKey k) {
    if (resident[k]) {
      policy.OnHit(k);
      return true;
    }
    if (size == capacity) {
      if (!policy.HasVictim()) return false;
      resident[policy.Evict()] = 0;
      --size;
    }
    policy.OnInsert(k);
    resident[k] = 1;
    ++size;
    return true;
  }
};

// LRU's access log stays within a small multiple of the cache's entries, at a
// low hit rate (misses consume its front) as at a high one (re-references pile
// up behind the head), and inside the room reserved for the cache's capacity:
// it never grows (a copy, and fresh pages on every run of a sweep).
TEST(LruPolicy, AccessLogStaysBoundedByTheCacheNotTheStream) {
  for (uint32_t key_space : {100'000u, 1'500u}) {  // ~1 % and ~67 % hits
    constexpr size_t kCapacity = 1000;
    LruPolicy lru(key_space, kCapacity);
    const size_t room = lru.log_room();
    PolicyAsCache cache(lru, kCapacity, key_space);
    size_t peak = 0;
    uint64_t x = 12345;
    for (int i = 0; i < 2'000'000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      ASSERT_TRUE(cache.Access(static_cast<CacheKey>((x >> 33) % key_space)));
      peak = std::max(peak, lru.log_entries());
    }
    EXPECT_LE(peak, 4 * kCapacity + 4096) << "keys " << key_space;
    EXPECT_LE(room, 8 * kCapacity + 8192) << "keys " << key_space;
    EXPECT_EQ(lru.log_room(), room) << "keys " << key_space << ": the log outgrew its room";
  }
}

// The access log against a list kept in recency order: every eviction names
// the same key, through many compactions and with the front consuming the log.
TEST(LruPolicy, EvictsExactlyTheLeastRecentlyUsedKey) {
  for (const auto& [keys, capacity] :
       {std::pair<uint32_t, size_t>{200, 50}, {5'000, 3'000}, {70'000, 2'000}}) {
    LruPolicy lru(keys, capacity);
    std::list<CacheKey> order;  // least recent first
    std::vector<std::list<CacheKey>::iterator> where(keys, order.end());
    Random rng(keys);
    for (int i = 0; i < 400'000; ++i) {
      // Half the accesses among a tenth of the keys, so hits and misses both come.
      const CacheKey k =
          static_cast<CacheKey>(rng.Uniform() < 0.5 ? rng.Below(keys / 10) : rng.Below(keys));
      if (where[k] != order.end()) {
        order.erase(where[k]);
        where[k] = order.insert(order.end(), k);
        lru.OnHit(k);
        continue;
      }
      if (order.size() == capacity) {
        const CacheKey victim = lru.Evict();
        ASSERT_EQ(victim, order.front()) << "access " << i << ", " << keys << " keys";
        where[victim] = order.end();
        order.pop_front();
      }
      where[k] = order.insert(order.end(), k);
      lru.OnInsert(k);
    }
  }
}

// SIEVE against the paper's own description, a list with a hand (newest at the
// front; the hand walks from the oldest towards the front and wraps to the
// oldest): every eviction names the same key, through many of the array
// queue's squeezes and hand wraps.
TEST(SievePolicy, EvictsAsTheListWithAHandDoes) {
  for (const auto& [keys, capacity] :
       {std::pair<uint32_t, size_t>{200, 50}, {5'000, 3'000}, {70'000, 2'000}}) {
    absl::StatusOr<std::unique_ptr<EvictionPolicy>> sieve =
        MakeEvictionPolicy("sieve", {.key_space = keys});
    ASSERT_TRUE(sieve.ok());
    std::list<CacheKey> queue;  // newest first
    std::vector<std::list<CacheKey>::iterator> where(keys, queue.end());
    std::vector<bool> visited(keys, false);
    std::list<CacheKey>::iterator hand = queue.end();  // end: start at the oldest
    Random rng(keys + 1);
    for (int i = 0; i < 400'000; ++i) {
      const CacheKey k =
          static_cast<CacheKey>(rng.Uniform() < 0.5 ? rng.Below(keys / 10) : rng.Below(keys));
      if (where[k] != queue.end()) {
        visited[k] = true;
        (*sieve)->OnHit(k);
        continue;
      }
      if (queue.size() == capacity) {
        auto at = hand != queue.end() ? hand : std::prev(queue.end());
        while (visited[*at]) {
          visited[*at] = false;
          at = at == queue.begin() ? std::prev(queue.end()) : std::prev(at);
        }
        hand = at == queue.begin() ? queue.end() : std::prev(at);
        const CacheKey victim = (*sieve)->Evict();
        ASSERT_EQ(victim, *at) << "access " << i << ", " << keys << " keys";
        where[victim] = queue.end();
        queue.erase(at);
      }
      queue.push_front(k);
      where[k] = queue.begin();
      visited[k] = false;
      (*sieve)->OnInsert(k);
    }
  }
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// The cache asks HasVictim() only of a policy that says it may withhold one
// (may_withhold_victims): every other policy always has a victim when full.
TEST(EvictionPolicies, OnlyAPolicyThatSaysSoWithholdsVictims) {
  constexpr uint32_t kKeys = 2'000;
  constexpr size_t kCapacity = 100;
  for (const std::string& name : EvictionPolicyNames()) {
    if (name == "belady") continue;  // needs an oracle of the stream
    absl::StatusOr<std::unique_ptr<EvictionPolicy>> made = MakeEvictionPolicy(
        name, {.key_space = kKeys, .capacity_entries = kCapacity, .capacity_bytes = kCapacity});
    ASSERT_TRUE(made.ok()) << name;
    EvictionPolicy& p = **made;
    if (!p.admits_misses()) continue;  // never evicts for a miss
    PolicyAsCache cache(p, kCapacity, kKeys);
    int withheld = 0;
    Random rng(7);
    for (int i = 0; i < 50'000; ++i) {
      if (!cache.Access(static_cast<CacheKey>(rng.Below(i % 3 == 0 ? kKeys : kKeys / 20)))) {
        ++withheld;
      }
      if (i % 400 == 399) {  // a token touches more keys than the cache holds
        p.OnTokenEnd();
        for (CacheKey gone; p.Expire(&gone); --cache.size) cache.resident[gone] = 0;
      }
    }
    if (!p.may_withhold_victims()) {
      EXPECT_EQ(withheld, 0) << name;
    }
    if (name == "window") {
      EXPECT_GT(withheld, 0) << "the test never reached a withheld victim";
    }
  }
}

}  // namespace
}  // namespace sparseflash
