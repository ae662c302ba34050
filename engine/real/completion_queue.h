// Hands completions from device and worker threads to the engine's thread: real
// devices post a closure, the driver loop runs it where the engine lives, so the
// engine stays single-threaded. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace sparseflash {

class CompletionQueue {
 public:
  void Post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(std::move(fn));
    }
    cv_.notify_one();
  }
  // Blocks until a completion is posted and returns it.
  std::function<void()> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !items_.empty(); });
    std::function<void()> fn = std::move(items_.front());
    items_.pop_front();
    return fn;
  }
  // Blocks until a completion is posted and returns it, or returns an empty
  // function when none arrives within `timeout`.
  std::function<void()> PopFor(std::chrono::nanoseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return !items_.empty(); })) return {};
    std::function<void()> fn = std::move(items_.front());
    items_.pop_front();
    return fn;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> items_;
};

}  // namespace sparseflash
