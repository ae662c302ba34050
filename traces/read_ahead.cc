#include "traces/read_ahead.h"

#include <algorithm>

namespace sparseflash {

ReadAhead::ReadAhead(Producer produce, int ahead)
    : produce_(std::move(produce)), slots_(std::max(1, ahead) + 1) {
  producer_ = std::thread([this] { Produce(); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  released_cv_.notify_all();
  producer_.join();
}

absl::StatusOr<const TokenActivations*> ReadAhead::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  released_ = consumed_;  // the token handed out last is no longer read
  released_cv_.notify_one();
  produced_cv_.wait(lock, [&] { return produced_ > consumed_ || done_; });
  if (produced_ > consumed_) return &slots_[consumed_++ % slots_.size()];
  if (!error_.ok()) return error_;
  return nullptr;
}

void ReadAhead::Produce() {
  const uint64_t slots = slots_.size();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    released_cv_.wait(lock, [&] { return stop_ || produced_ - released_ < slots; });
    if (stop_) return;
    TokenActivations& slot = slots_[produced_ % slots];
    lock.unlock();
    absl::StatusOr<bool> more = produce_(&slot);
    lock.lock();
    if (more.ok() && *more) {
      ++produced_;
    } else {
      done_ = true;
      if (!more.ok()) error_ = more.status();
    }
    produced_cv_.notify_one();
    if (done_) return;
  }
}

}  // namespace sparseflash
