#include "tools/replay_run.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "tools/run_store.h"

namespace sparseflash::cli {
namespace {

// Per pattern and pass of the compute check: 12 measurements, about 2.5 s.
constexpr double kComputeCheckSeconds = 0.2;
// What it holds at most: MeasureComputeNow's 512 MiB of bundles, and room.
constexpr int64_t kComputeCheckBytes = int64_t{576} << 20;
// Per batch of the storage check, as calibration's: three batches, about half a
// second (and, mapped, seven places of 256 MiB faulted in).
constexpr double kStorageCheckSeconds = 0.15;
// What it holds at most: one batch's buffers (calibration caps a batch at 256
// MiB), and room.
constexpr int64_t kStorageCheckBytes = int64_t{288} << 20;

// A check that holds `check_bytes` beside the process must fit the --memory budget.
absl::Status CheckFitsBudget(const char* flag, int64_t check_bytes, int64_t memory_bytes,
                             int64_t process_bytes) {
  if (memory_bytes < 0 || memory_bytes >= process_bytes + check_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      flag, " measures over ", FormatBytes(check_bytes),
      " of memory, more than the --memory budget ", FormatBytes(memory_bytes),
      " leaves beside the process's ", FormatBytes(process_bytes),
      ": leave it out, or give a budget of at least ", FormatBytes(process_bytes + check_bytes)));
}

// Mapped, the engine's reads are the model's, not the machine's: the flash
// figures come from the kernel's count of what the process read (page faults
// and read-ahead), per decoded token; the page cache's hits are not observed.
void MeasureFaultedReads(const RealRunResult& real, RunSummary* s) {
  const double tokens = static_cast<double>(std::max<size_t>(1, real.record.tokens.size()));
  s->flash_bytes_per_token = real.kernel_read_bytes < 0 ? 0 : real.kernel_read_bytes / tokens;
  s->hit_rate = s->miss_rate_mean = s->miss_rate_p99 = 0;
  s->flash_throughput_bytes_per_s = s->io_ms_per_token = s->io_stall_share = 0;
  s->flash_reads_offered = s->flash_reads_held = 0;
  s->not_observed = {"hit_rate",
                     "miss_rate_mean",
                     "miss_rate_p99",
                     "flash_throughput_bytes_per_s",
                     "flash_reads_offered",
                     "flash_reads_held",
                     "io_ms_per_token",
                     "io_stall_share"};
}

}  // namespace

absl::StatusOr<ReplayResult> ReplayOnce(const SimulationConfig& sc, const RealRunOptions& ro,
                                        const ReplayOptions& o) {
  ReplayResult r;
  auto tell = [&](const std::string& line) {
    if (o.say) o.say(line);
  };
  // The real run uses this machine's cores; the prediction the profile's.
  RunSetupConfig rc = RunSetupOf(sc);
  rc.cpu_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  rc.npu_present = false;
  absl::StatusOr<RunSetup> setup = PrepareRealRun(rc, &r.process_bytes);
  if (!setup.ok()) return setup.status();
  if (o.recheck_compute) {
    // Its checks measure right before and after the run, when the run's memory is not held.
    if (absl::Status s = CheckFitsBudget("--recheck-compute", kComputeCheckBytes, sc.memory_bytes,
                                         r.process_bytes);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckComputeComparable(sc.device); !s.ok()) return s;
  }
  // llamacpp's mmap (its default): the kernel pages the mapped file in, as for llama.cpp.
  RealRunOptions run = ro;
  run.page_faults = setup->options.count("mmap") != 0 && setup->options.at("mmap") == "true";
  r.page_faults = run.page_faults;
  if (o.recheck_storage) {
    if (absl::Status s = CheckFitsBudget("--recheck-storage", kStorageCheckBytes, sc.memory_bytes,
                                         r.process_bytes);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckStorageComparable(sc.device, run.page_faults); !s.ok()) return s;
  }
  // After the checks, so a wrong option fails at once; its 4 MiB buffer is
  // freed before the run allocates its own I/O buffers.
  if (o.read_weights_first) {
    tell(absl::StrCat("reading ", ro.weights_path,
                      " once before the run (--cold-storage skips it)"));
    absl::StatusOr<StorageWarmup> warm = ReadFileOnce(ro.weights_path, [&](int64_t done) {
      tell(absl::StrCat("  ", FormatBytes(done), " read"));
    });
    if (!warm.ok()) return warm.status();
    r.weights_read_first = *warm;
  }
  if (o.recheck_storage) {  // after the weights' read: the storage as the run finds it
    tell("measuring this machine's storage against the profile's (--recheck-storage)");
    absl::StatusOr<StorageNow> now =
        MeasureStorageNow(sc.device, ro.weights_path, kStorageCheckSeconds, run.page_faults);
    if (!now.ok()) return now.status();
    r.storage_now = *std::move(now);
    tell(r.storage_now->summary);
  }
  if (o.recheck_compute) {  // right before the run, its memory freed before the run's
    tell("measuring this machine's compute rates against the profile's (--recheck-compute)");
    absl::StatusOr<ComputeNow> now = MeasureComputeNow(sc.device, kComputeCheckSeconds);
    if (!now.ok()) return now.status();
    r.compute_now = *std::move(now);
    tell(r.compute_now->summary);
  }
  absl::StatusOr<RealRunResult> real = RunReal(*setup, sc.model, run);
  if (!real.ok()) return real.status();
  r.real = *std::move(real);
  r.options = setup->options;
  setup = absl::CancelledError("released");  // its memory serves the prediction
  if (r.compute_now) {                       // again after the run, which the two checks bracket
    absl::StatusOr<ComputeNow> after = MeasureComputeNow(sc.device, kComputeCheckSeconds);
    if (!after.ok()) return after.status();
    tell(after->summary);
    r.compute_now = AroundRun(*r.compute_now, *after);
  }
  if (r.storage_now) {
    absl::StatusOr<StorageNow> after =
        MeasureStorageNow(sc.device, ro.weights_path, kStorageCheckSeconds, run.page_faults);
    if (!after.ok()) return after.status();
    tell(after->summary);
    r.storage_now = StorageAroundRun(*r.storage_now, *after);
  }
  // The prediction plans the same cache: the budget less what the process holds.
  SimulationConfig planned = sc;
  planned.model = RealRunModel(planned.model);
  if (planned.memory_bytes >= 0) planned.memory_bytes -= r.process_bytes;
  absl::StatusOr<SimulationResult> predicted = Simulate(planned);
  if (!predicted.ok()) return predicted.status();
  r.predicted = *std::move(predicted);
  r.measured_summary = Summarize(r.real.record);
  if (r.page_faults) MeasureFaultedReads(r.real, &r.measured_summary);
  r.predicted_summary = Summarize(r.predicted.record);
  r.error = r.predicted_summary.decode_tokens_per_s / r.measured_summary.decode_tokens_per_s - 1;
  if (r.rechecked()) {
    if (r.compute_now) planned.device = WithComputeNow(planned.device, *r.compute_now);
    if (r.storage_now) planned.device = WithStorageNow(planned.device, *r.storage_now);
    absl::StatusOr<SimulationResult> now = Simulate(planned);
    if (!now.ok()) return now.status();
    r.predicted_now_summary = Summarize(now->record);
    r.error_now =
        r.predicted_now_summary.decode_tokens_per_s / r.measured_summary.decode_tokens_per_s - 1;
  }
  return r;
}

nlohmann::ordered_json ComputeNowJson(const ReplayResult& r) {
  if (!r.compute_now) return nullptr;
  const ComputeNow& now = *r.compute_now;
  return {{"gemv", now.gemv},
          {"dense_gemv", now.dense_gemv},
          {"gemv_alone", now.gemv_alone},
          {"dense_gemv_alone", now.dense_gemv_alone},
          {"summary", now.summary},
          {"predicted_decode_tokens_per_s", r.predicted_now_summary.decode_tokens_per_s},
          {"error", r.error_now}};
}

nlohmann::ordered_json StorageNowJson(const ReplayResult& r) {
  if (!r.storage_now) return nullptr;
  return {{"direct", r.storage_now->direct},
          {"mapped", r.storage_now->mapped},
          {"summary", r.storage_now->summary},
          {"predicted_decode_tokens_per_s", r.predicted_now_summary.decode_tokens_per_s},
          {"error", r.error_now}};
}

absl::StatusOr<int64_t> StoreReplay(const std::string& path, const SimulationConfig& sc,
                                    const ReplayResult& r) {
  absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(path);
  if (!db.ok()) return db.status();
  const RunConfig config = MakeRunConfig(sc);
  int64_t id = 0;
  absl::Status s = (*db)->InTransaction([&]() -> absl::Status {
    absl::StatusOr<int64_t> predicted_id = (*db)->Find(config.Key(), "simulated");
    if (!predicted_id.ok()) return predicted_id.status();
    if (*predicted_id == 0) {
      predicted_id =
          (*db)->Insert(MakeRunRow(config, "simulated",
                                   RunFigures(sc, r.predicted_summary, r.predicted.memory,
                                              r.predicted.options, ExtrasOf(r.predicted)),
                                   r.predicted.record));
      if (!predicted_id.ok()) return predicted_id.status();
    }
    nlohmann::ordered_json figures = RunFigures(sc, r.measured_summary, r.real.memory, r.options);
    if (r.compute_now) figures["compute_now"] = ComputeNowJson(r);
    if (r.storage_now) figures["storage_now"] = StorageNowJson(r);
    RunRow measured = MakeRunRow(config, "real", figures, r.real.record);
    measured.linked_run = *predicted_id;
    absl::StatusOr<int64_t> measured_id = (*db)->InsertMeasurement(measured);
    if (!measured_id.ok()) return measured_id.status();
    id = *measured_id;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return id;
}

}  // namespace sparseflash::cli
