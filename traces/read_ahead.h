// Tokens made on a thread of their own, a few ahead of the reader, so that
// making the next ones (generating or decoding them) overlaps the reader's
// work on the current one. Yields exactly the tokens the producer makes, in
// order, then its end or its error. Next() is called from one thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "traces/activation.h"

namespace sparseflash {

class ReadAhead {
 public:
  // Fills the next token: true, or false after the last; an error ends the tokens.
  using Producer = std::function<absl::StatusOr<bool>(TokenActivations*)>;

  // Starts the producer's thread. `ahead`: tokens it may make before the
  // reader takes them (>= 1).
  explicit ReadAhead(Producer produce, int ahead = 2);
  // Stops the producer's thread (after the token it is making).
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next token, valid until the next call; nullptr after the last; the
  // producer's error once the tokens before it are taken (and on every call after).
  absl::StatusOr<const TokenActivations*> Next();

 private:
  void Produce();

  Producer produce_;
  // One slot more than `ahead`: the reader holds one while the producer fills the others.
  std::vector<TokenActivations> slots_;
  // std::mutex, not absl::Mutex: ThreadSanitizer sees pthread locks.
  std::mutex mu_;
  std::condition_variable produced_cv_, released_cv_;
  // Guarded by mu_: tokens made, tokens handed out, tokens handed back; how the tokens ended.
  uint64_t produced_ = 0, consumed_ = 0, released_ = 0;
  bool done_ = false, stop_ = false;
  absl::Status error_;
  std::thread producer_;  // last: started once everything above is
};

}  // namespace sparseflash
