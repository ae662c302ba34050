// Golden tests of the simulated flash and compute on the toy device, where every
// completion time is worked out by hand.
#include <functional>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "sim/sim_compute.h"
#include "sim/sim_flash.h"
#include "sim/toy_device.h"

namespace sparseflash {
namespace {

struct Recorder : CompletionSink {
  explicit Recorder(const EventQueue* q) : q(q) {}
  void OnReadDone(uint64_t tag, bool ok) override { done.push_back({tag, q->now().ns}); }
  void OnComputeDone(uint64_t tag) override { done.push_back({tag, q->now().ns}); }
  const EventQueue* q;
  std::vector<std::pair<uint64_t, int64_t>> done;
};

FlashRead Read(uint64_t tag, int64_t bytes, int count = 1, int in_flight = 1) {
  return {.tag = tag, .request_bytes = bytes, .count = count, .max_in_flight = in_flight};
}

class SimFlash : public ::testing::Test {
 protected:
  void SetUp() override { flash.SetSink(&r); }
  EventQueue q;
  SimFlashDevice flash{&q, ToyDevice(), ""};
  Recorder r{&q};
};

TEST_F(SimFlash, OneReadOfKnownSizeTakesItsTime) {
  flash.Submit(Read(7, 1000000));
  q.Run();
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0], (std::pair<uint64_t, int64_t>{7, 1000000}));  // 1 ms
  EXPECT_EQ(flash.bytes_read(), 1000000);
  EXPECT_EQ(flash.busy_time().ns, 1000000);
}

TEST_F(SimFlash, ConcurrentReadsShareTheBandwidth) {
  flash.Submit(Read(1, 1000000));
  flash.Submit(Read(2, 1000000));
  q.Run();
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0].second, 2000000);  // both at half rate
  EXPECT_EQ(r.done[1].second, 2000000);
}

TEST_F(SimFlash, LateArrivalSlowsTheFirstRead) {
  flash.Submit(Read(1, 1000000));
  q.At(Nanos{500000}, [&] { flash.Submit(Read(2, 1000000)); });
  q.Run();
  // Read 1: 0.5 MB alone, then 0.5 MB at half rate -> 1.5 ms. Read 2: 0.5 MB
  // shared until 1.5 ms, then 0.5 MB alone -> 2.0 ms.
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0], (std::pair<uint64_t, int64_t>{1, 1500000}));
  EXPECT_EQ(r.done[1], (std::pair<uint64_t, int64_t>{2, 2000000}));
}

TEST_F(SimFlash, SmallReadsKeepTheSmallestSizesIops) {
  flash.Submit(Read(1, 250000, 4));  // 1000 IOPS at any size below 1 MB: 4 ms
  q.Run();
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0].second, 4000000);
}

// A device whose curve is `points`: {request bytes, queue depth, sequential, MB/s}.
DeviceProfile CurveDevice(std::initializer_list<std::tuple<int64_t, int, bool, double>> points) {
  DeviceProfile d = ToyDevice();
  d.flash.points.clear();
  for (auto [bytes, depth, sequential, mb_s] : points) {
    d.flash.points.push_back({.request_bytes = bytes,
                              .queue_depth = depth,
                              .sequential = sequential,
                              .throughput_bytes_per_s = mb_s * 1e6});
  }
  return d;
}

// (tag, finish time in ns) of `reads`, submitted at once to `device`, in completion order.
std::vector<std::pair<uint64_t, int64_t>> FinishTimes(const DeviceProfile& device,
                                                      const std::vector<FlashRead>& reads) {
  EventQueue q;
  SimFlashDevice flash(&q, device, "");
  Recorder r(&q);
  flash.SetSink(&r);
  for (const FlashRead& read : reads) flash.Submit(read);
  q.Run();
  return r.done;
}

// One large sequential stream (one read in flight) beside many small random
// reads: each size keeps its own curve at its share of the queue, so the large
// reads are not served as if they queued behind 31 reads of their own size;
// and they share the device's time: each keeps the device busy for its rate
// over its rate alone with every slot (1200 MB/s large, 400 small), and those
// parts add up to one.
// The queue depth the device was offered, as a real device counts it: each
// batch holds its limit of reads (or all it has left), and together at most
// the device's command queue.
TEST(SimFlashDepth, ReadsInFlightAreEachBatchsLimitUpToTheCommandQueue) {
  auto mean_depth = [](std::vector<FlashRead> reads) {
    EventQueue q;
    SimFlashDevice flash(&q, ToyDevice(), "");  // a command queue of 32
    Recorder r(&q);
    flash.SetSink(&r);
    for (const FlashRead& read : reads) flash.Submit(read);
    q.Run();
    return static_cast<double>(flash.offered_time().ns) / flash.busy_time().ns;
  };
  // The toy device reads at the same rate at any depth, so each read's worth
  // of time is spent at the depth of the reads then left. Eight reads, four at
  // a time: four in flight while 8 to 4 are left, then 4, 3, 2 and 1:
  // (4 x 4 + 4 + 3 + 2 + 1) / 8.
  EXPECT_DOUBLE_EQ(mean_depth({Read(1, 250000, 8, 4)}), 26.0 / 8);
  EXPECT_DOUBLE_EQ(mean_depth({Read(1, 250000, 2, 4)}), 1.5);  // 2, then 1
  // Two batches of 64, 32 each at a time, under a command queue of 32: 32 in
  // flight until each has 16 left, then twice what each has left.
  double tail = 0;
  for (int left = 16; left >= 1; --left) tail += 2.0 * (2 * left);
  EXPECT_NEAR(mean_depth({Read(1, 8192, 64, 32), Read(2, 8192, 64, 32)}), (96 * 32 + tail) / 128,
              1e-3);
}

TEST(SimFlashMix, EachRequestSizeKeepsItsOwnCurveAndTheyShareTheDevicesTime) {
  const DeviceProfile d = CurveDevice({{4096, 1, false, 40},
                                       {4096, 32, false, 400},
                                       {1000000, 1, true, 1000},
                                       {1000000, 32, true, 1200}});
  FlashRead large = Read(1, 1000000, 4, 1);
  large.sequential = true;
  const std::vector<std::pair<uint64_t, int64_t>> done =
      FinishTimes(d, {large, Read(2, 4096, 100000, 32)});
  ASSERT_EQ(done.size(), 2u);
  ASSERT_EQ(done[0].first, 1u);
  // Depth 1 of 32 slots: 1000 MB/s; the small reads at depth 31: 40 + 360 x 30/31
  // MB/s; both scaled down until their parts of the device add up to one (the
  // byte ceiling, 1200 MB/s together, would slow them less).
  const double small_mb_s = 40 + 360.0 * 30 / 31;
  const double busy = 1000.0 / 1200 + small_mb_s / 400;
  ASSERT_GT(busy * 1200, 1000 + small_mb_s);
  const double large_mb_s = 1000 / busy;
  EXPECT_NEAR(done[0].second, 4e6 / large_mb_s * 1e3, 2);
  // Shared by requests at the combined depth it would get 1200/33 MB/s: 110 ms.
  EXPECT_LT(done[0].second, 10000000);
}

// Two small sizes at 16 reads in flight each: together they would issue more
// reads per second than the device ever served (97,656 at 4 KiB, depth 32), so
// both slow down by the same factor and finish together. (Each rate is the
// same at any depth up to 16, so the batches' draining tails keep it.)
TEST(SimFlashMix, MixedSizesStayUnderTheDevicesReadsPerSecond) {
  const DeviceProfile d = CurveDevice({{4096, 1, false, 300},
                                       {4096, 16, false, 300},
                                       {4096, 32, false, 400},
                                       {8192, 1, false, 600},
                                       {8192, 16, false, 600},
                                       {8192, 32, false, 800}});
  const std::vector<std::pair<uint64_t, int64_t>> done =
      FinishTimes(d, {Read(1, 4096, 1000, 16), Read(2, 8192, 1000, 16)});
  ASSERT_EQ(done.size(), 2u);
  const double reads_per_s = 400e6 / 4096;  // the ceiling; each size gets half
  const double expected_ns = 1000 / (reads_per_s / 2) * 1e9;
  EXPECT_NEAR(done[0].second, expected_ns, 2);
  EXPECT_NEAR(done[1].second, expected_ns, 2);
}

TEST(SimFlashSubmit, EachBatchWaitsForTheHandOffFirst) {
  DeviceProfile d = ToyDevice();
  d.flash.submit_overhead_ns = 50000;  // 50 us per batch
  EventQueue q;
  SimFlashDevice flash(&q, d, "");
  Recorder r(&q);
  flash.SetSink(&r);
  flash.Submit(Read(1, 1000000));
  q.Run();
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0].second, 1050000);      // 50 us, then 1 ms of reading
  EXPECT_EQ(flash.busy_time().ns, 1000000);  // the device itself is busy 1 ms
}

TEST(SimFlashSubmit, ASingleSlotStreamTurnsAroundAfterEveryRead) {
  DeviceProfile d = ToyDevice();
  d.flash.resubmit_gap_ns = 10000;  // 10 us between one read's end and the next's start
  for (auto [in_flight, expected] : {std::pair{1, 4030000}, std::pair{4, 4000000}}) {
    EventQueue q;
    SimFlashDevice flash(&q, d, "");
    Recorder r(&q);
    flash.SetSink(&r);
    // 4 reads at 1000 IOPS: 4 ms, plus 3 turnarounds when one slot serves them all.
    flash.Submit(Read(1, 250000, 4, in_flight));
    q.Run();
    ASSERT_EQ(r.done.size(), 1u);
    EXPECT_EQ(r.done[0].second, expected) << in_flight << " in flight";
  }
}

// The times (ns) at which `tasks`, submitted at once to one compute worker of
// `device`, finish, in completion order; empty when the backend is refused.
std::vector<int64_t> OneWorkerFinishTimes(const DeviceProfile& device,
                                          const std::vector<ComputeTask>& tasks) {
  EventQueue q;
  auto backend = SimComputeBackend::Create(&q, device, {.compute_threads = 1, .io_core_class = ""});
  if (!backend.ok()) return {};
  Recorder r(&q);
  (*backend)->SetSink(&r);
  for (const ComputeTask& t : tasks) (*backend)->Submit(t);
  q.Run();
  std::vector<int64_t> times;
  for (const auto& [tag, at] : r.done) times.push_back(at);
  return times;
}

TEST(SimCompute, EachTaskPaysTheHandOffToAWorker) {
  DeviceProfile d = ToyDevice(2);
  d.cores[0].task_dispatch_ns = 20000;
  const std::vector<int64_t> done =
      OneWorkerFinishTimes(d, {{.tag = 1, .kind = ComputeKind::kFfn, .bytes = 1000000},
                               {.tag = 2, .kind = ComputeKind::kFfn, .bytes = 1000000}});
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], 1020000);
  EXPECT_EQ(done[1], 2040000);
}

// A worker that finishes a task and finds another queued takes it at once (no
// thread sleeps or wakes): it pays the queued cost, not the hand-off; without
// one stated, the hand-off, as before.
TEST(SimCompute, ATaskQueuedBehindAnotherPaysTheQueuedCost) {
  DeviceProfile d = ToyDevice(2);
  d.cores[0].task_dispatch_ns = 20000;
  const std::vector<ComputeTask> three = {
      {.tag = 1, .kind = ComputeKind::kFfn, .bytes = 1000000, .in_order = true},
      {.tag = 2, .kind = ComputeKind::kFfn, .bytes = 1000000, .in_order = true},
      {.tag = 3, .kind = ComputeKind::kFfn, .bytes = 1000000, .in_order = true}};
  EXPECT_EQ(OneWorkerFinishTimes(d, three), (std::vector<int64_t>{1020000, 2040000, 3060000}));
  d.cores[0].queued_task_ns = 3000;
  EXPECT_EQ(OneWorkerFinishTimes(d, three), (std::vector<int64_t>{1020000, 2023000, 3026000}));
}

TEST(SimCompute, SparseFfnTasksPayTheKernelsCostPerCall) {
  DeviceProfile d = ToyDevice(2);
  d.cores[0].task_dispatch_ns = 20000;
  d.cores[0].kernel_call_ns = 5000;
  // Weights in matrix order (a dense GEMV) and other work make no sparse call.
  const std::vector<int64_t> done = OneWorkerFinishTimes(
      d, {{.tag = 1, .kind = ComputeKind::kFfn, .bytes = 1000000},
          {.tag = 2, .kind = ComputeKind::kFfn, .bytes = 1000000, .in_order = true},
          {.tag = 3, .kind = ComputeKind::kAttention, .bytes = 1000000}});
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0], 1025000);  // hand-off, the call, 1 ms of weights
  EXPECT_EQ(done[1], 2045000);
  EXPECT_EQ(done[2], 3065000);
}

// The times (ns) at which the engine learns that each of `count` tasks of
// `bytes` finished, handed one at a time to one worker of `device`: the first
// at `first_at`, each next one when the one before is done.
std::vector<int64_t> OneAtATimeDoneTimes(const DeviceProfile& device, int64_t bytes, int count,
                                         Nanos first_at = {}) {
  EventQueue q;
  auto backend = SimComputeBackend::Create(&q, device, {.compute_threads = 1, .io_core_class = ""});
  if (!backend.ok()) return {};
  struct Chain : Recorder {
    using Recorder::Recorder;
    void OnComputeDone(uint64_t tag) override {
      Recorder::OnComputeDone(tag);
      if (static_cast<int>(tag) < count) submit(tag + 1);
    }
    int count = 0;
    std::function<void(uint64_t)> submit;
  } r(&q);
  r.count = count;
  r.submit = [&](uint64_t tag) {
    (*backend)->Submit({.tag = tag, .kind = ComputeKind::kFfn, .bytes = bytes, .in_order = true});
  };
  (*backend)->SetSink(&r);
  q.At(first_at, [&] { r.submit(1); });
  q.Run();
  std::vector<int64_t> times;
  for (const auto& [tag, at] : r.done) times.push_back(at);
  return times;
}

// A thread that waited past its core's idle window wakes slower: the engine's
// thread after a task longer than the window, a worker handed a task after
// idling that long. Shorter waits pay only the hand-off.
TEST(SimCompute, AThreadThatWaitedPastTheIdleWindowWakesSlower) {
  DeviceProfile d = ToyDevice(2);  // 1 GB/s: 1000 bytes take 1 us
  d.cores[0].task_dispatch_ns = 20000;
  d.cores[0].idle_wake_ns = 70000;
  d.cores[0].idle_window_ns = 150000;
  // 100 us of work: nobody waits past the window.
  EXPECT_EQ(OneAtATimeDoneTimes(d, 100000, 2), (std::vector<int64_t>{120000, 240000}));
  // 300 us: the engine's thread waits through each task and wakes 70 us late.
  EXPECT_EQ(OneAtATimeDoneTimes(d, 300000, 2), (std::vector<int64_t>{390000, 780000}));
  // The first task handed over 200 us after the start: the worker too has idled.
  EXPECT_EQ(OneAtATimeDoneTimes(d, 100000, 1, Microseconds(200)),
            (std::vector<int64_t>{200000 + 70000 + 120000 + 70000}));
  d.cores[0].idle_wake_ns = 0;  // not stated: no step
  EXPECT_EQ(OneAtATimeDoneTimes(d, 300000, 2), (std::vector<int64_t>{320000, 640000}));
}

TEST(SimCompute, TheIoThreadTakesACoreEvenWithoutACoreOfItsClass) {
  DeviceProfile d = ToyDevice(2);
  d.cores.resize(1);
  d.cores[0].name = "host";  // a calibrated host: one class, no "big"
  d.cores[0].count = 2;
  EventQueue q;
  EXPECT_EQ(IoCoreClass(d, "big"), "host");
  EXPECT_EQ(IoCoreClass(d, ""), "");
  auto one = SimComputeBackend::Create(&q, d, {.compute_threads = 1, .io_core_class = "big"});
  ASSERT_TRUE(one.ok()) << one.status();
  auto two = SimComputeBackend::Create(&q, d, {.compute_threads = 2, .io_core_class = "big"});
  ASSERT_FALSE(two.ok()) << "two compute threads and the I/O thread on two cores";
  EXPECT_NE(two.status().message().find("lower --threads"), std::string::npos) << two.status();
  auto no_io = SimComputeBackend::Create(&q, d, {.compute_threads = 2, .io_core_class = ""});
  EXPECT_TRUE(no_io.ok()) << "without an I/O thread both cores compute";
}

TEST(SimCompute, TasksQueueForWorkers) {
  const std::vector<int64_t> done =
      OneWorkerFinishTimes(ToyDevice(2), {{.tag = 1, .kind = ComputeKind::kFfn, .bytes = 1000000},
                                          {.tag = 2, .kind = ComputeKind::kFfn, .bytes = 1000000},
                                          {.tag = 3, .kind = ComputeKind::kOther, .ops = 2e6}});
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0], 1000000);
  EXPECT_EQ(done[1], 2000000);
  EXPECT_EQ(done[2], 4000000);  // 2e6 operations at 1e9/s
}

TEST(SimCompute, DramCeilingIsShared) {
  DeviceProfile d = ToyDevice(2);
  d.dram.cpu_bytes_per_s = 1e9;  // two cores of 1e9 share 1e9
  EventQueue q;
  auto backend = SimComputeBackend::Create(&q, d, {.compute_threads = 2, .io_core_class = ""});
  ASSERT_TRUE(backend.ok());
  Recorder r(&q);
  (*backend)->SetSink(&r);
  (*backend)->Submit({.tag = 1, .kind = ComputeKind::kFfn, .bytes = 1000000});
  (*backend)->Submit({.tag = 2, .kind = ComputeKind::kFfn, .bytes = 1000000});
  q.Run();
  // The first takes the whole ceiling (1 ms); the second gets its fair half (2 ms).
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0].second, 1000000);
  EXPECT_EQ(r.done[1].second, 2000000);
}

TEST(SimCompute, TooManyThreadsIsAClearError) {
  EventQueue q;
  auto backend = SimComputeBackend::Create(&q, ToyDevice(2), {.compute_threads = 2});
  ASSERT_FALSE(backend.ok());  // one of the two cores is the I/O core
  EXPECT_NE(backend.status().message().find("--threads"), std::string::npos);
}

}  // namespace
}  // namespace sparseflash
