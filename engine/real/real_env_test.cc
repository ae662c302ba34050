// The real devices on a small file: both back ends read the right bytes with
// O_DIRECT, honour the batch's limit on reads in flight, and the wrappers see
// every batch.
#include "engine/real/real_env.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/real/calibrate.h"
#include "engine/real/calibrate_cpu.h"
#include "engine/real/mapped_weights.h"
#include "engine/real/real_run.h"
#include "gtest/gtest.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

struct Sink : CompletionSink {
  std::vector<std::pair<uint64_t, bool>> reads;
  void OnReadDone(uint64_t tag, bool ok) override { reads.push_back({tag, ok}); }
  void OnComputeDone(uint64_t) override {}
};

std::string PageFile() {
  const std::string path = ::testing::TempDir() + "/pages.bin";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (int page = 0; page < 16; ++page) {
    std::string bytes(4096, static_cast<char>('a' + page));
    out << bytes;
  }
  return path;
}

// A read target of `offsets`, one page each, into a page-aligned buffer it
// frees itself (null where it could not be had).
struct PageTarget {
  explicit PageTarget(std::vector<int64_t> offsets) : target(std::make_shared<ReadTarget>()) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, offsets.size() * 4096) == 0) memory.reset(p);
    target->offsets = std::move(offsets);
    target->buffer = static_cast<uint8_t*>(memory.get());
  }
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> memory;
  std::shared_ptr<ReadTarget> target;
};

class RealDevices : public ::testing::TestWithParam<const char*> {
 protected:
  // The device under test (GetParam(): its back end) over PageFile().
  absl::StatusOr<std::unique_ptr<FlashDevice>> Open(int queue_depth) {
    return OpenFlashDevice({.path = PageFile(), .queue_depth = queue_depth, .io = GetParam()},
                           &queue_, &notice_);
  }
  CompletionQueue queue_;
  std::string notice_;
};

TEST_P(RealDevices, ReadTheRightPagesAndReportEachBatch) {
  auto dev = Open(4);
  ASSERT_TRUE(dev.ok()) << dev.status();
  TracingFlashDevice traced(*std::move(dev));
  Sink sink;
  traced.SetSink(&sink);
  PageTarget pages({5 * 4096, 0, 15 * 4096});
  ASSERT_NE(pages.memory, nullptr);
  const std::shared_ptr<ReadTarget>& target = pages.target;
  traced.Submit(
      {.tag = 7, .request_bytes = 4096, .count = 3, .max_in_flight = 1, .target = target});
  while (sink.reads.empty()) queue_.Pop()();
  EXPECT_EQ(sink.reads[0], (std::pair<uint64_t, bool>{7, true}));
  EXPECT_EQ(target->buffer[0], 'f');
  EXPECT_EQ(target->buffer[4096], 'a');
  EXPECT_EQ(target->buffer[2 * 4096 + 100], 'p');
  EXPECT_EQ(traced.bytes_read(), 3 * 4096);
  ASSERT_EQ(traced.entries().size(), 1u);
  EXPECT_EQ(traced.entries()[0].first_offset, 5 * 4096);
  EXPECT_TRUE(traced.entries()[0].ok);
}

TEST_P(RealDevices, ReadPastTheEndFails) {
  auto dev = Open(4);
  ASSERT_TRUE(dev.ok());
  Sink sink;
  (*dev)->SetSink(&sink);
  PageTarget pages({64 * 4096});
  ASSERT_NE(pages.memory, nullptr);
  (*dev)->Submit({.tag = 1, .request_bytes = 4096, .count = 1, .target = pages.target});
  while (sink.reads.empty()) queue_.Pop()();
  EXPECT_FALSE(sink.reads[0].second);
}

// The device counts the reads it holds over time, and those the batch offered
// it: never more held than offered, nor more offered than the batch's limit,
// and some while it is busy.
TEST_P(RealDevices, CountTheReadsTheyHoldInFlight) {
  auto dev = Open(8);
  ASSERT_TRUE(dev.ok()) << dev.status();
  Sink sink;
  (*dev)->SetSink(&sink);
  std::vector<int64_t> backwards;
  for (int i = 0; i < 16; ++i) backwards.push_back(int64_t{15 - i} * 4096);
  PageTarget pages(backwards);
  ASSERT_NE(pages.memory, nullptr);
  (*dev)->Submit(
      {.tag = 3, .request_bytes = 4096, .count = 16, .max_in_flight = 2, .target = pages.target});
  while (sink.reads.empty()) queue_.Pop()();
  ASSERT_TRUE(sink.reads[0].second);
  const int64_t busy = (*dev)->busy_time().ns, held = (*dev)->held_time().ns;
  const int64_t offered = (*dev)->offered_time().ns;
  EXPECT_GT(held, 0);
  EXPECT_LE(held, offered) << "held " << held << " ns of reads, offered " << offered;
  EXPECT_LE(offered, 2 * busy) << "offered " << offered << " ns of reads in " << busy << " ns";
}

TEST(DeviceCounters, IntegrateTheReadsInFlightOverTime) {
  DeviceCounters c(/*queue=*/4);
  c.Reads(1000, 2);
  c.Reads(1010, -1);  // two for 10 ns
  c.Reads(1030, -1);  // one for 20 ns
  c.Reads(5000, 3);   // none for the gap
  c.Reads(5005, -3);  // three for 5 ns
  EXPECT_EQ(c.held_time().ns, 2 * 10 + 20 + 15);
  c.Offered(0, 5);    // five offered to a queue of four: four for 10 ns
  c.Offered(10, -3);  // two for 10 ns
  c.Offered(20, -2);
  EXPECT_EQ(c.offered_time().ns, 4 * 10 + 2 * 10);
}

INSTANTIATE_TEST_SUITE_P(Backends, RealDevices, ::testing::Values("auto", "pread"));

TEST(RealDevices, MissingFileNamesIt) {
  CompletionQueue queue;
  std::string notice;
  auto dev = OpenFlashDevice({.path = "/nonexistent/weights.bin"}, &queue, &notice);
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.status().message().find("/nonexistent/weights.bin"), std::string::npos);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

TEST(Calibrate, FlashPointsAreMadeMonotoneInDepth) {
  auto point = [](int64_t size, int depth, double mb_s) {
    return FlashPoint{
        .request_bytes = size, .queue_depth = depth, .throughput_bytes_per_s = mb_s * 1e6};
  };
  std::vector<FlashPoint> points = {point(131072, 1, 689), point(131072, 2, 1100),
                                    point(131072, 4, 861), point(131072, 8, 1158),
                                    point(4096, 1, 90),    point(4096, 2, 154)};
  FitMonotoneInDepth(points);
  EXPECT_DOUBLE_EQ(points[0].throughput_bytes_per_s, 689e6);
  EXPECT_DOUBLE_EQ(points[1].throughput_bytes_per_s, 980.5e6);  // the dip pooled with its peak
  EXPECT_DOUBLE_EQ(points[2].throughput_bytes_per_s, 980.5e6);
  EXPECT_DOUBLE_EQ(points[3].throughput_bytes_per_s, 1158e6);
  EXPECT_NE(points[1].source.find("1100.0 MB/s measured"), std::string::npos);
  EXPECT_DOUBLE_EQ(points[5].throughput_bytes_per_s, 154e6);  // already monotone: unchanged
  EXPECT_TRUE(points[5].source.empty());
}

// The kernel's read-ahead through a mapping and the engine's own O_DIRECT reads
// of the same windows are two readers: a slower page-cache point at a depth
// does not pull the direct points at that size down, nor they it up.
TEST(Calibrate, ReadersAreFittedApart) {
  std::vector<FlashPoint> points = {{.request_bytes = 4 << 20,
                                     .queue_depth = 4,
                                     .sequential = true,
                                     .throughput_bytes_per_s = 1900e6},
                                    {.request_bytes = 4 << 20,
                                     .queue_depth = 8,
                                     .sequential = true,
                                     .throughput_bytes_per_s = 2000e6},
                                    {.request_bytes = 4 << 20,
                                     .queue_depth = 8,
                                     .sequential = true,
                                     .throughput_bytes_per_s = 1800e6,
                                     .page_cache = true}};
  FitMonotoneInDepth(points);
  EXPECT_DOUBLE_EQ(points[0].throughput_bytes_per_s, 1900e6);
  EXPECT_DOUBLE_EQ(points[1].throughput_bytes_per_s, 2000e6);
  EXPECT_DOUBLE_EQ(points[2].throughput_bytes_per_s, 1800e6);
  points[2].page_cache = false;  // one reader: the dip at depth 8 is pooled
  FitMonotoneInDepth(points);
  EXPECT_LT(points[1].throughput_bytes_per_s, 2000e6);
}

// The read-ahead and the largest request calibration records are the ones the
// kernel reports for the device holding the file, where it reports them.
TEST(Calibrate, ReadAheadAndLargestRequestAreTheBlockDevicesOwn) {
  const std::string path = testing::TempDir();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  for (const char* attribute : {"read_ahead_kb", "max_sectors_kb"}) {
    std::ifstream sys(absl::StrFormat("/sys/dev/block/%u:%u/queue/%s", major(st.st_dev),
                                      minor(st.st_dev), attribute));
    const int kb = std::string(attribute) == "read_ahead_kb" ? BlockDeviceReadAheadKb(path)
                                                             : BlockDeviceMaxRequestKb(path);
    int expected = 0;
    if (sys >> expected && expected >= 4) {
      EXPECT_EQ(kb, expected - expected % 4) << attribute;
    } else {
      EXPECT_TRUE(kb == 0 || (kb >= 4 && kb % 4 == 0)) << attribute << " " << kb;
    }
  }
  EXPECT_EQ(BlockDeviceReadAheadKb("/nonexistent/file"), 0);
  EXPECT_EQ(BlockDeviceMaxRequestKb("/nonexistent/file"), 0);
}

// The hand-off is measured as the engine hands tasks over, one at a time with
// real work, and where the cost steps up after longer waits the step and the
// window are stated consistently: a wait inside the ladder of task lengths.
TEST(Calibrate, TheTaskHandOffIsMeasuredOneTaskAtATime) {
  const calibration::HandOff h = calibration::MeasureHandOff(/*tasks=*/10);
  EXPECT_GT(h.dispatch_ns, 0);
  // Bursts of 50 us tasks less their work: what remains is the queueing, far
  // below a task's length unless the work was not subtracted.
  EXPECT_LT(h.queued_ns, 10e6) << "a queued task costing 10 ms is no measurement";
  EXPECT_LT(h.dispatch_ns, 10e6) << "a hand-off of 10 ms is no measurement";
  EXPECT_GE(h.idle_wake_ns, 0);
  if (h.idle_wake_ns > 0) {
    EXPECT_GE(h.idle_wake_ns, std::max(5e3, h.dispatch_ns / 2)) << "a smaller step is noise";
    EXPECT_GE(h.idle_window_ns, 0);
    EXPECT_LE(h.idle_window_ns, 1e6);
  } else {
    EXPECT_EQ(h.idle_window_ns, 0) << "no step, no window";
  }
}

// A real run computes each model in its own weight format, and calibration
// prices every integer format a catalog model uses under the model's name for
// it, so the simulator finds the rate of the format the real run computes.
TEST(Calibrate, EveryCatalogFormatTheRealKernelRunsIsPriced) {
  std::vector<std::string> spreads;
  const std::vector<KernelRateSpec> rates =
      calibration::MeasureFormats(/*seconds=*/0.01, /*threads=*/1, /*dram_cap=*/1e12,
                                  /*span_bytes=*/16 << 20, /*wide_span_bytes=*/64 << 20, &spreads);
  ASSERT_FALSE(rates.empty());
  // One line per format of its passes' lowest and highest rates.
  ASSERT_EQ(spreads.size(), rates.size());
  for (size_t i = 0; i < rates.size(); ++i) {
    EXPECT_EQ(spreads[i].rfind(rates[i].format + " ", 0), 0u) << spreads[i];
    double lo = 0, hi = 0;
    ASSERT_EQ(std::sscanf(spreads[i].c_str() + rates[i].format.size(), " %lf-%lf", &lo, &hi), 2)
        << spreads[i];
    EXPECT_GT(lo, 0) << spreads[i];
    EXPECT_LE(lo, hi) << spreads[i];
    // Within the rounding of three significant digits.
    const double median = rates[i].gemv_bytes_per_s / 1e9;
    EXPECT_NEAR(median, std::clamp(median, lo, hi), 0.006 * median)
        << "the median lies between the lowest and highest pass: " << spreads[i];
  }
  ASSERT_EQ(rates.size(), std::size(calibration::kFormatShapes));
  for (size_t i = 0; i < rates.size(); ++i) {
    const KernelRateSpec& r = rates[i];
    EXPECT_GT(r.gemv_bytes_per_s, 0) << r.format;
    EXPECT_GT(r.dense_gemv_bytes_per_s, 0) << r.format;
    // The scattered rate over the wider arena, stated with both spans.
    EXPECT_EQ(r.span.span_bytes, 16 << 20) << r.format;
    EXPECT_EQ(r.span.wide_span_bytes, 64 << 20) << r.format;
    EXPECT_GT(r.span.wide_gemv_bytes_per_s, 0) << r.format;
    EXPECT_GE(r.span.wide_gemv_alone_bytes_per_s, r.span.wide_gemv_bytes_per_s) << r.format;
    // Every call quantizes x and folds the output: a cost above zero, and the
    // intercept of the calls' line, below what a call of 512 bundles spends on
    // its bundles (a bound that scales with the machine, emulated or not).
    EXPECT_GT(r.call_ns, 0) << r.format;
    const double bundles_512_ns =
        512.0 * calibration::kFormatShapes[i].bundle_bytes() / r.gemv_bytes_per_s * 1e9;
    EXPECT_LT(r.call_ns, bundles_512_ns) << r.format;
  }
  for (const ModelSpec& model : ModelCatalog::Builtin().models()) {
    const FfnKernelShape shape = KernelShapeOf(model);
    EXPECT_EQ(shape.gated, model.ffn_type == FfnType::kGated) << model.name;
    const Quantization& q = model.quantization;
    if (q.kind != QuantKind::kInt4 && q.kind != QuantKind::kInt8) {
      EXPECT_EQ(shape.bits, 4) << model.name << ": no kernel path, INT4 g32 stands in";
      EXPECT_EQ(shape.group, 32) << model.name;
      continue;
    }
    EXPECT_EQ(shape.bits, q.kind == QuantKind::kInt4 ? 4 : 8) << model.name;
    EXPECT_EQ(shape.group, q.group_size) << model.name;
    const bool priced = std::any_of(rates.begin(), rates.end(),
                                    [&](const KernelRateSpec& r) { return r.format == q.Name(); });
    EXPECT_TRUE(priced) << model.name << " runs " << q.Name() << ", which calibration skips";
  }
}

// llama.cpp's threads take a matrix's chunks of rows in turn: the stripes
// together cover the range once, each chunk by one stripe, and at any point
// the stripes are within one round of chunks of each other (their page faults
// are one stream through the file, not one per thread).
TEST(StripeChunks, TogetherCoverTheRangeOnceInTurns) {
  for (int stripes : {1, 2, 3, 4}) {
    for (int64_t range : {int64_t{0}, int64_t{1}, int64_t{21}, int64_t{100}, int64_t{1000}}) {
      std::vector<int> owner(static_cast<size_t>(range), -1);
      for (int s = 0; s < stripes; ++s) {
        int64_t round = 0;
        ForEachStripeChunk(range, 22, s, stripes, [&](int64_t at, int64_t count) {
          ASSERT_GT(count, 0);
          ASSERT_LE(at + count, range);
          if (stripes > 1) {
            EXPECT_EQ(at, (round * stripes + s) * 22) << "stripe " << s << " takes its turn";
          }
          ++round;
          for (int64_t i = at; i < at + count; ++i) {
            EXPECT_EQ(owner[i], -1) << "item " << i << " taken twice";
            owner[i] = s;
          }
        });
      }
      for (int64_t i = 0; i < range; ++i) {
        EXPECT_NE(owner[i], -1) << "item " << i << " of " << range << ", " << stripes << " stripes";
      }
    }
  }
}

}  // namespace
}  // namespace sparseflash
