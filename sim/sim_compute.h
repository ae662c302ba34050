// Simulated compute: one worker per compute thread, pinned to the fastest free
// cores of the profile (the I/O submitter's core excluded), plus the NPU when
// the strategy uses it. Tasks wait in one FIFO per unit and run on the first
// free worker. A bandwidth-bound task runs at its core's GEMV rate, limited by
// its share of the DRAM ceiling among the busy workers (CPU ceiling, NPU
// ceiling, and the combined ceiling when both are busy), fixed when it starts;
// memory management runs at the DRAM rewrite rate; prefill operations at the
// core's (or NPU's) dense rate, plus the NPU's launch overhead. A hand-off to
// a CPU worker that waited past its core's idle window, and a completion to an
// engine thread that waited that long, cost the core's idle wake-up more.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "devices/device_profile.h"
#include "engine/env.h"
#include "engine/strategy.h"
#include "sim/energy.h"
#include "sim/event_queue.h"
#include "sim/timeline.h"

namespace sparseflash {

// The core class the I/O submitter runs on: `wanted`, or the fastest class of
// a profile that has none of that name ("" stays "": no I/O thread).
std::string IoCoreClass(const DeviceProfile& profile, const std::string& wanted);

class SimComputeBackend : public ComputeBackend {
 public:
  static absl::StatusOr<std::unique_ptr<SimComputeBackend>> Create(EventQueue* queue,
                                                                   const DeviceProfile& profile,
                                                                   const ResourcePlan& plan,
                                                                   Timeline* timeline = nullptr);

  void SetSink(CompletionSink* sink) override { sink_ = sink; }
  void Submit(const ComputeTask& task) override;
  int cpu_workers() const override { return static_cast<int>(cpu_.size()); }
  bool has_npu() const override { return npu_.size() == 1; }
  // The core class of CPU worker `i`.
  const std::string& worker_class(int i) const { return cpu_[i].core->name; }
  // Time each worker was busy (CPU workers, then the NPU), for utilisation.
  std::vector<Nanos> busy_times() const;
  // Busy time of each CPU worker (with its core class) and of the NPU so far.
  UnitActivity activity() const;

 private:
  struct Worker {
    const CoreClassSpec* core = nullptr;  // null for the NPU
    bool busy = false;
    double dram_rate = 0;  // bytes/s it draws from DRAM while busy
    Nanos busy_time;
    int lane = 0;
    ComputeTask task;  // the running task
    Nanos start;
    Nanos free_since;  // when it finished its last task
  };
  SimComputeBackend(EventQueue* queue, const DeviceProfile& profile, Timeline* timeline)
      : queue_(queue),
        profile_(profile),
        total_cores_(profile.total_cores()),
        timeline_(timeline) {}
  // Starts waiting tasks on free workers. `finishing` (may be null) is the
  // worker that just finished a task: one it takes next comes from its queue
  // (QueuedTaskNs), without a hand-off to a waiting thread.
  void Dispatch(std::vector<Worker>& pool, std::deque<ComputeTask>& waiting,
                const Worker* finishing = nullptr);
  Nanos Duration(const Worker& w, const ComputeTask& task, bool queued, double* dram_rate) const;
  double DramInUse(bool npu) const;
  void Finish(Worker* w, bool npu);
  // The extra wake-up of a thread of core class `core` that has waited since
  // `since` (the profile's idle_wake once past its idle_window; else 0).
  Nanos IdleWake(const CoreClassSpec* core, Nanos since) const;

  EventQueue* queue_;
  DeviceProfile profile_;
  int total_cores_;  // of every class: the count at which the stated rates hold
  Timeline* timeline_;
  CompletionSink* sink_ = nullptr;
  std::vector<Worker> cpu_, npu_;
  std::deque<ComputeTask> cpu_waiting_, npu_waiting_;
  // The engine's thread counts as awake from its last hand-off with compute (a
  // submit, a completion delivered); the I/O completions it handles in
  // between are not seen here.
  Nanos engine_awake_at_;
};

}  // namespace sparseflash
