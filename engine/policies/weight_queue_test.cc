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

}  // namespace
}  // namespace sparseflash
