#include "common/worker_pool.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

// Every index of every loop is run exactly once, for counts below, at and above
// the thread count, loop after loop on the same workers.
TEST(WorkerPool, RunsEveryIndexOnceInEachLoop) {
  for (int threads : {1, 2, 3}) {
    WorkerPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int n : {0, 1, 2, 5, 32}) {
      for (int loop = 0; loop < 3; ++loop) {
        std::vector<std::atomic<int>> runs(n);
        pool.ForEachChunk(n, [&](int begin, int end) {
          EXPECT_LT(begin, end);
          for (int i = begin; i < end; ++i) runs[i].fetch_add(1);
        });
        for (int i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << threads << " " << n << " " << i;
      }
    }
  }
}

// The chunks run on different threads when there are workers.
TEST(WorkerPool, SpreadsChunksOverItsThreads) {
  WorkerPool pool(2);
  std::mutex mu;
  std::set<std::thread::id> ids;
  pool.ForEachChunk(2, [&](int, int) {
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ids.size(), 2u);
}

}  // namespace
}  // namespace sparseflash
