// The weight file as llama.cpp holds it: mapped read-only into the process and
// paged in by the kernel (page faults, its read-ahead, its page cache charged
// to the process's memory limit), with the same advice llama.cpp gives
// (POSIX_FADV_SEQUENTIAL). And the flash device of a run whose reads are those
// page faults: the plan's reads complete at once, since the kernel reads when
// compute touches the pages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/env.h"
#include "engine/real/completion_queue.h"

namespace sparseflash {

class MappedWeights {
 public:
  // Errors name the file (missing, empty, not mappable).
  static absl::StatusOr<std::unique_ptr<MappedWeights>> Open(const std::string& path);
  ~MappedWeights();
  MappedWeights(const MappedWeights&) = delete;
  MappedWeights& operator=(const MappedWeights&) = delete;

  const uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  MappedWeights(const uint8_t* data, int64_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  int64_t size_;
};

// Calls fn(first, count) for each chunk of at most `chunk` items that stripe
// `stripe` of `stripes` takes from a range of `range` items, in order: chunks
// stripe, stripe + stripes, ..., as llama.cpp's threads take a matrix's chunks
// of rows in turn, so that together they read it front to back. One stripe
// takes the whole range as one chunk.
template <typename Fn>
void ForEachStripeChunk(int64_t range, int64_t chunk, int stripe, int stripes, Fn&& fn) {
  if (stripes <= 1) {
    if (range > 0) fn(int64_t{0}, range);
    return;
  }
  for (int64_t at = stripe * chunk; at < range; at += chunk * stripes) {
    fn(at, std::min(chunk, range - at));
  }
}

// Completes every read at once, without I/O (posted to `queue`, as a real
// device's completion would be); counts no bytes: the kernel's counters
// (/proc/self/io) hold what the page faults read.
class PageFaultFlash : public FlashDevice {
 public:
  explicit PageFaultFlash(CompletionQueue* queue) : queue_(queue) {}
  void SetSink(CompletionSink* sink) override { sink_ = sink; }
  void Submit(const FlashRead& read) override;
  int64_t bytes_read() const override { return 0; }
  Nanos busy_time() const override { return Nanos(); }

 private:
  CompletionQueue* queue_;
  CompletionSink* sink_ = nullptr;
};

}  // namespace sparseflash
