#include "sim/simulator.h"

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "engine/model_bytes.h"
#include "engine/run_setup.h"
#include "engine/token_source.h"
#include "sim/event_queue.h"
#include "sim/sim_compute.h"
#include "sim/sim_flash.h"
#include "traces/generator.h"

namespace sparseflash {
namespace {

class SimClock : public Clock {
 public:
  explicit SimClock(const EventQueue* q) : q_(q) {}
  Nanos Now() const override { return q_->now(); }

 private:
  const EventQueue* q_;
};

}  // namespace

RunSetupConfig RunSetupOf(const SimulationConfig& c) {
  return {.model = c.model,
          .trace_path = c.trace_path,
          .seed = c.seed,
          .generator_threads = c.generator_threads,
          .generator_setup_threads = c.generator_setup_threads,
          .decoded = c.decoded,
          .profiles = c.profiles,
          .sharing = c.sharing,
          .tokens = c.tokens,
          .strategy = c.strategy,
          .options = c.options,
          .policy = c.policy,
          .memory_bytes = c.memory_bytes,
          .ffn_resident = c.ffn_resident,
          .prompt_tokens = c.prompt_tokens,
          .threads = c.threads,
          .cpu_cores = c.device.total_cores(),
          .npu_present = c.device.npu.present,
          .npu_cpu_rate_ratio = c.device.NpuCpuRateRatio(),
          .page_cache = c.device.dram.page_cache,
          .read_ahead_kb = c.device.flash.read_ahead_kb,
          .max_request_kb = c.device.flash.max_request_kb,
          .profile = c.profile};
}

namespace {

// Joules per decode token: the units' activity from the end of the prompt to
// the end of the run.
double DecodeEnergyPerToken(const DeviceProfile& device, const RunRecord& record,
                            const UnitActivity& at_start, UnitActivity at_end) {
  if (record.tokens.empty()) return 0;
  UnitActivity decode = ActivityBetween(at_start, at_end);
  for (const StepRecord& t : record.tokens) {
    decode.flash_busy += t.flash_busy;
    decode.dram_bytes += t.compute_bytes;
    decode.elapsed += t.latency;
  }
  return EnergyJoules(device, decode) / static_cast<double>(record.tokens.size());
}

}  // namespace

absl::StatusOr<SimulationResult> Simulate(const SimulationConfig& c) {
  if (absl::Status s = c.device.Validate(c.device.name); !s.ok()) return s;
  absl::StatusOr<RunSetup> setup = PrepareRun(RunSetupOf(c));
  if (!setup.ok()) return setup.status();
  const uint64_t tokens = setup->tokens;
  std::unique_ptr<Strategy>& strategy = setup->strategy;

  SimulationResult result;
  result.resources = strategy->resources();
  result.memory = strategy->memory();
  // Above what the device gives one app: simulated (the papers ran such
  // configurations) but flagged, with the reason in `warning`.
  const int64_t used = result.memory.resident_bytes + result.memory.cache_bytes;
  if (c.device.dram.app_available_bytes > 0 && used > c.device.dram.app_available_bytes) {
    result.over_app_limit = true;
    result.warning = absl::StrCat(
        c.strategy, " uses ", FormatBytes(used), " (", FormatBytes(result.memory.resident_bytes),
        " resident + ", FormatBytes(result.memory.cache_bytes), " cache), more than the ",
        FormatBytes(c.device.dram.app_available_bytes), " ", c.device.name,
        " gives one app (dram.app_available_bytes): the result is flagged over_app_limit");
  }
  result.options = setup->options;
  EventQueue queue;
  if (c.event_log) queue.EnableLog();
  SimClock clock(&queue);
  // The cores run the model's weight format at that format's measured rates,
  // over scattered neurons at the rate for the memory they lie in.
  absl::StatusOr<std::unique_ptr<SimComputeBackend>> compute =
      SimComputeBackend::Create(&queue,
                                c.device.ForWeightFormat(c.model.quantization.Name())
                                    .ForScatterSpan(result.memory.ffn_span_bytes()),
                                result.resources, c.timeline);
  if (!compute.ok()) return compute.status();
  std::string io_class = IoCoreClass(c.device, result.resources.io_core_class);
  if (io_class.empty() && (*compute)->cpu_workers() > 0) io_class = (*compute)->worker_class(0);
  SimFlashDevice flash(&queue, c.device, io_class, c.timeline, result.resources.io_issuers);
  Engine engine(Env{&clock, &flash, compute->get()}, strategy.get(), setup->source.get(),
                EngineOptions{.prompt_tokens = c.prompt_tokens, .max_tokens = tokens});
  if (c.timeline) {
    // Steps as the engine counts them: -1 while it prefills, then the token index.
    c.timeline->SetStepSource([&engine, &c] {
      const int64_t done = static_cast<int64_t>(engine.record().tokens.size());
      return c.prompt_tokens > 0 && !engine.record().has_prefill ? -1 : done;
    });
  }
  // Units' busy time when the prompt is done: decode energy is what follows.
  UnitActivity at_decode_start = (*compute)->activity();
  engine.set_observer([&](int64_t step, NodeId, const WorkNode&) {
    if (step < 0) at_decode_start = (*compute)->activity();
  });
  engine.Start();
  uint64_t reported = 0;
  while (!queue.empty() && !engine.finished()) {
    // Progress every 100 simulated ms (from the next event: gaps may be longer).
    queue.RunUntil(queue.next_time() + Milliseconds(100));
    if (c.progress && engine.record().tokens.size() != reported) {
      reported = engine.record().tokens.size();
      c.progress(reported, tokens);
    }
  }
  if (c.timeline) c.timeline->SetStepSource(nullptr);  // the engine goes away
  if (!engine.status().ok()) return engine.status();
  if (queue.overflowed()) {
    return absl::OutOfRangeError(absl::StrCat(
        "simulated time passed ", kTimeHorizon.seconds() / (365.25 * 86400), " years at token ",
        engine.record().tokens.size(), " of ", tokens, " on device '", c.device.name,
        "': a rate in its profile is too low for this model to be simulated"));
  }
  if (!engine.finished()) return absl::InternalError("simulation stalled: no event left");
  result.record = engine.record();
  result.events = queue.events_run();
  result.event_log = queue.log();
  result.worker_busy = (*compute)->busy_times();
  result.energy_j_per_token =
      DecodeEnergyPerToken(c.device, result.record, at_decode_start, (*compute)->activity());
  return result;
}

}  // namespace sparseflash
