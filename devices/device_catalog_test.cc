#include "devices/device_catalog.h"

#include <string>

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(DeviceCatalog, HasThePaperDevices) {
  for (const char* name : {"oneplus12", "oneplus-ace2", "m1max"}) {
    absl::StatusOr<DeviceProfile> d = BuiltinDevices().Find(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_GE(d->flash.points.size(), 3u) << "flash must be a curve, not one number";
    for (const FlashPoint& p : d->flash.points) EXPECT_FALSE(p.source.empty()) << name;
  }
}

TEST(DeviceCatalog, OnePlus12CarriesPublishedNumbers) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  EXPECT_DOUBLE_EQ(d.dram.cpu_bytes_per_s, 43.9e9);
  EXPECT_DOUBLE_EQ(d.dram.combined_bytes_per_s, 59.6e9);
  EXPECT_EQ(d.dram.app_available_bytes, 19'000'000'000);
  EXPECT_EQ(d.total_cores(), 8);
  EXPECT_NEAR(d.FindCoreClass("little")->io_issue_factor, 0.708, 1e-9);
}

TEST(DeviceCatalog, TextRoundTrip) {
  DeviceProfile d = *BuiltinDevices().Find("m1max");
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->flash.points.size(), d.flash.points.size());
  EXPECT_NEAR(back->flash.points[3].throughput_bytes_per_s,
              d.flash.points[3].throughput_bytes_per_s, 1);
  EXPECT_FALSE(back->flash.points[3].page_cache);
  d.flash.points[3].page_cache = true;  // a point of the kernel's read-ahead
  back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->flash.points[3].page_cache);
  EXPECT_FALSE(back->flash.points[2].page_cache);
}

TEST(DeviceCatalog, BadProfileNamesField) {
  absl::StatusOr<DeviceProfile> d = ParseDeviceProfile(
      "name: \"x\" flash { points { request_bytes: 4096 throughput_mb_s: -1 } }", "bad.textproto");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("bad.textproto"), std::string::npos);
  EXPECT_NE(d.status().message().find("flash.points[0].throughput_mb_s"), std::string::npos);
}

// A rate a simulation cannot finish with (1 byte/s) is refused with its field,
// its unit and the physical range, as are powers, each under its own name.
TEST(DeviceCatalog, RatesAndPowersOutsideTheirPhysicalRangeNameTheFieldAndUnit) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  d.dram.cpu_bytes_per_s = 1;  // cpu_gb_s: 1e-9
  absl::Status s = d.Validate("slow.textproto");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'dram.cpu_gb_s'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("GB/s"), std::string::npos) << s;
  d = *BuiltinDevices().Find("oneplus12");
  d.cores[0].gemv_bytes_per_s = 10;
  EXPECT_NE(d.Validate("x").message().find("cores[0].gemv_gb_s"), std::string::npos);
  d = *BuiltinDevices().Find("oneplus12");
  d.flash.points[0].throughput_bytes_per_s = 100;
  EXPECT_NE(d.Validate("x").message().find("MB/s"), std::string::npos);
  struct Case {
    const char* field;
    double* (*power)(DeviceProfile&);
  };
  for (const Case& c : {Case{"'flash.active_w'", [](DeviceProfile& p) { return &p.flash.active_w; }},
                        Case{"'npu.active_w'", [](DeviceProfile& p) { return &p.npu.active_w; }},
                        Case{"'base_w'", [](DeviceProfile& p) { return &p.base_w; }}}) {
    d = *BuiltinDevices().Find("oneplus12");
    *c.power(d) = 5000;
    EXPECT_NE(d.Validate("x").message().find(c.field), std::string::npos) << c.field;
  }
  for (const std::string& name : BuiltinDevices().Names()) {
    EXPECT_TRUE(BuiltinDevices().Find(name)->Validate(name).ok()) << name;
  }
}

TEST(DeviceCatalog, ReadAheadAndLargestRequestDefaultToLinuxAndRoundTrip) {
  const DeviceProfile m1 = *BuiltinDevices().Find("m1max");
  EXPECT_EQ(m1.flash.read_ahead_kb, kDefaultReadAheadKb) << "not stated: Linux's 128 KiB";
  EXPECT_EQ(m1.flash.max_request_kb, kDefaultMaxRequestKb) << "not stated: Linux's 1280 KiB";
  for (const char* field : {"flash.read_ahead_kb", "flash.max_request_kb"}) {
    DeviceProfile d = m1;
    int& kb = std::string(field) == "flash.read_ahead_kb" ? d.flash.read_ahead_kb
                                                          : d.flash.max_request_kb;
    kb = 8192;
    absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->flash.read_ahead_kb, d.flash.read_ahead_kb);
    EXPECT_EQ(back->flash.max_request_kb, d.flash.max_request_kb);
    for (int bad : {-4, 6, 2 << 20}) {
      kb = bad;
      absl::StatusOr<DeviceProfile> r = ParseDeviceProfile(DeviceProfileToText(d), "ra.textproto");
      ASSERT_FALSE(r.ok()) << field << " " << bad;
      EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status();
      EXPECT_NE(r.status().message().find("ra.textproto"), std::string::npos);
    }
  }
}

TEST(DeviceCatalog, IdleWakeRoundTripsAndIsChecked) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  EXPECT_EQ(d.cores[0].idle_wake_ns, 0) << "not stated: no step";
  d.cores[0].idle_wake_ns = 95000;
  d.cores[0].idle_window_ns = 150000;
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->cores[0].idle_wake_ns, 95000);
  EXPECT_EQ(back->cores[0].idle_window_ns, 150000);
  for (const char* field : {"idle_wake_us", "idle_window_us"}) {
    DeviceProfile bad = d;
    (std::string(field) == "idle_wake_us" ? bad.cores[0].idle_wake_ns
                                          : bad.cores[0].idle_window_ns) = -1;
    absl::StatusOr<DeviceProfile> r = ParseDeviceProfile(DeviceProfileToText(bad), "w.textproto");
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find("w.textproto"), std::string::npos) << r.status();
  }
}

TEST(DeviceCatalog, QueuedTaskCostRoundTripsDefaultsToTheHandOffAndIsChecked) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  d.cores[0].task_dispatch_ns = 40000;
  EXPECT_FALSE(d.cores[0].queued_task_ns.has_value());
  EXPECT_EQ(d.cores[0].QueuedTaskNs(), 40000) << "not stated: the hand-off";
  d.cores[0].queued_task_ns = 0;  // stated as free, not "not stated"
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->cores[0].queued_task_ns.has_value());
  EXPECT_EQ(back->cores[0].QueuedTaskNs(), 0);
  d.cores[0].queued_task_ns = -1;
  absl::StatusOr<DeviceProfile> r = ParseDeviceProfile(DeviceProfileToText(d), "q.textproto");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("queued_task_us"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("q.textproto"), std::string::npos) << r.status();
}

TEST(DeviceCatalog, KernelRatesPerFormatRoundTripPriceTheirFormatAndAreChecked) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  const double generic = d.cores[0].gemv_bytes_per_s;
  d.cores[0].kernel_rates = {{"int4-g16", 0.5 * generic, 0.8 * generic}, {"int8-g64", 2e9, 0}};
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->cores[0].kernel_rates.size(), 2u);
  EXPECT_EQ(back->cores[0].kernel_rates[1].format, "int8-g64");
  // A listed format takes its rates; another format keeps the core's own.
  const DeviceProfile g16 = back->ForWeightFormat("int4-g16");
  EXPECT_NEAR(g16.cores[0].gemv_bytes_per_s, 0.5 * generic, 1);
  EXPECT_NEAR(g16.cores[0].InOrderGemvRate(), 0.8 * generic, 1);
  EXPECT_NEAR(g16.cores[1].gemv_bytes_per_s, d.cores[1].gemv_bytes_per_s, 1) << "no entry there";
  EXPECT_NEAR(back->ForWeightFormat("int8-g64").cores[0].InOrderGemvRate(), 2e9, 1)
      << "an unstated in-order rate is the scattered one";
  EXPECT_NEAR(back->ForWeightFormat("fp16").cores[0].gemv_bytes_per_s, generic, 1);
  struct Bad {
    KernelRateSpec rate;
    const char* field;
  };
  for (const Bad& bad : {Bad{{"", 1e9, 0}, "kernel_rates[1].format"},
                         Bad{{"int4-g16", 1e9, 0}, "kernel_rates[1].format"},
                         Bad{{"int4-g32", 0, 0}, "kernel_rates[1].gemv_gb_s"},
                         Bad{{"int4-g32", 1e9, -1e9}, "kernel_rates[1].dense_gemv_gb_s"}}) {
    d.cores[0].kernel_rates = {{"int4-g16", 1e9, 0}, bad.rate};
    absl::StatusOr<DeviceProfile> r = ParseDeviceProfile(DeviceProfileToText(d), "k.textproto");
    ASSERT_FALSE(r.ok()) << bad.field;
    EXPECT_NE(r.status().message().find(std::string("cores[0].") + bad.field), std::string::npos)
        << r.status();
  }
}

// A core computing alone runs at its alone rate, with every core of the
// profile busy at the stated rate, linearly between; unstated, always the
// stated rate. The alone rates round-trip, per format too, and are checked.
TEST(DeviceCatalog, AloneRatesGoLinearlyToTheAllBusyRates) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  CoreClassSpec& core = d.cores[0];
  const double all = core.gemv_bytes_per_s;
  const int cores = d.total_cores();
  ASSERT_GT(cores, 2);
  EXPECT_EQ(core.GemvRate(false, 1, cores), all) << "not stated in the phone's profile";
  core.gemv_alone_bytes_per_s = 3 * all;
  core.dense_gemv_alone_bytes_per_s = 4 * all;
  EXPECT_DOUBLE_EQ(core.GemvRate(false, 1, cores), 3 * all);
  EXPECT_DOUBLE_EQ(core.GemvRate(true, 1, cores), 4 * all);
  EXPECT_DOUBLE_EQ(core.GemvRate(false, cores, cores), all);
  EXPECT_DOUBLE_EQ(core.GemvRate(false, cores + 3, cores), all);
  const int mid = 1 + (cores - 1) / 2;
  EXPECT_NEAR(core.GemvRate(false, mid, cores),
              3 * all - 2 * all * (mid - 1) / static_cast<double>(cores - 1), 1);
  core.kernel_rates = {{"int4-g16", all, 0, 5 * all, 0}};
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_NEAR(back->cores[0].GemvRate(true, 1, cores), 4 * all, 1);
  EXPECT_NEAR(back->ForWeightFormat("int4-g16").cores[0].GemvRate(false, 1, cores), 5 * all, 1);
  core.gemv_alone_bytes_per_s = -1;
  absl::StatusOr<DeviceProfile> bad = ParseDeviceProfile(DeviceProfileToText(d), "alone.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cores[0].gemv_alone_gb_s"), std::string::npos)
      << bad.status();
}

TEST(DeviceCatalog, DenseRateFallsBackToTheSparseOneAndIsChecked) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  CoreClassSpec& core = d.cores[0];
  EXPECT_EQ(core.dense_gemv_bytes_per_s, 0) << "not stated in the phone's profile";
  EXPECT_EQ(core.InOrderGemvRate(), core.gemv_bytes_per_s);
  core.dense_gemv_bytes_per_s = 3 * core.gemv_bytes_per_s;
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_NEAR(back->cores[0].InOrderGemvRate(), 3 * core.gemv_bytes_per_s, 1);
  core.dense_gemv_bytes_per_s = -1e9;
  absl::StatusOr<DeviceProfile> bad = ParseDeviceProfile(DeviceProfileToText(d), "dense.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cores[0].dense_gemv_gb_s"), std::string::npos)
      << bad.status();
}

TEST(DeviceCatalog, UnknownDeviceListsKnown) {
  absl::StatusOr<DeviceProfile> d = LoadDevice("pixel99");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("oneplus12"), std::string::npos);
}

// Scattered rows over a wider span run at the wide rate: the stated rate at
// the narrow span and below, the wide rate at the wide span and above, and in
// between linearly in log(span). The spans round-trip and are checked.
TEST(DeviceCatalog, ScatteredRatesFallWithTheSpanTheNeuronsLieIn) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  const int64_t mib = int64_t{1} << 20;
  KernelRateSpec g32{"int4-g32", 8e9, 16e9, 10e9, 0};
  g32.span = {512 * mib, 4096 * mib, 5e9, 6e9};
  d.cores[0].kernel_rates = {g32};
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  const DeviceProfile p = back->ForWeightFormat("int4-g32");
  auto at = [&](int64_t span) { return p.ForScatterSpan(span).cores[0]; };
  EXPECT_NEAR(at(256 * mib).gemv_bytes_per_s, 8e9, 1);
  EXPECT_NEAR(at(512 * mib).gemv_bytes_per_s, 8e9, 1);
  EXPECT_NEAR(at(4096 * mib).gemv_bytes_per_s, 5e9, 1);
  EXPECT_NEAR(at(16384 * mib).gemv_bytes_per_s, 5e9, 1);
  // 1448 MiB is 1.5 of the 3 doublings from 512 MiB to 4 GiB: halfway.
  EXPECT_NEAR(at(1448 * mib).gemv_bytes_per_s, 6.5e9, 0.01e9);
  EXPECT_NEAR(at(4096 * mib).gemv_alone_bytes_per_s, 6e9, 1);
  EXPECT_NEAR(at(1448 * mib).gemv_alone_bytes_per_s, 8e9, 0.01e9);
  EXPECT_NEAR(at(4096 * mib).InOrderGemvRate(), 16e9, 1) << "rows in order are not scattered";
  EXPECT_NEAR(back->ForScatterSpan(4096 * mib).cores[0].gemv_bytes_per_s,
              d.cores[0].gemv_bytes_per_s, 1)
      << "without the format's entry, the core's own rates at any span";
  g32.span.span_bytes = 0;
  d.cores[0].kernel_rates = {g32};
  absl::StatusOr<DeviceProfile> bad = ParseDeviceProfile(DeviceProfileToText(d), "span.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kernel_rates[0].wide_span_mib"), std::string::npos)
      << bad.status();
}

TEST(DeviceCatalog, AFormatsCostPerCallRoundTripsAndReachesTheCore) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  KernelRateSpec g32{"int4-g32", 8e9, 16e9, 10e9, 0};
  g32.call_ns = 2500;
  d.cores[0].kernel_rates = {g32};
  absl::StatusOr<DeviceProfile> back = ParseDeviceProfile(DeviceProfileToText(d), "rt");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_NEAR(back->ForWeightFormat("int4-g32").cores[0].kernel_call_ns, 2500, 1e-6);
  EXPECT_EQ(back->ForWeightFormat("int8-g64").cores[0].kernel_call_ns, 0)
      << "a format without an entry states no cost per call";
  g32.call_ns = -1;
  d.cores[0].kernel_rates = {g32};
  absl::StatusOr<DeviceProfile> bad = ParseDeviceProfile(DeviceProfileToText(d), "call.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kernel_rates[0].call_us"), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace sparseflash
