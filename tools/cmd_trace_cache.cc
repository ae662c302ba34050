// sparseflash trace cachesim, and trace export --format oracle-general: a
// trace's cache requests as libCacheSim's oracleGeneral stream, and the
// eviction policies run over such a stream (a trace or an oracleGeneral file).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "engine/eviction_policy.h"
#include "engine/request_stream.h"
#include "engine/stream_cachesim.h"
#include "engine/synthetic_stream.h"
#include "engine/token_source.h"
#include "nlohmann/json.hpp"
#include "tools/cli.h"
#include "traces/trace_format.h"

namespace sparseflash::cli {
namespace {

absl::StatusOr<AccessSet> ParseAccessSet(const std::string& name) {
  if (name == "active") return AccessSet::kActive;
  if (name == "predicted") return AccessSet::kPredicted;
  return absl::InvalidArgumentError(absl::StrCat("--set '", name, "': give active or predicted"));
}

absl::StatusOr<RequestStream> StreamOfTrace(const std::string& path, const std::string& set,
                                            int64_t object_bytes) {
  absl::StatusOr<AccessSet> access = ParseAccessSet(set);
  if (!access.ok()) return access.status();
  if (object_bytes <= 0 || object_bytes > UINT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("--object-bytes ", object_bytes, ": give 1 to 4294967295"));
  }
  absl::StatusOr<std::unique_ptr<TokenSource>> source = OpenTraceSource(path);
  if (!source.ok()) return source.status();
  return CollectRequestStream(**source, *access, static_cast<uint32_t>(object_bytes));
}

bool IsTraceFile(const std::string& path) {
  char magic[sizeof(trace_format::kMagic)] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(magic, sizeof(magic)) &&
         std::memcmp(magic, trace_format::kMagic, sizeof(trace_format::kMagic)) == 0;
}

// "25%" of the working set, or a byte size ("64MiB").
absl::StatusOr<int64_t> CacheBytes(const std::string& size, int64_t working_set) {
  if (!size.empty() && size.back() == '%') {
    double share;
    if (!absl::SimpleAtod(size.substr(0, size.size() - 1), &share) || !(share > 0) || share > 100) {
      return absl::InvalidArgumentError(
          absl::StrCat("--size '", size, "': a share is above 0% and at most 100%"));
    }
    return static_cast<int64_t>(share / 100 * static_cast<double>(working_set));
  }
  absl::StatusOr<int64_t> bytes = ParseByteSize(size);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--size '", size, "': ", bytes.status().message()));
  }
  return bytes;
}

struct CachesimArgs {
  std::string stream;
  std::vector<std::string> policies = {"lru", "fifo", "lfu", "sieve", "s3fifo", "belady"};
  std::vector<std::string> sizes = {"10%", "25%", "50%"};
  std::string set = "active";
  int64_t object_bytes = 8192;
  int repeat = 1;
  bool lru_curve = false;
  bool json = false;
};

// `repeat` runs; the loop time is their median (the misses are the same every time).
absl::StatusOr<StreamCacheResult> RepeatedRun(const RequestStream& stream,
                                              const std::string& policy, int64_t bytes,
                                              int repeat) {
  std::vector<double> seconds;
  absl::StatusOr<StreamCacheResult> r;
  for (int i = 0; i < repeat; ++i) {
    r = RunPolicyOnStream(stream, policy, bytes);
    if (!r.ok()) return r.status();
    seconds.push_back(r->loop_seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  r->loop_seconds = seconds[seconds.size() / 2];
  return r;
}

int RunCachesim(const CachesimArgs& a) {
  // The sizes' form is checked before the stream is read (a share's bytes need its working set).
  for (const std::string& size : a.sizes) {
    if (absl::StatusOr<int64_t> bytes = CacheBytes(size, 1); !bytes.ok()) {
      return ReportError(bytes.status());
    }
  }
  const bool trace = IsTraceFile(a.stream);
  absl::StatusOr<RequestStream> stream =
      trace ? StreamOfTrace(a.stream, a.set, a.object_bytes) : ReadOracleGeneral(a.stream);
  if (!stream.ok()) return ReportError(stream.status());
  const int64_t working_set = WorkingSetBytes(*stream);
  std::fprintf(stderr, "%s (%s): %zu requests, %u objects of %u bytes (working set %s)\n",
               a.stream.c_str(), trace ? "trace" : "oracleGeneral", stream->requests(),
               stream->key_space(), stream->object_bytes, FormatBytes(working_set).c_str());
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  if (!a.json) {
    std::printf("%-9s %8s %16s %12s %12s %10s %10s\n", "policy", "size", "bytes", "requests",
                "misses", "miss_ratio", "Mreq/s");
  }
  auto emit = [&](const std::string& size, const StreamCacheResult& r) {
    const double rate = r.loop_seconds > 0 ? r.requests / r.loop_seconds / 1e6 : 0;
    if (a.json) {
      rows.push_back({{"policy", r.policy},
                      {"size", size},
                      {"capacity_bytes", r.capacity_bytes},
                      {"requests", r.requests},
                      {"misses", r.misses},
                      {"miss_ratio", r.miss_ratio()},
                      {"loop_seconds", r.loop_seconds}});
    } else {
      std::printf("%-9s %8s %16lld %12llu %12llu %10.6f %10.2f\n", r.policy.c_str(), size.c_str(),
                  static_cast<long long>(r.capacity_bytes),
                  static_cast<unsigned long long>(r.requests),
                  static_cast<unsigned long long>(r.misses), r.miss_ratio(), rate);
    }
  };
  std::vector<uint64_t> lru_curve;
  double curve_seconds = 0;
  if (a.lru_curve) {
    const auto start = std::chrono::steady_clock::now();
    lru_curve = LruMissesByEntries(*stream);
    curve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  for (const std::string& size : a.sizes) {
    absl::StatusOr<int64_t> bytes = CacheBytes(size, working_set);
    if (!bytes.ok()) return ReportError(bytes.status());
    for (const std::string& policy : a.policies) {
      absl::StatusOr<StreamCacheResult> r = RepeatedRun(*stream, policy, *bytes, a.repeat);
      if (!r.ok()) return ReportError(r.status());
      emit(size, *r);
    }
    if (a.lru_curve) {
      const auto entries = static_cast<size_t>(*bytes / stream->object_bytes);
      emit(size, {.policy = "lru-stack",
                  .capacity_bytes = *bytes,
                  .requests = stream->requests(),
                  .misses = lru_curve[std::min(entries, lru_curve.size() - 1)],
                  .loop_seconds = curve_seconds});
    }
  }
  if (a.json) {
    const nlohmann::ordered_json out = {{"stream", a.stream},
                                        {"format", trace ? "trace" : "oracleGeneral"},
                                        {"requests", stream->requests()},
                                        {"objects", stream->key_space()},
                                        {"object_bytes", stream->object_bytes},
                                        {"runs", rows}};
    std::cout << out.dump(2) << "\n";
  }
  return 0;
}

struct SynthArgs {
  SyntheticStreamOptions options;
  std::string out;
};

// Writes `stream` to `out` and says so, with `what` made it.
int WriteStream(const RequestStream& stream, const std::string& out, const std::string& what) {
  if (absl::Status s = WriteOracleGeneral(stream, out); !s.ok()) return ReportError(s);
  std::fprintf(stderr, "wrote %s: %zu requests, %u objects (oracleGeneral, %s)\n", out.c_str(),
               stream.requests(), stream.key_space(), what.c_str());
  return 0;
}

int RunSynth(const SynthArgs& a) {
  absl::StatusOr<RequestStream> stream = MakeSyntheticStream(a.options);
  if (!stream.ok()) return ReportError(stream.status());
  return WriteStream(*stream, a.out, absl::StrCat("synthetic, seed ", a.options.seed));
}

}  // namespace

int RunExportRequests(const std::string& trace, const std::string& out, const std::string& set,
                      int64_t object_bytes) {
  if (out.empty())
    return ReportError(absl::InvalidArgumentError("--format oracle-general needs --out FILE"));
  absl::StatusOr<RequestStream> stream = StreamOfTrace(trace, set, object_bytes);
  if (!stream.ok()) return ReportError(stream.status());
  return WriteStream(*stream, out, absl::StrCat(set, " neurons of ", trace));
}

void AddTraceCacheCommands(CLI::App& trace, Dispatch& dispatch) {
  auto a = std::make_shared<CachesimArgs>();
  CLI::App* sim = trace.add_subcommand(
      "cachesim",
      "Run eviction policies over a cache request stream (a trace's neuron accesses, or a "
      "libCacheSim oracleGeneral file): misses and requests per second, request loop timed alone");
  sim->add_option("stream", a->stream, "Trace file or oracleGeneral file")->required();
  sim->add_option("--policy", a->policies, "Policies (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember(EvictionPolicyNames()));
  sim->add_option("--size", a->sizes,
                  "Cache sizes: a share of the working set ('25%') or bytes ('64MiB'); "
                  "comma-separated")
      ->delimiter(',');
  sim->add_option("--set", a->set, "For a trace: which neurons are requested (active|predicted)");
  sim->add_option("--object-bytes", a->object_bytes,
                  "For a trace: the size of each neuron's object");
  sim->add_option("--repeat", a->repeat,
                  "Runs of each policy and size; the median loop time counts")
      ->check(CLI::Range(1, 1000));
  sim->add_flag("--lru-curve", a->lru_curve,
                "Also LRU at every size from one pass of stack distances (rows 'lru-stack'; "
                "its rate is of that one pass)");
  sim->add_flag("--json", a->json, "Print one JSON object");
  sim->callback([&dispatch, a] { dispatch.action = [a] { return RunCachesim(*a); }; });

  auto y = std::make_shared<SynthArgs>();
  SyntheticStreamOptions& o = y->options;
  CLI::App* synth = trace.add_subcommand(
      "synth-stream",
      "Write a synthetic neuron request stream (libCacheSim oracleGeneral): per token and layer a "
      "set of neurons, part reused from the previous tokens' sets, the rest by Zipf popularity");
  synth->add_option("--out", y->out, "Output oracleGeneral file")->required();
  synth->add_option("--layers", o.layers, "Layers")->capture_default_str();
  synth->add_option("--neurons", o.neurons, "Neurons per layer")->capture_default_str();
  synth->add_option("--active", o.active, "Share of a layer's neurons each token requests")
      ->capture_default_str();
  synth->add_option("--reuse", o.reuse, "Share of a token's set drawn from the window's sets")
      ->capture_default_str();
  synth->add_option("--window", o.window_tokens, "Previous tokens the reuse draws from")
      ->capture_default_str();
  synth->add_option("--zipf", o.zipf_alpha, "Zipf exponent of the other draws")
      ->capture_default_str();
  synth->add_option("--tokens", o.tokens, "Tokens")->capture_default_str();
  synth->add_option("--object-bytes", o.object_bytes, "Each object's size")->capture_default_str();
  synth->add_option("--seed", o.seed, "Random seed (same seed, same bytes)")->capture_default_str();
  synth->callback([&dispatch, y] { dispatch.action = [y] { return RunSynth(*y); }; });
}

}  // namespace sparseflash::cli
