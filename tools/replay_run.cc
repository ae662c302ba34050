#include "tools/replay_run.h"

#include <thread>

#include "tools/run_store.h"

namespace sparseflash::cli {

absl::StatusOr<ReplayResult> ReplayOnce(const SimulationConfig& sc, const RealRunOptions& ro) {
  // The real run uses this machine's cores; the prediction the profile's.
  RunSetupConfig rc = RunSetupOf(sc);
  rc.cpu_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  rc.npu_present = false;
  ReplayResult r;
  absl::StatusOr<RunSetup> setup = PrepareRealRun(rc, &r.process_bytes);
  if (!setup.ok()) return setup.status();
  absl::StatusOr<RealRunResult> real = RunReal(*setup, sc.model, ro);
  if (!real.ok()) return real.status();
  r.real = *std::move(real);
  r.options = setup->options;
  setup = absl::CancelledError("released");  // its memory serves the prediction
  // The prediction plans the same cache: the budget less what the process holds.
  SimulationConfig planned = sc;
  if (planned.memory_bytes >= 0) planned.memory_bytes -= r.process_bytes;
  absl::StatusOr<SimulationResult> predicted = Simulate(planned);
  if (!predicted.ok()) return predicted.status();
  r.predicted = *std::move(predicted);
  r.measured_summary = Summarize(r.real.record);
  r.predicted_summary = Summarize(r.predicted.record);
  r.error = r.predicted_summary.decode_tokens_per_s / r.measured_summary.decode_tokens_per_s - 1;
  return r;
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
    RunRow measured =
        MakeRunRow(config, "real", RunFigures(sc, r.measured_summary, r.real.memory, r.options),
                   r.real.record);
    measured.linked_run = *predicted_id;
    absl::StatusOr<int64_t> measured_id = (*db)->Insert(measured);
    if (!measured_id.ok()) return measured_id.status();
    id = *measured_id;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return id;
}

}  // namespace sparseflash::cli
