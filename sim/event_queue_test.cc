#include "sim/event_queue.h"

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

}  // namespace
}  // namespace sparseflash
