#include "traces/read_ahead_generator.h"

#include <algorithm>

namespace sparseflash {

ReadAheadGenerator::ReadAheadGenerator(const ModelSpec& model, const GeneratorOptions& options,
                                       int ahead)
    : generator_(model, options), slots_(std::max(1, ahead) + 1) {
  producer_ = std::thread([this] { Produce(); });
}

ReadAheadGenerator::~ReadAheadGenerator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  released_cv_.notify_all();
  producer_.join();
}

const TokenActivations* ReadAheadGenerator::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  released_ = consumed_;  // the token handed out last is no longer read
  released_cv_.notify_one();
  produced_cv_.wait(lock, [&] { return produced_ > consumed_ || done_; });
  if (produced_ == consumed_) return nullptr;
  return &slots_[consumed_++ % slots_.size()];
}

void ReadAheadGenerator::Produce() {
  const uint64_t slots = slots_.size();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    released_cv_.wait(lock, [&] { return stop_ || produced_ - released_ < slots; });
    if (stop_) return;
    TokenActivations& slot = slots_[produced_ % slots];
    lock.unlock();
    const bool more = generator_.Next(&slot);
    lock.lock();
    if (more) {
      ++produced_;
    } else {
      done_ = true;
    }
    produced_cv_.notify_one();
    if (!more) return;
  }
}

}  // namespace sparseflash
