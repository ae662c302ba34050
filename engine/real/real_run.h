// A trace replayed on this machine by the same engine and strategy as the
// simulator: reads of a real weight file (O_DIRECT, io_uring or pread), the
// real sparse kernel on real threads, and real memory for the budget (the
// resident weights and the neuron cache are allocated and touched). The plan's
// abstract work becomes real: a read batch reads that many requests at real
// offsets of the right region of the file; a compute task of B bytes runs the
// sparse FFN kernel over B bytes of bundles in the cache arena (attention and
// the head over the resident weights).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/real/sparse_ffn_kernel.h"
#include "engine/run_setup.h"
#include "engine/weight_file.h"

namespace sparseflash {

// What RunReal adds to the process beyond its budget (resident set + cache
// arena) when its read batches are neuron-sized: I/O buffers, worker threads,
// per-token records and the growth of the cache policy's state. Checked by
// tests/replay_test.cc (a 55 MB model grows by its budget + 3 MB). Each read
// batch gets a fresh buffer outside the budget while it is in flight, so
// strategies with large batches add those: llamacpp on a 7B model has two
// batches of about 68 MB in flight. Buffers a strategy plans for
// (MemoryPlan::read_buffer_bytes: layers streamed from flash) are in the budget
// instead: the resident weights are allocated without them. The setup before
// it (PrepareRun: the trace reader, the offline profile, the cache index) is
// extra and scales with the neuron count: for TurboSparse-Mistral-7B the whole
// process peaked at the budget + 42-145 MB.
inline constexpr int64_t kRealRunOverheadBytes = int64_t{32} << 20;

// The kernel's bundles for `model`'s weight format, which real runs compute
// over: its INT4 or INT8 groups (the work per byte differs with the format, and
// `device calibrate` prices each); formats the kernel has no path for (FP16)
// run as INT4 g32 over the same bytes.
FfnKernelShape KernelShapeOf(const ModelSpec& model);

struct RealRunOptions {
  std::string weights_path;
  std::string io = "auto";  // uring | pread | auto
  int io_depth = 64;
  bool deny_uring_for_test = false;  // see FlashOpenOptions
  // The kernel does the reads, as for llama.cpp: the weight file is mapped
  // (MappedWeights), the plan's reads complete at once, and each compute task
  // that says where its weights lie (ComputeTask::file_offset: the llamacpp
  // strategy) runs the kernel over those pages, faulting them in through the
  // kernel's read-ahead and page cache. Only the process's memory limit (a
  // cgroup) bounds that cache. For strategies that scan the file in order.
  bool page_faults = false;
  // A run in which nothing completes for this long is abandoned (hung device).
  Nanos stall_timeout = Seconds(60);
  // Tests: wraps the opened device (e.g. in a FaultInjectingFlashDevice).
  std::function<std::unique_ptr<FlashDevice>(std::unique_ptr<FlashDevice>)> wrap_flash;
};

struct RealRunResult {
  RunRecord record;
  MemoryPlan memory;
  int64_t engine_read_bytes = 0;
  int64_t kernel_read_bytes = 0;  // /proc/self/io read_bytes over the run; -1 = unknown
  double run_seconds = 0;         // wall time of the run (setup excluded)
  double steal_seconds = -1;      // the machine's steal time over it (StealSeconds); -1 = unknown
  int64_t peak_rss_bytes = 0;
  // Of the resident set at the run's end, the bytes on transparent huge pages
  // (the weights the kernels read are asked to be: AllocateWeightMemory); -1 = unknown.
  int64_t huge_page_bytes = -1;
  std::string notice;
};

absl::StatusOr<RealRunResult> RunReal(RunSetup& setup, const ModelSpec& model,
                                      const RealRunOptions& options);

// A real run's setup whose whole process stays within config.memory_bytes, as
// a phone's app limit (or a memory cgroup) demands: plans once to measure what
// the process holds besides the strategy's plan (code, catalogs, trace,
// profile, strategy state: its resident set then) and adds
// kRealRunOverheadBytes for I/O buffers, threads and records; then plans again
// with the budget less that. `process_bytes` gets that amount (0 when the
// budget is a share of the FFN, which is not a process budget). An error when
// the rest is too small, saying how the budget was spent. The model's
// runtime buffers (an estimate for an engine nobody measured, e.g. 300 MB for
// PowerInfer-2) are not counted: this engine's own are what the process
// holds (RealRunModel).
absl::StatusOr<RunSetup> PrepareRealRun(const RunSetupConfig& config, int64_t* process_bytes);

// The model as a real run plans it: without the model's estimated runtime
// buffers, which the measured process takes the place of. A prediction of a
// real run plans with the same.
ModelSpec RealRunModel(ModelSpec model);

}  // namespace sparseflash
