// A fixed set of threads that run one loop at a time over contiguous chunks of
// an index range, the caller's thread taking the first chunk. For work whose
// parts are independent and whose result must not depend on the thread count
// (each index's work reads and writes only its own state). One loop at a time:
// ForEachChunk must not be called from two threads at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sparseflash {

class WorkerPool {
 public:
  // `threads` >= 1 counts the caller's; threads - 1 workers are started.
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls fn(begin, end) on up to threads() disjoint chunks covering [0, n),
  // each chunk on one thread; returns when every chunk is done.
  void ForEachChunk(int n, const std::function<void(int begin, int end)>& fn);

 private:
  void Work(int worker);
  void RunChunk(int chunk);

  // std::mutex, not absl::Mutex: ThreadSanitizer sees pthread locks.
  std::mutex mu_;
  std::condition_variable wake_, done_;
  // Guarded by mu_: the current loop, its number, how many workers still run it.
  const std::function<void(int, int)>* fn_ = nullptr;
  int n_ = 0;
  uint64_t loop_ = 0;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// The threads a CPU-bound job may use here: the hardware's, at least 1.
int HardwareThreads();

}  // namespace sparseflash
