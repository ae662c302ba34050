#include "engine/real/real_env.h"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <list>

#include "absl/strings/str_cat.h"

namespace sparseflash {
namespace {

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One submitted batch and how far it got.
struct Job {
  FlashRead read;
  int submitted = 0;
  int in_flight = 0;  // at most read.max_in_flight (a thread blocked on a fault: 1)
  int done = 0;
  bool ok = true;
  bool taken = false;  // the submitter (or a pread worker) has taken it: the hand-off is over

  bool CanIssue() const {
    return submitted < read.count && in_flight < std::max(1, read.max_in_flight);
  }
  // The reads it lets the device have: its limit, or the reads it has left.
  int Offers() const { return std::min(std::max(1, read.max_in_flight), read.count - done); }
};

// Common part of the real devices: the file, counters, completion posting.
class RealFlashBase : public FlashDevice {
 public:
  // `device_queue`: the most reads the device takes at once.
  RealFlashBase(int fd, CompletionQueue* queue, int device_queue)
      : fd_(fd), queue_(queue), counters_(device_queue) {}
  ~RealFlashBase() override {
    if (fd_ >= 0) close(fd_);
  }
  void SetSink(CompletionSink* sink) override { sink_ = sink; }
  int64_t bytes_read() const override { return counters_.bytes(); }
  Nanos busy_time() const override { return counters_.busy(); }
  Nanos held_time() const override { return counters_.held_time(); }
  Nanos offered_time() const override { return counters_.offered_time(); }

 protected:
  // Called on a device thread when it takes `job` from its submitter: the
  // batch's busy and offered clocks start then, as the simulated device's do
  // after the profile's hand-off (submit_overhead). Once per job.
  void Take(Job* job) {
    if (job->taken) return;
    job->taken = true;
    const int64_t now = SteadyNs();
    counters_.Begin(now);
    counters_.Offered(now, job->Offers());
  }
  // Called on a device thread when every read of `job` has finished.
  void Finish(Job* job) {
    counters_.End(SteadyNs(), int64_t{job->read.count} * job->read.request_bytes);
    CompletionSink* sink = sink_;
    const uint64_t tag = job->read.tag;
    const bool ok = job->ok;
    queue_->Post([sink, tag, ok] { sink->OnReadDone(tag, ok); });
  }
  uint8_t* Destination(const Job& job, int i) const {
    return job.read.target->buffer + int64_t{i} * job.read.request_bytes;
  }

  int fd_;
  CompletionQueue* queue_;
  CompletionSink* sink_ = nullptr;
  DeviceCounters counters_;
};

// A pool of threads doing synchronous preads: the fallback where io_uring is
// unavailable (Android apps, old kernels, sandboxes).
class PreadFlashDevice : public RealFlashBase {
 public:
  PreadFlashDevice(int fd, int threads, CompletionQueue* queue)
      : RealFlashBase(fd, queue, threads), threads_(threads) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Loop(); });
  }
  ~PreadFlashDevice() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  void Submit(const FlashRead& read) override {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::make_unique<Job>(Job{read}));
    for (int i = 0; i < read.count; ++i) work_.push_back({jobs_.back().get(), i});
    cv_.notify_all();
  }

 private:
  struct Piece {
    Job* job;
    int index;
  };
  void Loop() {
    while (true) {
      Piece p;
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto ready = [this] {
          for (auto it = work_.begin(); it != work_.end(); ++it) {
            if (it->job->in_flight < std::max(1, it->job->read.max_in_flight)) return it;
          }
          return work_.end();
        };
        cv_.wait(lock, [&] { return stop_ || ready() != work_.end(); });
        if (stop_ && work_.empty()) return;
        auto it = ready();
        if (it == work_.end()) continue;
        p = *it;
        work_.erase(it);
        ++p.job->in_flight;
        Take(p.job);
      }
      const FlashRead& r = p.job->read;
      counters_.Reads(SteadyNs(), 1);
      ssize_t n =
          pread(fd_, Destination(*p.job, p.index), r.request_bytes, r.target->offsets[p.index]);
      counters_.Reads(SteadyNs(), -1);
      std::unique_ptr<Job> finished;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (n != r.request_bytes) p.job->ok = false;
        --p.job->in_flight;
        cv_.notify_all();
        const int offered = p.job->Offers();
        ++p.job->done;
        counters_.Offered(SteadyNs(), p.job->Offers() - offered);
        if (p.job->done == r.count) {
          for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
            if (it->get() == p.job) {
              finished = std::move(*it);
              jobs_.erase(it);
              break;
            }
          }
        }
      }
      if (finished) Finish(finished.get());
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::list<std::unique_ptr<Job>> jobs_;
  std::deque<Piece> work_;
  bool stop_ = false;
  const int threads_;
  std::vector<std::thread> workers_;
};

// io_uring with one submitter thread that keeps up to `depth` reads in flight.
class UringFlashDevice : public RealFlashBase {
 public:
  static absl::StatusOr<std::unique_ptr<UringFlashDevice>> Create(int fd, int depth,
                                                                  CompletionQueue* queue) {
    auto d = std::unique_ptr<UringFlashDevice>(new UringFlashDevice(fd, depth, queue));
    if (int err = io_uring_queue_init(depth, &d->ring_, 0); err < 0) {
      d->fd_ = -1;  // the caller keeps the file for the fallback
      return absl::UnavailableError(absl::StrCat("io_uring_queue_init: ", std::strerror(-err)));
    }
    d->ring_ready_ = true;
    d->thread_ = std::thread([p = d.get()] { p->Loop(); });
    return d;
  }
  ~UringFlashDevice() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (ring_ready_) io_uring_queue_exit(&ring_);
  }
  void Submit(const FlashRead& read) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.push_back(std::make_unique<Job>(Job{read}));
    }
    cv_.notify_all();
  }

 private:
  UringFlashDevice(int fd, int depth, CompletionQueue* queue)
      : RealFlashBase(fd, queue, depth), depth_(depth) {}

  // Moves reads of pending jobs into the submission queue while the ring and
  // each job's own limit on reads in flight allow.
  int Fill() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::unique_ptr<Job>& job : pending_) Take(job.get());
    int added = 0;
    for (auto it = pending_.begin(); it != pending_.end() && in_flight_ < depth_;) {
      Job* job = it->get();
      while (job->CanIssue() && in_flight_ < depth_) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        if (sqe == nullptr) return added;
        const int i = job->submitted++;
        io_uring_prep_read(sqe, fd_, Destination(*job, i), job->read.request_bytes,
                           job->read.target->offsets[i]);
        io_uring_sqe_set_data(sqe, job);
        ++job->in_flight;
        ++in_flight_;
        ++added;
      }
      if (job->submitted == job->read.count) {
        running_.push_back(std::move(*it));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    return added;
  }

  void Loop() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !pending_.empty() || in_flight_ > 0; });
        if (stop_ && in_flight_ == 0) return;
      }
      if (const int added = Fill(); added > 0) {
        io_uring_submit(&ring_);
        counters_.Reads(SteadyNs(), added);
      }
      if (in_flight_ == 0) continue;
      io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe(&ring_, &cqe) < 0) continue;
      do {
        Job* job = static_cast<Job*>(io_uring_cqe_get_data(cqe));
        if (cqe->res != job->read.request_bytes) job->ok = false;
        io_uring_cqe_seen(&ring_, cqe);
        counters_.Reads(SteadyNs(), -1);  // before Complete: the batch may be finished there
        Complete(job);
      } while (io_uring_peek_cqe(&ring_, &cqe) == 0);
    }
  }

  void Complete(Job* job) {
    std::unique_ptr<Job> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
      --job->in_flight;
      const int offered = job->Offers();
      ++job->done;
      counters_.Offered(SteadyNs(), job->Offers() - offered);
      if (job->done < job->read.count) return;
      for (auto it = running_.begin(); it != running_.end(); ++it) {
        if (it->get() == job) {
          finished = std::move(*it);
          running_.erase(it);
          break;
        }
      }
      if (!finished) {  // completed before all of it was submitted: still pending
        for (auto it = pending_.begin(); it != pending_.end(); ++it) {
          if (it->get() == job) {
            finished = std::move(*it);
            pending_.erase(it);
            break;
          }
        }
      }
    }
    if (finished) Finish(finished.get());
  }

  io_uring ring_{};
  bool ring_ready_ = false;
  int depth_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> pending_;
  std::list<std::unique_ptr<Job>> running_;
  int in_flight_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

RealClock::RealClock() : start_ns_(SteadyNs()) {}
Nanos RealClock::Now() const { return Nanos{SteadyNs() - start_ns_}; }

void DeviceCounters::Begin(int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_++ == 0) since_ns_ = now_ns;
}

void DeviceCounters::End(int64_t now_ns, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes_ += bytes;
  if (--in_flight_ == 0) busy_ns_ += now_ns - since_ns_;
}

void DeviceCounters::Reads(int64_t now_ns, int delta) {
  std::lock_guard<std::mutex> lock(mu_);
  read_ns_ += static_cast<double>(reads_) * static_cast<double>(now_ns - reads_since_ns_);
  reads_ += delta;
  reads_since_ns_ = now_ns;
}

void DeviceCounters::Offered(int64_t now_ns, int delta) {
  std::lock_guard<std::mutex> lock(mu_);
  offered_ns_ += static_cast<double>(std::min(offered_, offered_cap_)) *
                 static_cast<double>(now_ns - offered_since_ns_);
  offered_ += delta;
  offered_since_ns_ = now_ns;
}

Nanos DeviceCounters::offered_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Nanos{static_cast<int64_t>(offered_ns_)};
}

Nanos DeviceCounters::held_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Nanos{static_cast<int64_t>(read_ns_)};
}

Nanos DeviceCounters::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Nanos{busy_ns_};
}

namespace {

volatile sig_atomic_t g_sigsys_seen = 0;
void OnSigsys(int) { g_sigsys_seen = 1; }

}  // namespace

// Android answers a blocked system call with SIGSYS (its app seccomp filter
// traps); a handler installed for the probe turns that into a refusal.
std::string UringUnavailableReason() {
  static const std::string reason = [] {
    struct sigaction handler = {}, previous = {};
    handler.sa_handler = OnSigsys;
    sigemptyset(&handler.sa_mask);
    sigaction(SIGSYS, &handler, &previous);
    g_sigsys_seen = 0;
    io_uring ring;
    const int err = io_uring_queue_init(1, &ring, 0);
    sigaction(SIGSYS, &previous, nullptr);
    if (g_sigsys_seen) return std::string("io_uring_setup is blocked by a seccomp policy (SIGSYS)");
    if (err < 0) return absl::StrCat("io_uring_setup failed: ", std::strerror(-err));
    io_uring_queue_exit(&ring);
    return std::string();
  }();
  return reason;
}

absl::StatusOr<std::unique_ptr<FlashDevice>> OpenFlashDevice(const FlashOpenOptions& o,
                                                             CompletionQueue* queue,
                                                             std::string* notice) {
  int fd = open(o.path.c_str(), O_RDONLY | (o.direct ? O_DIRECT : 0));
  if (fd < 0 && o.direct && errno == EINVAL) {
    fd = open(o.path.c_str(), O_RDONLY);
    if (fd >= 0) {
      *notice = absl::StrCat("notice: ", o.path,
                             ": the file system refuses O_DIRECT; reads may hit the page cache");
    }
  }
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(o.path, ": cannot open: ", std::strerror(errno)));
  }
  if (o.io != "pread") {
    // Probed once; the device below then sets up its own ring.
    const std::string denied =
        o.deny_uring_for_test ? "io_uring_setup denied (test)" : UringUnavailableReason();
    absl::StatusOr<std::unique_ptr<UringFlashDevice>> uring =
        denied.empty() ? UringFlashDevice::Create(fd, o.queue_depth, queue)
                       : absl::UnavailableError(denied);
    if (uring.ok()) return std::unique_ptr<FlashDevice>(*std::move(uring));
    if (o.io == "uring") {
      close(fd);
      return uring.status();
    }
    *notice = absl::StrCat(notice->empty() ? "" : *notice + "\n", "notice: io_uring unavailable (",
                           uring.status().message(), "); using a pread thread pool");
  }
  return std::unique_ptr<FlashDevice>(new PreadFlashDevice(fd, o.queue_depth, queue));
}

ThreadPoolCompute::ThreadPoolCompute(int threads, CompletionQueue* queue) : queue_(queue) {
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Loop(); });
}

ThreadPoolCompute::~ThreadPoolCompute() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPoolCompute::Submit(const ComputeTask& task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(task);
  }
  cv_.notify_one();
}

void ThreadPoolCompute::Loop() {
  while (true) {
    ComputeTask task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (stop_ && tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    if (task.work) (*task.work)();
    CompletionSink* sink = sink_;
    const uint64_t tag = task.tag;
    queue_->Post([sink, tag] { sink->OnComputeDone(tag); });
  }
}

absl::Status RunOnThisThread(Engine& engine, CompletionQueue& queue, Nanos stall_timeout) {
  engine.Start();
  while (!engine.finished()) {
    std::function<void()> completion = queue.PopFor(std::chrono::nanoseconds(stall_timeout.ns));
    if (!completion) {
      return absl::DeadlineExceededError(absl::StrCat(
          "nothing completed for ", stall_timeout.ns / 1e9, " s at step ",
          engine.record().tokens.size(),
          ": a flash read or compute task is stalled (hung device?); the run was abandoned"));
    }
    completion();
  }
  return engine.status();
}

void FaultInjectingFlashDevice::Submit(const FlashRead& read) {
  if (++submitted_ != nth_) return inner_->Submit(read);
  chosen_tag_ = read.tag;
  if (fault_ != FlashFault::kShortRead || !read.target) return inner_->Submit(read);
  auto target = std::make_shared<ReadTarget>(*read.target);
  target->offsets[0] = file_bytes_;  // at the end of the file: nothing to read
  FlashRead r = read;
  r.target = target;
  inner_->Submit(r);
}

void FaultInjectingFlashDevice::OnReadDone(uint64_t tag, bool ok) {
  if (tag != chosen_tag_) return sink_->OnReadDone(tag, ok);
  chosen_tag_ = ~uint64_t{0};
  if (fault_ == FlashFault::kStall) return;  // withheld
  sink_->OnReadDone(tag, fault_ == FlashFault::kError ? false : ok);
}

int64_t ProcessStorageReadBytes() {
  std::ifstream in("/proc/self/io");
  std::string key;
  int64_t value;
  while (in >> key >> value) {
    if (key == "read_bytes:") return value;
  }
  return -1;
}

}  // namespace sparseflash
