#include "common/worker_pool.h"

#include <algorithm>

namespace sparseflash {

WorkerPool::WorkerPool(int threads) {
  for (int w = 1; w < std::max(1, threads); ++w) workers_.emplace_back([this, w] { Work(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::RunChunk(int chunk) {
  const int64_t t = threads();
  const int begin = static_cast<int>(n_ * chunk / t), end = static_cast<int>(n_ * (chunk + 1) / t);
  if (begin < end) (*fn_)(begin, end);
}

void WorkerPool::ForEachChunk(int n, const std::function<void(int, int)>& fn) {
  if (workers_.empty() || n <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    running_ = static_cast<int>(workers_.size());
    ++loop_;
  }
  wake_.notify_all();
  RunChunk(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return running_ == 0; });
  fn_ = nullptr;
}

void WorkerPool::Work(int worker) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || loop_ != seen; });
    if (stop_) return;
    seen = loop_;
    lock.unlock();
    RunChunk(worker);
    lock.lock();
    if (--running_ == 0) done_.notify_one();
  }
}

int HardwareThreads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

}  // namespace sparseflash
