#include "sim/sim_flash.h"

#include <algorithm>
#include <cmath>

namespace sparseflash {

SimFlashDevice::SimFlashDevice(EventQueue* queue, const DeviceProfile& profile,
                               std::string core_class, Timeline* timeline, int issuers)
    : queue_(queue),
      curve_(profile),
      command_queue_depth_(profile.flash.command_queue_depth),
      issuer_factor_(1 - profile.flash.multi_issuer_penalty * (1 - 1.0 / std::max(1, issuers))),
      core_class_(std::move(core_class)),
      timeline_(timeline),
      submit_overhead_{static_cast<int64_t>(profile.flash.submit_overhead_ns)},
      resubmit_gap_ns_(profile.flash.resubmit_gap_ns) {
  if (core_class_.empty() && !profile.cores.empty()) core_class_ = profile.cores.front().name;
  if (timeline_) lane_ = timeline_->Lane("flash");
  // The device's ceilings: the most bytes and the most reads per second any
  // measured point reached, as this core class issues them.
  for (const FlashPoint& p : profile.flash.points) {
    const double tp = curve_.Throughput({.request_bytes = p.request_bytes,
                                         .queue_depth = std::max(1, p.queue_depth),
                                         .sequential = p.sequential,
                                         .range_bytes = p.range_bytes,
                                         .core_class = core_class_,
                                         .page_cache = p.page_cache}) *
                      issuer_factor_;
    ceiling_bytes_per_s_ = std::max(ceiling_bytes_per_s_, tp);
    ceiling_reads_per_s_ = std::max(ceiling_reads_per_s_, tp / p.request_bytes);
  }
}

void SimFlashDevice::Submit(const FlashRead& read) {
  if (submit_overhead_.ns > 0) {  // the hand-off to the submitter, before the device sees it
    queue_->After(
        submit_overhead_, [this, read] { Start(read); }, "flash submit");
  } else {
    Start(read);
  }
}

void SimFlashDevice::Start(const FlashRead& read) {
  Advance();
  const double bytes = static_cast<double>(read.request_bytes) * read.count;
  bytes_read_ += static_cast<int64_t>(bytes);
  active_.push_back({.read = read,
                     .remaining = bytes,
                     .top = static_cast<double>(
                         std::min(std::max(1, read.max_in_flight), std::max(1, read.count))),
                     .shape = ShapeOf(read),
                     .submitted = queue_->now()});
  Reschedule();
}

void SimFlashDevice::Advance() {
  const Nanos now = queue_->now();
  const double dt = (now - last_update_).seconds();
  if (!active_.empty()) busy_ += now - last_update_;
  offered_ns_ += slots_offered_ * static_cast<double>((now - last_update_).ns);
  for (Batch& b : active_) b.remaining -= b.rate * dt;
  last_update_ = now;
}

void SimFlashDevice::Reschedule() {
  ++generation_;
  slots_offered_ = 0;
  if (active_.empty()) return;
  std::vector<double>& weight = weight_scratch_;
  weight.resize(active_.size());
  double total_weight = 0;
  for (size_t i = 0; i < active_.size(); ++i) {
    Batch& b = active_[i];
    if (b.tail.next_stage < 0 ||
        (b.tail.next_stage > 0 && StageMayEnd(b) && ReadsLeft(b) <= b.tail.next_stage)) {
      b.tail = TailOf(b);
    }
    weight[i] = b.tail.depth;
    total_weight += weight[i];
  }
  // Reads of one request size (and order) share the queue slots they hold:
  // each batch gets that class's throughput at the class's depth, in
  // proportion to its reads in flight. Classes of other sizes take their own
  // share of the slots and their own curve, and together share the device's
  // time: a class's rate over the rate it would reach alone with every slot is
  // the part of the device it keeps busy, and those parts add up to at most
  // one (as they stay within the device's byte and operation ceilings). A
  // virtual disk busy with 8 KiB reads at depth 32 gave a stream of 512 KiB
  // reads beside them half its rate alone, not all of it.
  const double slots = std::min<double>(total_weight, std::max(1, command_queue_depth_));
  slots_offered_ = slots;
  // A class's weight sums its batches' in batch order (a handful of classes).
  std::vector<ReadClass>& classes = class_scratch_;
  std::vector<uint32_t>& class_of = class_of_scratch_;
  classes.clear();
  class_of.resize(active_.size());
  for (size_t j = 0; j < active_.size(); ++j) {
    const FlashRead& r = active_[j].read;
    uint32_t k = 0;
    while (k < classes.size() &&
           (classes[k].request_bytes != r.request_bytes || classes[k].sequential != r.sequential)) {
      ++k;
    }
    if (k == classes.size()) classes.push_back({r.request_bytes, r.sequential, 0});
    classes[k].weight += weight[j];
    class_of[j] = k;
  }
  const bool mixed = classes.size() > 1;
  for (size_t i = 0; i < active_.size(); ++i) {
    const double class_weight = classes[class_of[i]].weight;
    const int depth = std::max(1, static_cast<int>(slots * class_weight / total_weight));
    Batch& b = active_[i];
    if (depth != b.depth) {  // the curve is looked up again only when its depth moved
      b.depth = depth;
      b.depth_rate = Throughput(b, depth);
    }
    b.rate = b.depth_rate * weight[i] / class_weight;
  }
  if (mixed && ceiling_bytes_per_s_ > 0 && ceiling_reads_per_s_ > 0) {
    double bytes_per_s = 0, reads_per_s = 0;
    for (const Batch& b : active_) {
      bytes_per_s += b.rate;
      reads_per_s += b.rate / b.read.request_bytes;
    }
    double busy = 0;
    for (Batch& b : active_) {
      if (b.full_rate <= 0) b.full_rate = Throughput(b, std::max(1, command_queue_depth_));
      busy += b.rate / b.full_rate;
    }
    const double scale = std::min(
        {1.0, 1.0 / busy, ceiling_bytes_per_s_ / bytes_per_s, ceiling_reads_per_s_ / reads_per_s});
    for (Batch& b : active_) b.rate *= scale;
  }
  // The next change: a batch finishes, or one enters the next stage of its
  // tail (its depth, and so every batch's rate, changes with it).
  // (One division per batch: x / rate is monotone in x, so the smaller
  // quotient is the smaller dividend's.)
  double soonest = -1;
  for (const Batch& b : active_) {
    double left = std::max(0.0, b.remaining);
    if (const double next = b.tail.next_stage; next > 0) {
      left = std::min(left, b.remaining - next * b.read.request_bytes);
    }
    const double t = left / b.rate;
    if (soonest < 0 || t < soonest) soonest = t;
  }
  const uint64_t generation = generation_;
  const Nanos at = queue_->now() + CeilNanos(soonest * 1e9);
  queue_->At(
      at, [this, generation] { OnEvent(generation); }, "flash");
}

// Reads of the batch not yet finished, counting a partly transferred read
// (within a millionth of a read: the fluid transfer's rounding).
double SimFlashDevice::ReadsLeft(const Batch& b) {
  return std::ceil(std::max(0.0, b.remaining) / b.read.request_bytes - 1e-6);
}

// A batch holds its limit of reads in flight, or as many as it has left: its
// tail drains a read at a time. The tail is taken in stages that halve the
// reads left (from the batch's first depth `top`: top to top/2, then to top/4,
// ... to 1), each at the mean depth of its reads, so a batch's depth changes a
// few times, not once per read: exact on a curve flat in depth, and the rate
// of every other batch is recomputed at each stage. Not so the kernel's
// read-ahead of a mapped file (page_cache): it sends the next window when the
// reader reaches the current one's marker page, before the tail, so its stream
// holds its depth.
SimFlashDevice::Tail SimFlashDevice::TailOf(const Batch& b) {
  const double limit = std::max(1, b.read.max_in_flight);
  if (b.read.page_cache) return {.depth = limit, .next_stage = 0};
  const double left = ReadsLeft(b);
  if (left > b.top) return {.depth = b.top, .next_stage = b.top};
  double high = b.top, low = std::floor(high / 2);
  while (low >= 1 && left <= low) {  // left may be 0: the last read's last bytes
    high = low;
    low = std::floor(high / 2);
  }
  return {.depth = std::max(1.0, (high + low + 1) / 2), .next_stage = low};
}

uint32_t SimFlashDevice::ShapeOf(const FlashRead& read) {
  auto [it, added] = shape_index_.try_emplace(
      std::make_tuple(read.request_bytes, read.sequential, read.range_bytes, read.page_cache),
      static_cast<uint32_t>(rates_by_depth_.size()));
  if (added) rates_by_depth_.emplace_back(std::max(1, command_queue_depth_) + 1, 0.0);
  return it->second;
}

double SimFlashDevice::Throughput(const Batch& b, int depth) {
  double& rate = rates_by_depth_[b.shape][depth];
  if (rate > 0) return rate;
  FlashRequestShape shape{.request_bytes = b.read.request_bytes,
                          .queue_depth = depth,
                          .sequential = b.read.sequential,
                          .range_bytes = b.read.range_bytes,
                          .core_class = core_class_,
                          .page_cache = b.read.page_cache};
  rate = curve_.Throughput(shape) * issuer_factor_;
  return rate;
}

void SimFlashDevice::OnEvent(uint64_t generation) {
  if (generation != generation_) return;  // superseded by a later arrival or completion
  Advance();
  // The batches that finished, in a vector kept between events (taken while
  // the sink runs: its reads may start new batches).
  std::vector<Batch> done = std::move(done_scratch_);
  done.clear();
  for (size_t i = 0; i < active_.size();) {
    // Finished, up to the nanosecond rounding of the event time.
    if (active_[i].remaining <= active_[i].rate * 1e-9) {
      done.push_back(active_[i]);
      active_[i] = active_.back();
      active_.pop_back();
    } else {
      ++i;
    }
  }
  Reschedule();
  for (const Batch& b : done) {
    if (timeline_) {
      timeline_->AddAsync(lane_,
                          {.name = b.read.sequential ? "sequential read" : "read",
                           .layer = b.read.layer,
                           .bytes = static_cast<int64_t>(b.read.request_bytes) * b.read.count,
                           .requests = b.read.count},
                          b.submitted, queue_->now());
    }
    // Each slot of a batch limited to k in flight turned around once per later read.
    const int64_t slots = std::max(1, b.read.max_in_flight);
    const int64_t turns = (b.read.count + slots - 1) / slots - 1;
    if (resubmit_gap_ns_ > 0 && turns > 0) {
      const uint64_t tag = b.read.tag;
      queue_->After(
          CeilNanos(turns * resubmit_gap_ns_),
          [this, tag] { sink_->OnReadDone(tag, true); }, "flash resubmit gaps");
    } else {
      sink_->OnReadDone(b.read.tag, true);
    }
  }
  done_scratch_ = std::move(done);
}

}  // namespace sparseflash
