#include "engine/policies/weight_queue.h"

#include <set>
#include <tuple>

#include "common/random.h"
#include "gtest/gtest.h"

namespace sparseflash {
namespace {

// Against a reference ordered set of (weight, push order, key): random pushes,
// removals and pops over keys with many equal weights, some beyond the
// weight vector (weight 0), some negative zeros.
TEST(WeightQueue, PopsInTheOrderOfAHeapOfWeightAndPushOrder) {
  const uint32_t keys = 500;
  std::vector<float> weight(400);
  Random rng(11);
  for (float& w : weight) w = static_cast<float>(rng.Below(20)) - 5.0f;
  weight[7] = -0.0f;
  WeightQueue queue(keys, weight);
  std::set<std::tuple<float, uint64_t, uint32_t>> reference;
  std::vector<uint64_t> pushed_at(keys, 0);
  uint64_t clock = 0;
  auto w = [&](uint32_t k) { return k < weight.size() ? weight[k] : 0.0f; };
  for (int step = 0; step < 200000; ++step) {
    const uint32_t key = rng.Below(keys);
    const uint32_t op = rng.Below(3);
    if (op == 0 && !queue.contains(key)) {
      queue.Push(key);
      pushed_at[key] = ++clock;
      reference.insert({w(key), clock, key});
    } else if (op == 1 && queue.contains(key)) {
      queue.Remove(key);
      reference.erase({w(key), pushed_at[key], key});
    } else if (op == 2 && !queue.empty()) {
      const uint32_t popped = queue.Pop();
      ASSERT_EQ(popped, std::get<2>(*reference.begin())) << "step " << step;
      reference.erase(reference.begin());
    }
    ASSERT_EQ(queue.size(), static_cast<int64_t>(reference.size()));
  }
}

// Keys pushed and removed over and over, never popped: the logs keep only a
// small multiple of the queued keys, and a FIFO that empties forgets its log.
TEST(WeightQueue, LogsStayBoundedByTheQueuedKeys) {
  const uint32_t keys = 1000;
  std::vector<float> weight(keys);
  for (uint32_t k = 0; k < keys; ++k) weight[k] = static_cast<float>(k % 3);
  WeightQueue queue(keys, weight);
  for (uint32_t k = 0; k < 100; ++k) queue.Push(k);
  for (int round = 0; round < 1000; ++round) {
    for (uint32_t k = 100; k < keys; ++k) queue.Push(k);
    for (uint32_t k = 100; k < keys; ++k) queue.Remove(k);
    ASSERT_LE(queue.log_entries(), 3 * (100 + keys) + 3 * 64) << "round " << round;
  }
  EXPECT_EQ(queue.size(), 100);
  for (uint32_t k = 0; k < 100; ++k) queue.Remove(k);
  EXPECT_EQ(queue.log_entries(), 0u);
}

}  // namespace
}  // namespace sparseflash
