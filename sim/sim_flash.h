// Simulated flash device: reads share the device. Batches of one request size
// (and order) share their size's throughput from the profile's curve at the
// queue depth they hold together, each in proportion to the reads it has
// outstanding (at most its max_in_flight); the queue's slots (the device's
// command queue) are split among sizes by reads in flight. Sizes mixed in the
// queue each keep their own curve, and together stay under the most bytes/s
// and reads/s any measured point reached: small random reads are bound by
// operations and large ones by bytes, so a mix costs each little. Rates are recomputed
// whenever a batch arrives or finishes (processor sharing), so concurrent
// streams slow each other down as on a real device. A profile's per-batch
// submit overhead (a calibrated host's submitter hand-off) delays each batch
// before the device takes it, and a batch limited to k reads in flight pays the
// profile's resubmission gap once per read beyond the first k, in each slot's
// turn (charged after the batch's bytes, when the device has moved on).
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "devices/device_profile.h"
#include "engine/env.h"
#include "sim/event_queue.h"
#include "sim/flash_curve.h"
#include "sim/timeline.h"

namespace sparseflash {

class SimFlashDevice : public FlashDevice {
 public:
  // `core_class`: the core issuing the reads ("" = the profile's first class);
  // `issuers`: threads issuing at once, which costs the profile's
  // multi_issuer_penalty x (1 - 1/issuers) of the bandwidth (shape [estimate]).
  SimFlashDevice(EventQueue* queue, const DeviceProfile& profile, std::string core_class,
                 Timeline* timeline = nullptr, int issuers = 1);

  void SetSink(CompletionSink* sink) override { sink_ = sink; }
  void Submit(const FlashRead& read) override;
  int64_t bytes_read() const override { return bytes_read_; }
  Nanos busy_time() const override { return busy_; }
  Nanos offered_time() const override { return Nanos{static_cast<int64_t>(offered_ns_)}; }

 private:
  // A batch's reads in flight now, and the reads left at which that changes
  // next (0: not before it ends).
  struct Tail {
    double depth = 1;
    double next_stage = -1;  // -1: not worked out yet
  };
  struct Batch {
    FlashRead read;
    double remaining;       // bytes
    double rate = 0;        // bytes/s
    double top = 1;         // its first depth: its limit, or all its reads if fewer
    Tail tail;              // TailOf(*this), kept until the reads left reach its next stage
    int depth = 0;          // its class's depth at the last reschedule
    double depth_rate = 0;  // the curve's throughput at `depth`
    double full_rate = 0;   // the curve's throughput with every slot (0: not looked up)
    uint32_t shape = 0;     // its read shape's row of rates_by_depth_
    Nanos submitted;
  };
  void Advance();
  void Reschedule();
  void Start(const FlashRead& read);  // the device takes the batch
  void OnEvent(uint64_t generation);
  // The row of rates_by_depth_ for `read`'s shape, added when new.
  uint32_t ShapeOf(const FlashRead& read);
  // The curve's throughput for batch `b`'s shape at `depth` (1 to the command
  // queue's depth), looked up once per shape and depth.
  double Throughput(const Batch& b, int depth);
  static double ReadsLeft(const Batch& b);
  // False while more than a whole read beyond the tail's next stage is left,
  // when ReadsLeft(b) <= next_stage cannot hold (skips its division).
  static bool StageMayEnd(const Batch& b) {
    return b.remaining <= (b.tail.next_stage + 1) * b.read.request_bytes;
  }
  static Tail TailOf(const Batch& b);

  EventQueue* queue_;
  FlashCurve curve_;
  int command_queue_depth_;
  double issuer_factor_ = 1;
  double ceiling_bytes_per_s_ = 0;  // the most any measured point reached
  double ceiling_reads_per_s_ = 0;
  std::string core_class_;
  Timeline* timeline_;
  int lane_ = 0;
  Nanos submit_overhead_;   // the profile's per-batch hand-off, charged before the device starts
  double resubmit_gap_ns_;  // the profile's turnaround between reads of one slot
  CompletionSink* sink_ = nullptr;
  std::vector<Batch> active_;
  std::vector<Batch> done_scratch_;  // OnEvent's finished batches, reused
  std::vector<double> weight_scratch_;
  // Reschedule's classes of reads (request size and order) and each batch's class.
  struct ReadClass {
    int64_t request_bytes;
    bool sequential;
    double weight;  // the reads in flight the class's batches hold
  };
  std::vector<ReadClass> class_scratch_;
  std::vector<uint32_t> class_of_scratch_;
  Nanos last_update_;
  uint64_t generation_ = 0;
  int64_t bytes_read_ = 0;
  Nanos busy_;
  double slots_offered_ = 0;  // reads the batches offer now (at most the command queue)
  double offered_ns_ = 0;     // slots_offered_ integrated over time
  // Read shapes (request bytes, sequential, range, page cache) seen so far,
  // each with its curve's throughput by depth (0: not looked up yet).
  absl::flat_hash_map<std::tuple<int64_t, bool, int64_t, bool>, uint32_t> shape_index_;
  std::vector<std::vector<double>> rates_by_depth_;
};

}  // namespace sparseflash
