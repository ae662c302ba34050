#include "sim/event_queue.h"

#include <cmath>

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(EventQueue, OrdersByTimeThenSequence) {
  EventQueue q;
  std::string order;
  q.At({30}, [&] { order += "c"; });
  q.At({10}, [&] { order += "a"; });
  q.At({10}, [&] { order += "b"; });  // same time: scheduling order
  q.Run();
  EXPECT_EQ(order, "abc");
  EXPECT_EQ(q.now(), Nanos{30});
}

TEST(EventQueue, EventsScheduleMoreEvents) {
  EventQueue q;
  std::vector<int64_t> times;
  std::function<void()> tick = [&] {
    times.push_back(q.now().ns);
    if (times.size() < 3) q.After({5}, tick);
  };
  q.At({1}, tick);
  q.Run();
  EXPECT_EQ(times, (std::vector<int64_t>{1, 6, 11}));
}

TEST(EventQueue, RunUntilStopsAtTheBoundary) {
  EventQueue q;
  int ran = 0;
  q.At({5}, [&] { ++ran; });
  q.At({15}, [&] { ++ran; });
  q.RunUntil({10});
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(q.empty());
}

TEST(EventQueue, IdenticalInputsGiveIdenticalLogs) {
  auto run = [] {
    EventQueue q;
    q.EnableLog();
    for (int i = 0; i < 50; ++i)
      q.At(
          {(i * 7919) % 101}, [] {}, i % 2 ? "io" : "compute");
    q.Run();
    return q.log();
  };
  EXPECT_EQ(run(), run());
  EXPECT_EQ(run().front(), "0 compute");
}

// Simulated time past the horizon is an error the run reports, never a wrap
// of 64 bits or an abort: the event is dropped and the queue says so.
TEST(EventQueue, AnEventPastTheHorizonMarksTheQueueOverflowed) {
  EventQueue q;
  int ran = 0;
  q.After(TransferTime(1e30, 1), [&ran] { ++ran; });  // held to the horizon
  q.Run();
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(q.overflowed());
  EXPECT_EQ(q.now(), kTimeHorizon);
  q.After(Seconds(1), [&ran] { ++ran; });
  q.Run();
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(q.overflowed());
  EXPECT_EQ(TransferTime(1, 0), kTimeHorizon);
  EXPECT_EQ(CeilNanos(std::nan("")), kTimeHorizon);
  EXPECT_EQ(CeilNanos(-5), Nanos{});
  EXPECT_EQ(CeilNanos(2.1), Nanos{3});
}

}  // namespace
}  // namespace sparseflash
