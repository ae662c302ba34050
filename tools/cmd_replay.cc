// sparseflash replay: a trace through the real engine on this machine, beside
// the simulator's prediction for the same configuration and device profile.
#include <algorithm>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/units.h"
#include "devices/device_catalog.h"
#include "engine/engine.h"
#include "engine/real/real_run.h"
#include "engine/run_summary.h"
#include "engine/weight_file.h"
#include "sim/simulator.h"
#include "tools/cli.h"
#include "tools/replay_run.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

struct ReplayArgs {
  std::string device, model, weights, trace, strategy = "powerinfer2", policy, memory, io = "auto";
  std::string quant;
  std::string db;
  double ffn_resident = -1;
  int threads = 0;
  uint64_t tokens = 16, seed = 1;
  std::string profile = "generator";
  std::vector<std::string> options;
  bool json = false;
  bool cold_storage = false;
  bool recheck_compute = false;
  bool recheck_storage = false;
};

// `comparable` false: the two columns count different things, so no error is given.
void PrintRow(absl::string_view name, double measured, double predicted, const char* unit,
              bool comparable = true) {
  const std::string error = !comparable ? "       - "
                            : measured != 0
                                ? absl::StrFormat("%8.1f %%", 100 * (predicted / measured - 1))
                            : predicted != 0 ? "       - "
                                             : "     0.0 %";
  absl::PrintF("  %-28s %12.3f %12.3f %s  %s\n", name, measured, predicted, error, unit);
}

// How much of the process was on huge pages at the run's end: the kernels'
// rates from DRAM depend on it (docs/replay.md), and a kernel may refuse them.
std::string HugePagesLine(int64_t bytes) {
  if (bytes < 0) return "huge pages unknown (no /proc/self/smaps_rollup)";
  if (bytes == 0) {
    return "none on huge pages (transparent huge pages off? "
           "/sys/kernel/mm/transparent_hugepage/enabled)";
  }
  return absl::StrCat(FormatBytes(bytes), " of it on huge pages");
}

// Whether the storage was brought to the state calibration measures it in.
std::string WeightsReadFirstLine(const StorageWarmup& w, bool cold_storage) {
  if (cold_storage) {
    return "weights not read before the run (--cold-storage): storage that caches what was "
           "read (a virtual disk) may serve it faster or slower than calibrate measured";
  }
  if (!w.direct) return "weights not read before the run: the file system refuses O_DIRECT";
  return absl::StrFormat(
      "before the run, the weight file was read once (%s at %.0f MB/s), as calibrate reads "
      "the file it measures",
      FormatBytes(w.bytes), w.bytes_per_s() / 1e6);
}

// What the hypervisor took from this machine during the run: on a VM the
// clearest sign that a measurement shared its host.
std::string StealLine(const RealRunResult& real) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double share = real.run_seconds > 0 ? real.steal_seconds / (real.run_seconds * cores) : 0;
  return absl::StrFormat(
      "steal: the hypervisor ran something else for %.2f s of this machine's %u cores' %.1f s "
      "(%.1f %%)%s",
      real.steal_seconds, cores, real.run_seconds, 100 * share,
      share > 0.02 ? "; the host was shared, so the measurement is too" : "");
}

int RunReplay(const ReplayArgs& a) {
  absl::StatusOr<DeviceProfile> device = LoadDevice(a.device);
  if (!device.ok()) return ReportError(device.status());
  absl::StatusOr<ModelSpec> model = LoadModel(a.model);
  if (!model.ok()) return ReportError(model.status());
  const std::string catalog_quant = model->quantization.Name();
  if (absl::Status s = MatchModelToWeightFile(a.weights, a.quant, &*model); !s.ok()) {
    return ReportError(s);
  }
  if (model->quantization.Name() != catalog_quant) {
    std::fprintf(stderr, "replay: %s is %s (the catalog's %s is %s): replaying and predicting %s\n",
                 a.weights.c_str(), model->quantization.Name().c_str(), model->name.c_str(),
                 catalog_quant.c_str(), model->quantization.Name().c_str());
  }
  int64_t memory = -1;
  if (!a.memory.empty()) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(a.memory);
    if (!bytes.ok()) return ReportError(bytes.status());
    memory = *bytes;
  }
  SimulationConfig sc;
  sc.device = *device;
  sc.model = *model;
  sc.trace_path = a.trace;
  sc.strategy = a.strategy;
  sc.options = a.options;
  sc.policy = a.policy;
  sc.memory_bytes = memory;
  sc.ffn_resident = a.ffn_resident;
  sc.tokens = a.tokens;
  sc.threads = a.threads;
  sc.seed = a.seed;
  sc.profile = a.profile;
  absl::StatusOr<ReplayResult> r = ReplayOnce(
      sc, {.weights_path = a.weights, .io = a.io},
      {.read_weights_first = !a.cold_storage,
       .recheck_compute = a.recheck_compute,
       .recheck_storage = a.recheck_storage,
       .say = [](const std::string& line) { std::fprintf(stderr, "replay: %s\n", line.c_str()); }});
  if (!r.ok()) return ReportError(r.status());
  if (!r->real.notice.empty()) std::fprintf(stderr, "%s\n", r->real.notice.c_str());
  const RunSummary &m = r->measured_summary, &p = r->predicted_summary;
  const RealRunResult* real = &r->real;
  const double error = r->error;
  if (!a.db.empty()) {
    absl::StatusOr<int64_t> id = StoreReplay(a.db, sc, *r);
    if (!id.ok()) return ReportError(id.status());
  }
  if (a.json) {
    nlohmann::ordered_json j;
    j["strategy"] = a.strategy;
    j["device"] = device->name;
    j["model"] = model->name;
    j["measured"] = ToJson(m);
    j["predicted"] = ToJson(p);
    j["error_decode_tokens_per_s"] = error;
    j["engine_read_bytes"] = real->engine_read_bytes;
    j["kernel_read_bytes"] = real->kernel_read_bytes;
    j["peak_rss_bytes"] = real->peak_rss_bytes;
    j["huge_page_bytes"] = real->huge_page_bytes;
    j["process_bytes"] = r->process_bytes;
    j["memory"] = {{"resident_bytes", real->memory.resident_bytes},
                   {"cache_bytes", real->memory.cache_bytes},
                   {"read_buffer_bytes", real->memory.read_buffer_bytes}};
    j["options"] = r->options;
    j["weights_read_first"] = {{"bytes", r->weights_read_first.bytes},
                               {"bytes_per_s", r->weights_read_first.bytes_per_s()}};
    j["page_faults"] = r->page_faults;
    j["run_seconds"] = real->run_seconds;
    j["steal_seconds"] = real->steal_seconds;
    if (r->compute_now) j["compute_now"] = ComputeNowJson(*r);
    if (r->storage_now) j["storage_now"] = StorageNowJson(*r);
    if (r->rechecked()) j["predicted_at_rates_now"] = ToJson(r->predicted_now_summary);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  absl::PrintF("%s on this machine (profile %s), %s, %llu tokens; memory: %s resident + %s cache\n",
               a.strategy, device->name, model->name, static_cast<unsigned long long>(m.tokens),
               FormatBytes(real->memory.resident_bytes), FormatBytes(real->memory.cache_bytes));
  if (r->process_bytes > 0) {
    absl::PrintF(
        "  of the %s budget, the process itself holds %s; the strategy planned with the rest\n",
        FormatBytes(sc.memory_bytes), FormatBytes(r->process_bytes));
  }
  absl::PrintF("  %s\n", WeightsReadFirstLine(r->weights_read_first, a.cold_storage));
  absl::PrintF("  %-28s %12s %12s %10s\n", "", "measured", "predicted", "error");
  PrintRow("decode tokens/s", m.decode_tokens_per_s, p.decode_tokens_per_s, "");
  if (r->rechecked()) {
    PrintRow(r->storage_now ? (r->compute_now ? "  at compute and storage now" : "  at storage now")
                            : "  at compute rates now",
             m.decode_tokens_per_s, r->predicted_now_summary.decode_tokens_per_s, "");
  }
  PrintRow("latency p50", m.latency_ms_p50, p.latency_ms_p50, "ms");
  if (!r->page_faults) PrintRow("hit rate", m.hit_rate, p.hit_rate, "");
  PrintRow("flash MB per token", m.flash_bytes_per_token / 1e6, p.flash_bytes_per_token / 1e6,
           "MB");
  if (r->page_faults) {
    absl::PrintF(
        "  mapped: the kernel read the weights (page faults and its read-ahead); flash bytes "
        "are its count over all %zu tokens; hits and I/O stalls happen inside compute, unseen "
        "(--option mmap=false reads the windows with O_DIRECT instead)\n",
        real->record.tokens.size());
  } else {
    PrintRow("flash throughput", m.flash_throughput_bytes_per_s / 1e6,
             p.flash_throughput_bytes_per_s / 1e6, "MB/s");
    // What the disk read alone around the run, against what the run got from it.
    if (r->storage_now) {
      PrintRow("  at storage now", m.flash_throughput_bytes_per_s / 1e6,
               r->predicted_now_summary.flash_throughput_bytes_per_s / 1e6, "MB/s");
    }
    PrintRow("reads offered (mean)", m.flash_reads_offered, p.flash_reads_offered, "");
    PrintRow("I/O stall share", m.io_stall_share, p.io_stall_share, "");
    // The profile's points are measured at the depth offered too; what the
    // device held is the submitter's pace, which they include.
    absl::PrintF("  the device held %.1f reads on average of the %.1f offered\n",
                 m.flash_reads_held, m.flash_reads_offered);
  }
  // Where a token's time goes on its critical path, part by part: a total that
  // agrees can hide parts that do not.
  // Mapped, a compute task waits inside its page faults: the measured parts hold
  // the reads' time that the prediction puts in io_wait, so only the total compares.
  absl::PrintF("  critical path per token%s:\n",
               r->page_faults ? " (mapped: measured compute includes its page faults' waits)" : "");
  for (int part = 0; part < kBreakdownParts; ++part) {
    if (m.breakdown_ms[part] <= 0 && p.breakdown_ms[part] <= 0) continue;
    PrintRow(absl::StrCat("  ", BreakdownName(part)), m.breakdown_ms[part], p.breakdown_ms[part],
             "ms", !r->page_faults);
  }
  absl::PrintF("  engine read %s; the kernel counted %s for the process; peak RSS %s, %s\n",
               FormatBytes(real->engine_read_bytes), FormatBytes(real->kernel_read_bytes),
               FormatBytes(real->peak_rss_bytes), HugePagesLine(real->huge_page_bytes));
  if (real->steal_seconds >= 0) absl::PrintF("  %s\n", StealLine(*real));
  if (r->compute_now) absl::PrintF("  %s\n", r->compute_now->summary);
  if (r->storage_now) absl::PrintF("  %s\n", r->storage_now->summary);
  if (r->rechecked()) {
    absl::PrintF("  predicted at these rates: %.3f tokens/s (%+.1f %%)\n",
                 r->predicted_now_summary.decode_tokens_per_s, 100 * r->error_now);
  }
  return 0;
}

}  // namespace

void AddReplayCommand(CLI::App& app, Dispatch& dispatch) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* r = app.add_subcommand(
      "replay", "Run a trace through the real engine here and compare with the simulator");
  r->add_option("--device", a->device, "Profile of this machine (device calibrate)")->required();
  r->add_option("--model", a->model, "Catalog model")->required();
  r->add_option("--weights", a->weights,
                "Weight file (weights make); its header gives the quantization")
      ->required();
  r->add_option("--quant", a->quant,
                "Expected quantization (int4-g32, ...); an error when the file differs");
  r->add_option("--trace", a->trace, "Trace (default: the model's generated trace)");
  r->add_option("--strategy", a->strategy, "powerinfer2 | llmflash | llamacpp | in_memory")
      ->capture_default_str();
  auto* memory = r->add_option("--memory", a->memory, "Whole-process memory budget");
  auto* ffn = r->add_option("--ffn-resident", a->ffn_resident, "Share of FFN weights cached")
                  ->check(InRange(0, 1));
  memory->excludes(ffn);
  r->add_option("--policy", a->policy, "Cache policy");
  r->add_option("--tokens", a->tokens, "Decode tokens")
      ->capture_default_str()
      ->check(InRange(1, kMaxTokensOption));
  r->add_option("--threads", a->threads, "Compute threads")->check(InRange(1, kMaxThreads));
  r->add_option("--option", a->options, "Strategy option key=value (repeatable)");
  r->add_option("--io", a->io, "uring | pread | auto")
      ->capture_default_str()
      ->check(CLI::IsMember({"uring", "pread", "auto"}));
  r->add_option("--profile", a->profile,
                "Offline activation profile: generator, oracle or a trace file (see simulate)")
      ->capture_default_str();
  r->add_option("--seed", a->seed, "Seed of the generated trace")
      ->capture_default_str()
      ->check(InRange(0, 1.8e19));
  r->add_flag("--json", a->json, "Print measured and predicted as JSON");
  r->add_flag("--cold-storage", a->cold_storage,
              "Do not read the weight file once before the run (by default it is, as device "
              "calibrate reads the file it measures: storage that caches what was read, such as "
              "a virtual disk, is then as calibrated)");
  r->add_flag(
      "--recheck-compute", a->recheck_compute,
      "Measure this machine's compute rates again just before and after the run (about 3 "
      "s each, 512 MiB) and predict also at them: the error left is the model's, not the machine's "
      "drift since device calibrate");
  r->add_flag("--recheck-storage", a->recheck_storage,
              "Measure this machine's storage again just before and after the run (random "
              "O_DIRECT reads of the weight file at the profile's point nearest 8 KiB at depth "
              "32, about 0.5 s and up to 256 MiB of buffers; mapped runs also its read-ahead, 7 x "
              "256 MiB) and predict also "
              "at it: the error left is the model's, not the disk's drift since device calibrate");
  r->add_option("--db", a->db, "Store the measured and the predicted run (linked) here");
  r->callback([&dispatch, a] { dispatch.action = [a] { return RunReplay(*a); }; });
}

}  // namespace sparseflash::cli
