// The real world behind the engine's Env: a monotonic clock, flash devices that
// read a file with O_DIRECT (io_uring with one submitter thread, or a pread
// thread pool where io_uring cannot be set up), a fault-injecting wrapper for
// tests, and a thread-pool compute backend that runs each task's work. Devices
// and workers post completions to a CompletionQueue; RunOnThisThread() drives
// the engine from it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/env.h"
#include "engine/real/completion_queue.h"

namespace sparseflash {

class RealClock : public Clock {
 public:
  RealClock();
  Nanos Now() const override;

 private:
  int64_t start_ns_;
};

// Bytes and busy time shared by the real devices (updated from their threads).
class DeviceCounters {
 public:
  // `queue`: the most reads the device takes at once.
  explicit DeviceCounters(int queue) : offered_cap_(queue) {}
  void Begin(int64_t now_ns);  // a batch starts
  void End(int64_t now_ns, int64_t bytes);
  // `delta` reads went to the device (positive) or came back (negative).
  void Reads(int64_t now_ns, int delta);
  // The batches let the device have `delta` reads more (or fewer), of which it
  // takes at most its queue at once.
  void Offered(int64_t now_ns, int delta);
  int64_t bytes() const { return bytes_.load(); }
  Nanos busy() const;
  Nanos held_time() const;     // reads at the device, integrated over time
  Nanos offered_time() const;  // reads offered to it (at most its queue), integrated

 private:
  mutable std::mutex mu_;
  int in_flight_ = 0;  // batches
  int64_t since_ns_ = 0;
  int64_t busy_ns_ = 0;
  int reads_ = 0;  // reads at the device
  int64_t reads_since_ns_ = 0;
  double read_ns_ = 0;
  int offered_ = 0;  // reads the batches let the device have, before its queue's limit
  const int offered_cap_;
  int64_t offered_since_ns_ = 0;
  double offered_ns_ = 0;
  std::atomic<int64_t> bytes_{0};
};

struct FlashOpenOptions {
  std::string path;
  bool direct = true;       // O_DIRECT; false only where the file system refuses it
  int queue_depth = 32;     // io_uring entries / pread threads
  std::string io = "auto";  // "uring", "pread" or "auto" (uring, else pread with a notice)
  // Tests: behave as if the system refused io_uring_setup (as Android's seccomp
  // policy does for apps).
  bool deny_uring_for_test = false;
};

// Whether this process may use io_uring: probed once, with a SIGSYS handler in
// place, since a seccomp filter (Android apps) answers io_uring_setup with SIGSYS
// instead of an error. "" when allowed, else why not.
std::string UringUnavailableReason();

// Opens the weight file and the device; `notice` gets one line when a fallback
// was taken (no O_DIRECT, no io_uring).
absl::StatusOr<std::unique_ptr<FlashDevice>> OpenFlashDevice(const FlashOpenOptions& options,
                                                             CompletionQueue* queue,
                                                             std::string* notice);

// What FaultInjectingFlashDevice does to its chosen batch.
enum class FlashFault {
  kError,      // the batch completes with an I/O error (as EIO would)
  kShortRead,  // its first read is sent past the end of the file: the device sees a short read
  kStall,      // its completion never arrives (a hung device)
};

// Injects `fault` into the `nth` batch (1-based, in submission order); passes
// the rest through. For tests of how the engine ends a run on a bad device.
class FaultInjectingFlashDevice : public FlashDevice, public CompletionSink {
 public:
  FaultInjectingFlashDevice(std::unique_ptr<FlashDevice> inner, int nth,
                            FlashFault fault = FlashFault::kError, int64_t file_bytes = 0)
      : inner_(std::move(inner)), nth_(nth), fault_(fault), file_bytes_(file_bytes) {}
  void SetSink(CompletionSink* sink) override {
    sink_ = sink;
    inner_->SetSink(this);
  }
  void Submit(const FlashRead& read) override;
  int64_t bytes_read() const override { return inner_->bytes_read(); }
  Nanos busy_time() const override { return inner_->busy_time(); }
  Nanos offered_time() const override { return inner_->offered_time(); }
  Nanos held_time() const override { return inner_->held_time(); }
  void OnReadDone(uint64_t tag, bool ok) override;
  void OnComputeDone(uint64_t tag) override {}

 private:
  std::unique_ptr<FlashDevice> inner_;
  CompletionSink* sink_ = nullptr;
  int nth_;
  FlashFault fault_;
  int64_t file_bytes_;
  int submitted_ = 0;
  uint64_t chosen_tag_ = ~uint64_t{0};
};

// Records every batch submitted (tag, size, count, first offset) and its outcome.
class TracingFlashDevice : public FlashDevice, public CompletionSink {
 public:
  struct Entry {
    uint64_t tag;
    int64_t request_bytes;
    int32_t count;
    int64_t first_offset;  // -1 without a target
    bool done = false, ok = false;
  };
  explicit TracingFlashDevice(std::unique_ptr<FlashDevice> inner) : inner_(std::move(inner)) {}
  void SetSink(CompletionSink* sink) override {
    sink_ = sink;
    inner_->SetSink(this);
  }
  void Submit(const FlashRead& read) override {
    const int64_t first =
        read.target && !read.target->offsets.empty() ? read.target->offsets[0] : -1;
    entries_.push_back({read.tag, read.request_bytes, read.count, first});
    inner_->Submit(read);
  }
  int64_t bytes_read() const override { return inner_->bytes_read(); }
  Nanos busy_time() const override { return inner_->busy_time(); }
  Nanos offered_time() const override { return inner_->offered_time(); }
  Nanos held_time() const override { return inner_->held_time(); }
  void OnReadDone(uint64_t tag, bool ok) override {
    for (Entry& e : entries_) {
      if (e.tag == tag && !e.done) {
        e.done = true;
        e.ok = ok;
        break;
      }
    }
    sink_->OnReadDone(tag, ok);
  }
  void OnComputeDone(uint64_t) override {}
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::unique_ptr<FlashDevice> inner_;
  CompletionSink* sink_ = nullptr;
  std::vector<Entry> entries_;
};

// N worker threads running each task's work.
class ThreadPoolCompute : public ComputeBackend {
 public:
  ThreadPoolCompute(int threads, CompletionQueue* queue);
  ~ThreadPoolCompute() override;
  void SetSink(CompletionSink* sink) override { sink_ = sink; }
  void Submit(const ComputeTask& task) override;
  int cpu_workers() const override { return static_cast<int>(workers_.size()); }
  bool has_npu() const override { return false; }

 private:
  void Loop();

  CompletionQueue* queue_;
  CompletionSink* sink_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ComputeTask> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Starts the engine and runs completions on this thread until it finishes. When
// nothing completes for `stall_timeout` (a hung device or worker), the run ends
// with DeadlineExceeded.
absl::Status RunOnThisThread(Engine& engine, CompletionQueue& queue,
                             Nanos stall_timeout = Seconds(60));

// Bytes this process has read from storage (/proc/self/io read_bytes), or -1.
int64_t ProcessStorageReadBytes();

}  // namespace sparseflash
