#include "engine/real/calibrate_cpu.h"

#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <thread>

#include "absl/strings/str_format.h"
#include "common/random.h"
#include "engine/real/completion_queue.h"
#include "engine/real/proc_stats.h"
#include "engine/real/real_env.h"
#include "traces/model_spec.h"

namespace sparseflash::calibration {

namespace {

// One pass: `threads` threads each summing their share of `words`, B/s.
double ReadPass(const uint64_t* words, size_t count, int threads) {
  std::vector<uint64_t> sums(threads);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      uint64_t s = 0;
      const size_t begin = count * t / threads, end = count * (t + 1) / threads;
      for (size_t i = begin; i < end; ++i) s += words[i];
      sums[t] = s;
    });
  }
  for (std::thread& th : pool) th.join();
  const double seconds = Seconds(t0);
  volatile uint64_t keep = 0;
  for (uint64_t s : sums) keep = keep + s;  // the sums are used: the reads stay
  return 8.0 * static_cast<double>(count) / seconds;
}

}  // namespace

DramReadRates MeasureDramRead(int threads, int64_t bytes, int passes) {
  WeightMemory memory = AllocateWeightMemory(bytes);
  if (!memory) throw std::bad_alloc();
  const size_t count = static_cast<size_t>(bytes / 8);
  uint64_t* words = reinterpret_cast<uint64_t*>(memory.get());
  for (size_t i = 0; i < count; ++i) words[i] = i;
  std::vector<double> one, all;
  for (int pass = 0; pass < passes; ++pass) {
    one.push_back(ReadPass(words, count, 1));
    all.push_back(ReadPass(words, count, threads));
  }
  return {.one = Median(one), .all = Median(all)};
}

double MeasureCopy(int64_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  const auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 3; ++rep) std::memcpy(b.data(), a.data(), bytes);
  return 3.0 * bytes / Seconds(t0);
}

namespace {

// Busy for `ns`, as a compute task is (a sleeping task would idle the core).
void Spin(double ns) {
  const auto t0 = std::chrono::steady_clock::now();
  while (Seconds(t0) * 1e9 < ns) {
  }
}

// The median time, beyond `work_ns` of work, from handing one task to a worker
// of the engine's thread pool to having its completion back on this thread,
// one task at a time (this thread waits for each).
double HandOffNs(ThreadPoolCompute& pool, CompletionQueue& queue, bool& done, double work_ns,
                 int tasks) {
  std::vector<double> ns;
  for (int i = 0; i < tasks; ++i) {
    done = false;
    const auto start = std::chrono::steady_clock::now();
    pool.Submit(
        {.tag = static_cast<uint64_t>(i),
         .work = std::make_shared<const std::function<void()>>([work_ns] { Spin(work_ns); })});
    while (!done) queue.Pop()();
    ns.push_back(Seconds(start) * 1e9 - work_ns);
  }
  return Median(ns);
}

// The time, beyond `work_ns` of work, of each task a worker takes from its
// queue as it finishes the one before: bursts of `burst` and of 2 x `burst`
// tasks handed to one worker at once, alternated; the longer burst's extra
// time over the shorter, per extra task (the first task's hand-off, and the
// engine's wake-up for the last completion, are in both and cancel). The
// median over `rounds`.
double QueuedTaskNs(ThreadPoolCompute& pool, CompletionQueue& queue, int& done, double work_ns,
                    int burst, int rounds) {
  auto run = [&](int tasks) {
    done = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < tasks; ++i) {
      pool.Submit(
          {.tag = static_cast<uint64_t>(i),
           .work = std::make_shared<const std::function<void()>>([work_ns] { Spin(work_ns); })});
    }
    while (done < tasks) queue.Pop()();
    return Seconds(start) * 1e9;
  };
  std::vector<double> ns;
  for (int r = 0; r < rounds; ++r) {
    const double shorter = run(burst);
    const double longer = run(2 * burst);
    ns.push_back(std::max(0.0, (longer - shorter) / burst - work_ns));
  }
  return Median(ns);
}

}  // namespace

HandOff MeasureHandOff(int tasks) {
  CompletionQueue queue;
  ThreadPoolCompute pool(1, &queue);
  struct Sink : CompletionSink {
    void OnReadDone(uint64_t, bool) override {}
    void OnComputeDone(uint64_t) override { done = true; }
    bool done = false;
  } sink;
  pool.SetSink(&sink);
  // Tasks of 25 us to 1 ms of work: the waiting thread idles that long.
  std::vector<double> work_us;
  for (double w = 25; w <= 400; w += 25) work_us.push_back(w);
  work_us.push_back(1000);
  std::vector<double> cost;
  for (double w : work_us) cost.push_back(HandOffNs(pool, queue, sink.done, w * 1e3, tasks));
  HandOff h;
  h.dispatch_ns = std::min(cost[0], cost[1]);
  struct Counter : CompletionSink {
    void OnReadDone(uint64_t, bool) override {}
    void OnComputeDone(uint64_t) override { ++done; }
    int done = 0;
  } counter;
  pool.SetSink(&counter);
  h.queued_ns = QueuedTaskNs(pool, queue, counter.done, 50e3, 16, std::max(5, tasks / 4));
  const double idle = std::max(cost[cost.size() - 1], cost[cost.size() - 2]);
  // A step of less than half the short hand-off (and 5 us) is noise: no idle state.
  if (idle - h.dispatch_ns < std::max(5e3, h.dispatch_ns / 2)) return h;
  h.idle_wake_ns = idle - h.dispatch_ns;
  // The window: the longest wait that still woke fast (before the first task
  // whose hand-off is past the midpoint of the step).
  for (size_t i = 0; i < cost.size(); ++i) {
    if (cost[i] > h.dispatch_ns + h.idle_wake_ns / 2) {
      h.idle_window_ns = (i == 0 ? 0 : work_us[i - 1]) * 1e3;
      break;
    }
  }
  return h;
}

namespace {

// Threads that wait for each other, spinning (yielding the core between
// looks): a round ends when the last arrives. Reusable round after round.
class SpinBarrier {
 public:
  explicit SpinBarrier(int threads) : threads_(threads) {}
  void Wait() {
    const int64_t round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      round_.fetch_add(1, std::memory_order_release);
      return;
    }
    while (round_.load(std::memory_order_acquire) == round) std::this_thread::yield();
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<int64_t> round_{0};
};

}  // namespace

// The sparse FFN kernel (`shape`, bundles from DRAM) on each of `threads`
// cores computing at once, as a real run's compute threads do (cores that
// share caches, memory controllers or a physical core get less than one
// alone), over bundles drawn at random (a sparse layer's active neurons) or,
// `in_order`, the dense GEMV over consecutive rows (a dense matrix, as
// attention and the head). Bytes/s per core.
//
// In rounds, as a run splits a layer's work over its threads and the layer
// ends when the slowest share has: each thread computes one call, then waits
// for the others (spinning, so the wait is the slower share's extra time, not
// waking a thread, which the hand-offs price). Measured alternated on a
// 2-vCPU VM (BM_SparseFfnSplitLayer, 1,434 bundles a layer), the rate per
// core was 2-11 % lower than with the same calls without waiting.
double MeasureKernel(const FfnKernelShape& s, const KernelArena& arena, double seconds_target,
                     bool in_order, int threads) {
  const int64_t n = arena.bundles;
  SpinBarrier round_end(threads);
  // The last round, set once by thread 0 before that round's end. A round
  // number, not a flag: a thread still leaving round r may read it after thread
  // 0 has set it in round r + 1, and must then run that round too.
  std::atomic<int64_t> last_round{std::numeric_limits<int64_t>::max()};
  int64_t bytes_per_thread = 0;
  double seconds = 0;
  auto run = [&](int t) {
    std::vector<const uint8_t*> active(static_cast<size_t>(std::min<int64_t>(1024, n / 2)));
    std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f), y;
    const int64_t rows_per_bundle = s.gated ? 3 : 2;
    Random rng(5 + t);
    int64_t bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t round = 0;; ++round) {
      const int64_t start = rng.Below(static_cast<uint32_t>(n - active.size()));
      if (in_order) {
        y.resize(active.size() * rows_per_bundle);
        DenseGemv(s, arena.data() + start * s.bundle_bytes(), static_cast<int64_t>(y.size()),
                  x.data(), y.data());
      } else {
        for (size_t k = 0; k < active.size(); ++k) {
          active[k] = arena.data() + rng.Below(static_cast<uint32_t>(n)) * s.bundle_bytes();
        }
        SparseFfn(s, active.data(), static_cast<int>(active.size()), x.data(), out.data());
      }
      bytes += active.size() * s.bundle_bytes();
      if (t == 0 && Seconds(t0) >= seconds_target) {
        last_round.store(round, std::memory_order_release);
      }
      round_end.Wait();  // then every thread sees a last_round set in this round
      if (last_round.load(std::memory_order_acquire) <= round) break;
    }
    if (t == 0) bytes_per_thread = bytes, seconds = Seconds(t0);  // every thread ran as many
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(run, t);
  run(0);
  for (std::thread& w : workers) w.join();
  return bytes_per_thread / seconds;
}

namespace {

// The time at zero bundles of a kernel call, ns: the intercept of calls of
// `few` and of `many` bundles timed by `per_call_ns(n)`, each size's median
// over `batches`, the sizes alternated so that a drift biases neither.
double CallInterceptNs(const std::function<double(int)>& per_call_ns, int few, int many,
                       int batches) {
  std::vector<double> few_ns, many_ns;
  for (int b = 0; b < batches; ++b) {
    few_ns.push_back(per_call_ns(few));
    many_ns.push_back(per_call_ns(many));
  }
  const double per_bundle_ns = std::max(0.0, Median(many_ns) - Median(few_ns)) / (many - few);
  return std::max(0.0, Median(few_ns) - few * per_bundle_ns);
}

// The call's own work (quantizing x, folding the output), ns: calls of 1 and
// 17 bundles held in the CPU's caches.
double CachedCallNs(const FfnKernelShape& s, int batches) {
  constexpr int kMany = 17, kCalls = 64;
  auto buffer = std::make_unique_for_overwrite<uint8_t[]>(kMany * s.bundle_bytes());
  FillUnitBundles(s, buffer.get(), kMany);
  std::vector<const uint8_t*> bundles(kMany);
  for (int k = 0; k < kMany; ++k) bundles[k] = buffer.get() + k * s.bundle_bytes();
  std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f);
  return CallInterceptNs(
      [&](int n) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kCalls; ++i) SparseFfn(s, bundles.data(), n, x.data(), out.data());
        return Seconds(t0) * 1e9 / kCalls;
      },
      1, kMany, batches);
}

// The same with every call's bundles drawn anew from `arena` (from DRAM).
double DramCallNs(const FfnKernelShape& s, const KernelArena& arena, int batches) {
  constexpr int kFew = 32, kMany = 512, kCalls = 16;
  Random rng(17);
  std::vector<const uint8_t*> bundles(kMany * kCalls);
  std::vector<float> x(s.d_model, 0.5f), out(s.d_model, 0.0f);
  return CallInterceptNs(
      [&](int n) {
        for (int k = 0; k < n * kCalls; ++k) {
          bundles[k] =
              arena.data() + rng.Below(static_cast<uint32_t>(arena.bundles)) * s.bundle_bytes();
        }
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kCalls; ++i) {
          SparseFfn(s, bundles.data() + i * n, n, x.data(), out.data());
        }
        return Seconds(t0) * 1e9 / kCalls;
      },
      kFew, kMany, batches);
}

}  // namespace

double MeasureKernelCallNs(const FfnKernelShape& s, const KernelArena& arena, int batches) {
  // The call's own work is a floor the noisier intercept from DRAM cannot go below.
  return std::max(CachedCallNs(s, batches), DramCallNs(s, arena, batches));
}

KernelArena::KernelArena(const FfnKernelShape& shape, int64_t span_bytes)
    : bundles(std::max<int64_t>(span_bytes / shape.bundle_bytes(), 2048)),
      bytes_(AllocateWeightMemory(bundles * shape.bundle_bytes())) {
  if (!bytes_) throw std::bad_alloc();
  const int64_t huge_before = HugePageBytes();
  FillUnitBundles(shape, bytes_.get(), bundles);
  const int64_t huge_after = HugePageBytes();
  huge_bytes_ =
      huge_before < 0 || huge_after < 0 ? -1 : std::max<int64_t>(0, huge_after - huge_before);
}

std::vector<KernelRateSpec> MeasureFormats(double seconds, int threads, double dram_cap,
                                           int64_t span_bytes, int64_t wide_span_bytes,
                                           std::vector<std::string>* spreads) {
  std::vector<KernelRateSpec> out;
  for (const FfnKernelShape& shape : kFormatShapes) {
    // All cores at once, then one alone (the others idle).
    std::vector<double> scattered, in_order, scattered_alone, in_order_alone;
    std::string pages;  // how the arena was paged: the scattered rates depend on it
    double call_ns = 0;
    {
      const KernelArena arena(shape, span_bytes);
      pages = arena.huge_bytes() < 0
                  ? "pages unknown"
                  : absl::StrFormat("%d of %d MiB on huge pages", arena.huge_bytes() >> 20,
                                    WeightMemoryBytes(arena.bundles * shape.bundle_bytes()) >> 20);
      for (int pass = 0; pass < 3; ++pass) {
        scattered.push_back(MeasureKernel(shape, arena, seconds, false, threads));
        in_order.push_back(MeasureKernel(shape, arena, seconds, true, threads));
        scattered_alone.push_back(MeasureKernel(shape, arena, seconds, false, 1));
        in_order_alone.push_back(MeasureKernel(shape, arena, seconds, true, 1));
      }
      call_ns = MeasureKernelCallNs(shape, arena, std::max(5, static_cast<int>(seconds * 100)));
    }
    const Quantization q{.kind = shape.bits == 4 ? QuantKind::kInt4 : QuantKind::kInt8,
                         .group_size = shape.group};
    const double all = std::min(Median(scattered), dram_cap);
    const double all_in_order = std::min(Median(in_order), dram_cap);
    // A core alone is never slower than with the others busy; a lower reading
    // is the machine's noise, and the all-busy rate stands.
    KernelRateSpec rate{q.Name(), all, all_in_order, std::max(all, Median(scattered_alone)),
                        std::max(all_in_order, Median(in_order_alone))};
    if (spreads != nullptr) {
      // Three significant digits: a slow core (or an emulator's) measures
      // thousandths of a GB/s, which two decimals would print as 0.00.
      auto range = [](const std::vector<double>& v) {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        return absl::StrFormat("%.3g-%.3g", *lo / 1e9, *hi / 1e9);
      };
      spreads->push_back(absl::StrFormat("%s %s scattered, %s in order (alone %s, %s; %s)",
                                         q.Name(), range(scattered), range(in_order),
                                         range(scattered_alone), range(in_order_alone), pages));
    }
    rate.call_ns = call_ns;
    if (wide_span_bytes > span_bytes) {
      // Scattered bundles over the wide span: more page walks and cache misses.
      const KernelArena arena(shape, wide_span_bytes);
      std::vector<double> wide, wide_alone;
      for (int pass = 0; pass < 3; ++pass) {
        wide.push_back(MeasureKernel(shape, arena, seconds, false, threads));
        wide_alone.push_back(MeasureKernel(shape, arena, seconds, false, 1));
      }
      const double wide_all = std::min(Median(wide), dram_cap);
      rate.span = {span_bytes, wide_span_bytes, wide_all, std::max(wide_all, Median(wide_alone))};
    }
    out.push_back(rate);
  }
  return out;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

double CpuGhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) == 0) return std::stod(line.substr(line.find(':') + 2)) / 1000;
  }
  return 1;
}

int64_t MemInfo(const std::string& key) {
  return std::max<int64_t>(0, ProcFieldBytes("/proc/meminfo", key));
}

}  // namespace sparseflash::calibration
