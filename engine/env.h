// The engine's narrow window on the world (DESIGN.md "one engine, two worlds"):
// a Clock, a FlashDevice and a ComputeBackend. Both are completion-based: Submit()
// never blocks and the result comes back through the CompletionSink the engine
// registers. The simulator (sim/) and the real backends implement these; nothing
// in engine/ knows which world it runs in.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/time.h"

namespace sparseflash {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos Now() const = 0;
};

// `count` reads of `request_bytes` each, issued together. At most `max_in_flight`
// of them are outstanding at once (1 for a thread blocked on a page fault, the
// submitter's depth for asynchronous I/O).
// Where a real device puts a batch: one file offset per read, read i landing at
// buffer + i * request_bytes (aligned for O_DIRECT). The simulator ignores it.
struct ReadTarget {
  std::vector<int64_t> offsets;
  uint8_t* buffer = nullptr;
};

struct FlashRead {
  uint64_t tag = 0;
  int64_t request_bytes = 0;
  int32_t count = 1;
  int32_t max_in_flight = 1;
  bool sequential = false;
  int64_t range_bytes = 0;                   // address range the reads fall in; 0 = large
  std::shared_ptr<const ReadTarget> target;  // real devices only
  // The bytes land in the strategy's cache (page-cache windows), not in a read
  // buffer beside it (MemoryPlan::reads_fill_cache).
  bool fills_cache = false;
  // The kernel reads it, faulting a mapped file in (its read-ahead), rather
  // than the engine with O_DIRECT: priced from the profile's page-cache points.
  bool page_cache = false;
  int32_t layer = -1;  // for timelines: the layer it serves; -1 = none
};

enum class ComputeKind : uint8_t {
  kAttention,
  kPredictor,
  kFfn,
  kMemoryManagement,
  kOther,
};
const char* ComputeKindName(ComputeKind kind);

enum class ComputeUnit : uint8_t { kCpu, kNpu };

// One unit of compute: a neuron cluster of a matrix, an attention block, a
// predictor, a dense layer slice. Bandwidth-bound work is described by the bytes
// it streams from DRAM; compute-bound work (prefill) by its operations.
struct ComputeTask {
  uint64_t tag = 0;
  ComputeKind kind = ComputeKind::kOther;
  ComputeUnit unit = ComputeUnit::kCpu;
  int64_t bytes = 0;
  double ops = 0;
  // The real work (real backends run it on a worker; the simulator charges time).
  std::shared_ptr<const std::function<void()>> work;
  int32_t layer = -1;  // for timelines: the layer it serves; -1 = none
  int8_t cached = -1;  // for timelines: FFN neurons found in memory (1) or read (0); -1 = n/a
  // Where the task's weights start in the model file, for strategies that scan
  // it in file order (llamacpp, whose real run can compute over the mapped
  // file); -1 = anywhere.
  int64_t file_offset = -1;
  // Threads sharing a range of the file as llama.cpp's do (chunks of 64 rows
  // taken in turn, so their page faults are one sequential stream): the range
  // is bytes x stripes from file_offset, and this task computes its chunks
  // stripe, stripe + stripes, ...; 1 stripe: all of it.
  int16_t stripe = 0;
  int16_t stripes = 1;
  // FFN work over whole matrices in order (dense FFN), not over scattered
  // neuron rows. Attention, predictors and the head always stream in order.
  bool in_order = false;
};

// Whether a task streams its weights in matrix order (consecutive rows), which
// a core reads faster than scattered neuron rows.
inline bool StreamsInOrder(const ComputeTask& task) {
  return task.kind != ComputeKind::kFfn || task.in_order;
}

class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  virtual void OnReadDone(uint64_t tag, bool ok) = 0;
  virtual void OnComputeDone(uint64_t tag) = 0;
};

class FlashDevice {
 public:
  virtual ~FlashDevice() = default;
  virtual void SetSink(CompletionSink* sink) = 0;
  virtual void Submit(const FlashRead& read) = 0;
  virtual int64_t alignment() const { return 4096; }
  // Bytes transferred and time the device was busy (at least one read in flight).
  virtual int64_t bytes_read() const = 0;
  virtual Nanos busy_time() const = 0;
  // Reads integrated over time (a read-nanosecond per nanosecond), each over
  // busy_time() a mean depth. Offered: the reads the batches let the device
  // have (each batch its limit, or the reads it has left; at most the device's
  // queue), the depth a profile's point is measured at. Held: the reads the
  // device really had, fewer where its submitter falls behind the completions
  // (a simulated device, whose profile holds the submitter's pace, holds what
  // it is offered). Zero where the device does not know (page faults).
  virtual Nanos offered_time() const { return Nanos(); }
  virtual Nanos held_time() const { return offered_time(); }
};

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;
  virtual void SetSink(CompletionSink* sink) = 0;
  virtual void Submit(const ComputeTask& task) = 0;
  virtual int cpu_workers() const = 0;
  virtual bool has_npu() const = 0;
};

struct Env {
  Clock* clock = nullptr;
  FlashDevice* flash = nullptr;
  ComputeBackend* compute = nullptr;
};

}  // namespace sparseflash
