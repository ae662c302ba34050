// llama.cpp's weights under the kernel's page cache, simulated: which part of a
// cyclically read file the page cache keeps, and the read-ahead that overlaps
// reads with the faulting threads' compute.
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/model_bytes.h"
#include "engine/run_summary.h"
#include "gtest/gtest.h"
#include "tests/simulate_test_util.h"

namespace sparseflash {
namespace {

using testing::Config;

// llama.cpp reads its mmap-ed weights cyclically: a strict-LRU page cache
// smaller than the file evicts each page just before it is needed again, while
// the phone kernels' refault protection keeps a stable part of the file.
TEST(Simulate, RefaultProtectedPageCacheKeepsPartOfACyclicallyReadFile) {
  std::map<std::string, double> bytes;
  for (std::string pc : {"lru", "mglru"}) {
    SimulationConfig c = Config("llamacpp", "bamboo-7b", "oneplus12");
    c.ffn_resident = 0.6;
    c.options = {"page_cache=" + pc};
    absl::StatusOr<SimulationResult> r = Simulate(c);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->options.at("page_cache"), pc);
    bytes[pc] = Summarize(r->record).flash_bytes_per_token;
  }
  const double ffn = ComputeModelBytes(*LoadModel("bamboo-7b")).ffn_bytes;
  EXPECT_GT(bytes["lru"], 0.9 * ffn) << "strict LRU keeps nothing of a cyclic scan";
  EXPECT_LT(bytes["mglru"], 0.7 * bytes["lru"]);
  SimulationConfig defaults = Config("llamacpp", "bamboo-7b", "oneplus12");
  defaults.ffn_resident = 0.6;
  absl::StatusOr<SimulationResult> r = Simulate(defaults);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->options.at("page_cache"), "mglru") << "the phone profile's kernel";
}

// llama.cpp's faulting threads wait for the first read-around window of their
// part of a matrix; the kernel's read-ahead streams the rest while they compute.
// So reads and compute overlap: with both taking about as long alone, a token
// takes well under their sum. And the window is the device's read-ahead
// (doubled by llama.cpp's POSIX_FADV_SEQUENTIAL): larger windows, larger reads.
TEST(Simulate, LlamaCppReadsAheadWhileItComputes) {
  auto latency = [](double flash_scale, double cpu_scale, int read_ahead_kb) {
    SimulationConfig c = Config("llamacpp", "bamboo-7b", "oneplus12");
    c.ffn_resident = 0.3;
    c.options = {"page_cache=lru"};
    c.device.flash.read_ahead_kb = read_ahead_kb;
    for (FlashPoint& p : c.device.flash.points) p.throughput_bytes_per_s *= flash_scale;
    for (CoreClassSpec& k : c.device.cores) k.gemv_bytes_per_s *= cpu_scale;
    c.device.dram.cpu_bytes_per_s *= std::max(1.0, cpu_scale);
    c.device.dram.combined_bytes_per_s *= std::max(1.0, cpu_scale);
    absl::StatusOr<SimulationResult> r = Simulate(c);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return 0.0;
    EXPECT_EQ(r->options.at("read_ahead_kb"), absl::StrCat(read_ahead_kb));
    EXPECT_GT(Summarize(r->record).flash_bytes_per_token,
              0.9 * ComputeModelBytes(c.model).ffn_bytes);
    return Summarize(r->record).latency_ms_mean;
  };
  const double io_alone = latency(1, 1000, 128);
  const double compute_alone = latency(1000, 1, 128);
  ASSERT_GT(io_alone, 0);
  ASSERT_GT(compute_alone, 0);
  // Slow the CPU until compute alone takes as long as the reads alone.
  const double cpu_scale = compute_alone / io_alone;
  const double balanced_compute = latency(1000, cpu_scale, 128);
  EXPECT_NEAR(balanced_compute, io_alone, 0.15 * io_alone);
  const double both = latency(1, cpu_scale, 128);
  EXPECT_GE(both, 0.95 * std::max(io_alone, balanced_compute));
  EXPECT_LT(both, 0.75 * (io_alone + balanced_compute)) << "reads overlap compute";
  EXPECT_LT(latency(1, 1000, 2048), io_alone) << "4 MiB windows read faster than 256 KiB";
}

// The kernel sends a read-ahead window as requests of at most the device's
// largest request, all in flight, with the next window's behind them. On a
// device whose throughput grows with the reads in flight, 1 MiB requests read
// a 16 MiB window many times faster than one 16 MiB request; on one whose
// throughput does not, the split changes nothing.
TEST(Simulate, LlamaCppSendsAWindowAsTheDevicesLargestRequests) {
  auto latency = [](double deep_mb_s, int max_request_kb) {
    SimulationConfig c = Config("llamacpp", "bamboo-7b", "oneplus12");
    c.ffn_resident = 0.3;
    c.threads = 1;
    c.options = {"page_cache=lru"};
    c.device.flash.read_ahead_kb = 8192;  // windows of 16 MiB (POSIX_FADV_SEQUENTIAL)
    c.device.flash.max_request_kb = max_request_kb;
    c.device.flash.points.clear();
    for (bool sequential : {false, true}) {
      c.device.flash.points.push_back({.request_bytes = 1 << 20,
                                       .queue_depth = 1,
                                       .sequential = sequential,
                                       .throughput_bytes_per_s = 100e6});
      c.device.flash.points.push_back({.request_bytes = 1 << 20,
                                       .queue_depth = 64,
                                       .sequential = sequential,
                                       .throughput_bytes_per_s = deep_mb_s * 1e6});
    }
    for (CoreClassSpec& k : c.device.cores) k.gemv_bytes_per_s *= 1000;  // I/O alone
    absl::StatusOr<SimulationResult> r = Simulate(c);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return 0.0;
    EXPECT_EQ(r->options.at("max_request_kb"), absl::StrCat(max_request_kb));
    return Summarize(r->record).latency_ms_mean;
  };
  const double whole = latency(6400, 16384), split = latency(6400, 1024);
  ASSERT_GT(split, 0);
  EXPECT_GT(whole, 8 * split) << "16 requests and the next window's 16 in flight, not 1";
  const double flat_whole = latency(100, 16384), flat_split = latency(100, 1024);
  EXPECT_NEAR(flat_split, flat_whole, 0.1 * flat_whole) << "no gain where depth gains nothing";

  SimulationConfig bad = Config("llamacpp");
  bad.options = {"max_request_kb=6"};
  absl::StatusOr<SimulationResult> r = Simulate(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("max_request_kb"), std::string::npos) << r.status();
}

// The file has one read-ahead stream: with one thread reading the whole file
// each token, the next matrix's first window is requested while the matrix
// before is read, so the device streams at two windows in flight from the
// first window of a token to its last, and a token takes its bytes over that
// rate, not a blocking one-window read per matrix on top.
TEST(Simulate, LlamaCppReadAheadRunsOnAcrossMatrices) {
  SimulationConfig c = Config("llamacpp", "bamboo-7b", "oneplus12");
  c.ffn_resident = 0.3;
  c.threads = 1;
  c.options = {"page_cache=lru"};
  c.device.flash.read_ahead_kb = 8192;  // windows of 16 MiB: 16 requests of 1 MiB
  c.device.flash.max_request_kb = 1024;
  c.device.flash.submit_overhead_ns = c.device.flash.resubmit_gap_ns = 0;
  c.device.flash.points.clear();
  for (bool sequential : {false, true}) {
    for (auto [depth, mb_s] : {std::pair{16, 1600.0}, {32, 3200.0}, {64, 3200.0}}) {
      c.device.flash.points.push_back({.request_bytes = 1 << 20,
                                       .queue_depth = depth,
                                       .sequential = sequential,
                                       .throughput_bytes_per_s = mb_s * 1e6});
    }
  }
  for (CoreClassSpec& k : c.device.cores) k.gemv_bytes_per_s *= 1000;  // I/O alone
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  const RunSummary s = Summarize(r->record);
  const double streamed_ms = s.flash_bytes_per_token / 3200e6 * 1e3;
  EXPECT_NEAR(s.latency_ms_mean, streamed_ms, 0.05 * streamed_ms)
      << "a blocking first window per matrix at one window in flight would add about 25 %";
}

// llama.cpp's threads take a matrix's chunks of 64 rows in turn, so their page
// faults are one sequential stream, and the kernel keeps one read-ahead state
// per file: however many threads compute, the device sees two windows in
// flight (a third at a matrix's boundary), not two per thread.
TEST(Simulate, LlamaCppThreadsShareOneReadAheadStream) {
  auto offered = [](int threads) {
    SimulationConfig c = Config("llamacpp", "bamboo-7b", "oneplus12");
    c.ffn_resident = 0.3;
    c.threads = threads;
    c.options = {"page_cache=lru"};
    c.device.flash.read_ahead_kb = 8192;  // windows of 16 MiB: 16 requests of 1 MiB
    c.device.flash.max_request_kb = 1024;
    c.device.flash.command_queue_depth = 1024;  // the device's queue caps nothing
    absl::StatusOr<SimulationResult> r = Simulate(c);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return 0.0;
    EXPECT_EQ(r->options.at("threads"), absl::StrCat(threads));
    return Summarize(r->record).flash_reads_offered;
  };
  const double one = offered(1), four = offered(4);
  EXPECT_GT(one, 16) << "more than one window in flight";
  EXPECT_LE(one, 3 * 16);
  EXPECT_LE(four, 3 * 16) << "four threads fault one stream, not four";
  EXPECT_NEAR(four, one, 0.25 * one);
}

// llama.cpp maps its weights, so by default the kernel reads the windows and
// they are priced from the profile's page-cache points (a calibrated profile
// has them: the read-ahead of a mapped file); with mmap=false the engine reads
// them itself, priced from its direct points. The plan, and so the bytes, is
// the same.
TEST(Simulate, LlamaCppPricesTheKernelsReadsFromPageCachePoints) {
  auto run = [](const std::string& mmap) {
    SimulationConfig c = Config("llamacpp", "bamboo-7b", "oneplus12");
    c.ffn_resident = 0.3;
    c.threads = 1;
    c.options = {"page_cache=lru"};
    if (!mmap.empty()) c.options.push_back("mmap=" + mmap);
    c.device.flash.read_ahead_kb = 8192;
    c.device.flash.max_request_kb = 4096;
    c.device.flash.submit_overhead_ns = c.device.flash.resubmit_gap_ns = 0;
    c.device.flash.points.clear();
    // Rates the same at every depth, so how deep each reader's queue runs
    // (a direct batch's tail drains, the kernel's stream does not) cannot matter.
    for (int depth : {1, 8}) {
      for (bool sequential : {false, true}) {
        c.device.flash.points.push_back({.request_bytes = 4 << 20,
                                         .queue_depth = depth,
                                         .sequential = sequential,
                                         .throughput_bytes_per_s = 2000e6});
      }
      c.device.flash.points.push_back({.request_bytes = 4 << 20,
                                       .queue_depth = depth,
                                       .sequential = true,
                                       .throughput_bytes_per_s = 1000e6,
                                       .page_cache = true});
    }
    for (CoreClassSpec& k : c.device.cores) k.gemv_bytes_per_s *= 1000;  // I/O alone
    absl::StatusOr<SimulationResult> r = Simulate(c);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return std::pair{0.0, 0.0};
    EXPECT_EQ(r->options.at("mmap"), mmap.empty() ? "true" : mmap);
    const RunSummary s = Summarize(r->record);
    return std::pair{s.latency_ms_mean, s.flash_bytes_per_token};
  };
  const auto [mapped_ms, mapped_bytes] = run("");
  const auto [direct_ms, direct_bytes] = run("false");
  ASSERT_GT(direct_ms, 0);
  EXPECT_EQ(mapped_bytes, direct_bytes);
  EXPECT_NEAR(mapped_ms / direct_ms, 2.0, 0.1) << "half the rate, twice the time";
}

}  // namespace
}  // namespace sparseflash
