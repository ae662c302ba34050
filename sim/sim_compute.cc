#include "sim/sim_compute.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sparseflash {

std::string IoCoreClass(const DeviceProfile& profile, const std::string& wanted) {
  if (wanted.empty() || profile.cores.empty()) return wanted;
  const CoreClassSpec* fastest = &profile.cores.front();
  for (const CoreClassSpec& c : profile.cores) {
    if (c.name == wanted) return wanted;
    if (c.gemv_bytes_per_s > fastest->gemv_bytes_per_s) fastest = &c;
  }
  return fastest->name;
}

absl::StatusOr<std::unique_ptr<SimComputeBackend>> SimComputeBackend::Create(
    EventQueue* queue, const DeviceProfile& profile, const ResourcePlan& plan, Timeline* timeline) {
  auto backend =
      std::unique_ptr<SimComputeBackend>(new SimComputeBackend(queue, profile, timeline));
  // Free cores, fastest first; the I/O submitter keeps one core of its class,
  // or of the fastest class where the profile has none of that name (a
  // calibrated host's single class): its thread needs a core either way.
  std::vector<const CoreClassSpec*> cores;
  bool io_taken = plan.io_core_class.empty();
  const std::string io_class = IoCoreClass(backend->profile_, plan.io_core_class);
  for (const CoreClassSpec& c : backend->profile_.cores) {
    for (int i = 0; i < c.count; ++i) {
      if (!io_taken && c.name == io_class) {
        io_taken = true;
        continue;
      }
      cores.push_back(&c);
    }
  }
  std::stable_sort(cores.begin(), cores.end(), [](const CoreClassSpec* a, const CoreClassSpec* b) {
    return a->gemv_bytes_per_s > b->gemv_bytes_per_s;
  });
  if (plan.compute_threads > static_cast<int>(cores.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        plan.compute_threads, " compute threads asked for, but device '", profile.name, "' has ",
        cores.size(), cores.size() == 1 ? " free core" : " free cores",
        plan.io_core_class.empty() ? "" : " besides the I/O core", "; lower --threads"));
  }
  for (int i = 0; i < plan.compute_threads; ++i) {
    Worker w;
    w.core = cores[i];
    if (timeline) w.lane = timeline->Lane(absl::StrCat("cpu", i, " (", cores[i]->name, ")"));
    backend->cpu_.push_back(w);
  }
  if (plan.uses_npu) {
    if (!profile.npu.present) {
      return absl::InvalidArgumentError(absl::StrCat("device '", profile.name, "' has no NPU"));
    }
    Worker w;
    if (timeline) w.lane = timeline->Lane("npu");
    backend->npu_.push_back(w);
  }
  return backend;
}

void SimComputeBackend::Submit(const ComputeTask& task) {
  engine_awake_at_ = queue_->now();
  if (task.unit == ComputeUnit::kNpu && !npu_.empty()) {
    npu_waiting_.push_back(task);
    Dispatch(npu_, npu_waiting_);
  } else {
    cpu_waiting_.push_back(task);
    Dispatch(cpu_, cpu_waiting_);
  }
}

double SimComputeBackend::DramInUse(bool npu) const {
  double sum = 0;
  for (const Worker& w : npu ? npu_ : cpu_) sum += w.busy ? w.dram_rate : 0;
  return sum;
}

Nanos SimComputeBackend::Duration(const Worker& w, const ComputeTask& task, bool queued,
                                  double* dram_rate) const {
  const DramSpec& dram = profile_.dram;
  const bool npu = w.core == nullptr;
  // Per task: the NPU's graph launch, or handing the task to a CPU worker and
  // back (less when the worker takes it from its queue as it finishes the one
  // before). A sparse FFN task on a CPU core also pays the kernel's fixed cost
  // per call.
  const bool kernel_call = !npu && task.ops == 0 && !StreamsInOrder(task);
  const double hand_off = npu      ? profile_.npu.launch_overhead_ns
                          : queued ? w.core->QueuedTaskNs()
                                   : w.core->task_dispatch_ns;
  Nanos overhead{static_cast<int64_t>(hand_off + (kernel_call ? w.core->kernel_call_ns : 0))};
  if (task.ops > 0) {
    *dram_rate = 0;
    const double rate = npu ? profile_.npu.dense_ops_per_s : w.core->dense_ops_per_s;
    return overhead + TransferTime(task.ops, rate);
  }
  if (task.kind == ComputeKind::kMemoryManagement) {
    *dram_rate = dram.rewrite_bytes_per_s;
    return overhead + TransferTime(static_cast<double>(task.bytes), dram.rewrite_bytes_per_s);
  }
  // Bandwidth left under this unit's ceiling and under the combined ceiling.
  const double own_ceiling = npu ? dram.npu_bytes_per_s : dram.cpu_bytes_per_s;
  double left = own_ceiling - DramInUse(npu);
  if (dram.combined_bytes_per_s > 0) {
    left = std::min(left, dram.combined_bytes_per_s - DramInUse(npu) - DramInUse(!npu));
  }
  // This worker and the others of its unit computing now.
  int busy = 1;
  for (const Worker& o : npu ? npu_ : cpu_) busy += o.busy ? 1 : 0;
  double rate = npu ? own_ceiling : w.core->GemvRate(StreamsInOrder(task), busy, total_cores_);
  // At least an equal share of the ceiling among this unit's busy workers.
  rate = std::min(rate, std::max(left, own_ceiling / busy));
  *dram_rate = rate;
  return overhead + TransferTime(static_cast<double>(task.bytes), rate);
}

void SimComputeBackend::Dispatch(std::vector<Worker>& pool, std::deque<ComputeTask>& waiting,
                                 const Worker* finishing) {
  for (Worker& w : pool) {
    if (waiting.empty()) return;
    if (w.busy) continue;
    ComputeTask task = waiting.front();
    waiting.pop_front();
    double dram_rate = 0;
    Nanos d = Duration(w, task, &w == finishing, &dram_rate);
    if (w.core != nullptr) d += IdleWake(w.core, w.free_since);
    w.busy = true;
    w.dram_rate = dram_rate;
    w.start = queue_->now();
    const char* label = ComputeKindName(task.kind);
    w.task = std::move(task);
    Worker* worker = &w;
    const bool npu = &pool == &npu_;
    queue_->After(
        d, [this, worker, npu] { Finish(worker, npu); }, label);
  }
}

void SimComputeBackend::Finish(Worker* w, bool npu) {
  w->busy = false;
  w->busy_time += queue_->now() - w->start;
  const uint64_t tag = w->task.tag;
  if (timeline_) {
    timeline_->AddSpan(w->lane,
                       {.name = ComputeKindName(w->task.kind),
                        .layer = w->task.layer,
                        .bytes = w->task.bytes,
                        .cached = w->task.cached},
                       w->start, queue_->now());
  }
  w->free_since = queue_->now();
  const Nanos wake = npu ? Nanos{} : IdleWake(w->core, engine_awake_at_);
  if (npu) {
    Dispatch(npu_, npu_waiting_, w);
  } else {
    Dispatch(cpu_, cpu_waiting_, w);
  }
  if (wake <= Nanos{}) {
    engine_awake_at_ = queue_->now();
    sink_->OnComputeDone(tag);
    return;
  }
  engine_awake_at_ = queue_->now() + wake;
  queue_->After(
      wake, [this, tag] { sink_->OnComputeDone(tag); }, "idle wake");
}

Nanos SimComputeBackend::IdleWake(const CoreClassSpec* core, Nanos since) const {
  if (core->idle_wake_ns <= 0) return Nanos{};
  const Nanos waited = queue_->now() - since;
  if (waited <= Nanos{static_cast<int64_t>(core->idle_window_ns)}) return Nanos{};
  return Nanos{static_cast<int64_t>(core->idle_wake_ns)};
}

std::vector<Nanos> SimComputeBackend::busy_times() const {
  std::vector<Nanos> out;
  for (const Worker& w : cpu_) out.push_back(w.busy_time);
  for (const Worker& w : npu_) out.push_back(w.busy_time);
  return out;
}

UnitActivity SimComputeBackend::activity() const {
  UnitActivity a;
  for (const Worker& w : cpu_) {
    a.cpu_busy.push_back(w.busy_time);
    a.cpu_class.push_back(w.core->name);
  }
  for (const Worker& w : npu_) a.npu_busy += w.busy_time;
  return a;
}

}  // namespace sparseflash
