#include "devices/device_catalog.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/embedded_file.h"
#include "common/files.h"
#include "common/textproto.h"
#include "devices/device.pb.h"
#include "google/protobuf/text_format.h"

namespace sparseflash {

extern const EmbeddedFile kDeviceFiles[];
extern const int kDeviceFiles_count;

namespace {

constexpr double kMega = 1e6, kGiga = 1e9;

DeviceProfile FromProto(const proto::DeviceProfile& d) {
  DeviceProfile out;
  out.name = d.name();
  out.description = d.description();
  out.soc = d.soc();
  out.measured_on = d.measured_on();
  out.sources = d.sources();
  const proto::FlashProfile& f = d.flash();
  out.flash.interface = f.interface();
  out.flash.command_queue_depth = f.command_queue_depth();
  out.flash.command_queues = std::max(1, f.command_queues());
  out.flash.multi_issuer_penalty = f.multi_issuer_penalty();
  out.flash.submit_overhead_ns = f.submit_overhead_us() * 1e3;
  out.flash.resubmit_gap_ns = f.resubmit_gap_us() * 1e3;
  out.flash.read_ahead_kb = f.read_ahead_kb() == 0 ? kDefaultReadAheadKb : f.read_ahead_kb();
  out.flash.max_request_kb = f.max_request_kb() == 0 ? kDefaultMaxRequestKb : f.max_request_kb();
  out.flash.source = f.source();
  out.flash.active_w = f.active_w();
  out.base_w = d.base_w();
  for (const proto::FlashPoint& p : f.points()) {
    out.flash.points.push_back({p.request_bytes(), p.queue_depth(), p.sequential(), p.range_bytes(),
                                p.core_class(), p.throughput_mb_s() * kMega, p.source(),
                                p.page_cache()});
  }
  for (const proto::CoreClass& c : d.cores()) {
    out.cores.push_back({c.name(), c.count(), c.ghz(), c.io_issue_factor(), c.gemv_gb_s() * kGiga,
                         c.source(), c.dense_gops() * kGiga, c.task_dispatch_us() * 1e3,
                         c.active_w(), c.dense_gemv_gb_s() * kGiga});
    for (const proto::KernelRate& k : c.kernel_rates()) {
      out.cores.back().kernel_rates.push_back(
          {k.format(), k.gemv_gb_s() * kGiga, k.dense_gemv_gb_s() * kGiga,
           k.gemv_alone_gb_s() * kGiga, k.dense_gemv_alone_gb_s() * kGiga,
           ScatterSpanRates{k.span_mib() << 20, k.wide_span_mib() << 20, k.wide_gemv_gb_s() * kGiga,
                            k.wide_gemv_alone_gb_s() * kGiga},
           k.call_us() * 1e3});
    }
    out.cores.back().gemv_alone_bytes_per_s = c.gemv_alone_gb_s() * kGiga;
    out.cores.back().dense_gemv_alone_bytes_per_s = c.dense_gemv_alone_gb_s() * kGiga;
    out.cores.back().idle_wake_ns = c.idle_wake_us() * 1e3;
    out.cores.back().idle_window_ns = c.idle_window_us() * 1e3;
    if (c.has_queued_task_us()) out.cores.back().queued_task_ns = c.queued_task_us() * 1e3;
  }
  const proto::Dram& m = d.dram();
  out.dram = {m.capacity_bytes(),
              m.app_available_bytes(),
              m.cpu_gb_s() * kGiga,
              m.npu_gb_s() * kGiga,
              m.combined_gb_s() * kGiga,
              m.rewrite_gb_s() * kGiga,
              m.source(),
              m.page_cache().empty() ? "lru" : m.page_cache(),
              m.energy_pj_per_byte() * 1e-12};
  out.npu = {d.npu().present(), d.npu().dense_tops() * 1e12, d.npu().launch_overhead_us() * 1e3,
             d.npu().source(), d.npu().active_w()};
  return out;
}

proto::DeviceProfile ToProto(const DeviceProfile& d) {
  proto::DeviceProfile out;
  out.set_name(d.name);
  out.set_description(d.description);
  out.set_soc(d.soc);
  out.set_measured_on(d.measured_on);
  out.set_sources(d.sources);
  proto::FlashProfile* f = out.mutable_flash();
  f->set_interface(d.flash.interface);
  f->set_command_queue_depth(d.flash.command_queue_depth);
  f->set_command_queues(d.flash.command_queues);
  f->set_multi_issuer_penalty(d.flash.multi_issuer_penalty);
  f->set_submit_overhead_us(d.flash.submit_overhead_ns / 1e3);
  f->set_resubmit_gap_us(d.flash.resubmit_gap_ns / 1e3);
  f->set_read_ahead_kb(d.flash.read_ahead_kb);
  f->set_max_request_kb(d.flash.max_request_kb);
  f->set_source(d.flash.source);
  f->set_active_w(d.flash.active_w);
  out.set_base_w(d.base_w);
  for (const FlashPoint& p : d.flash.points) {
    proto::FlashPoint* q = f->add_points();
    q->set_request_bytes(p.request_bytes);
    q->set_queue_depth(p.queue_depth);
    q->set_sequential(p.sequential);
    q->set_range_bytes(p.range_bytes);
    q->set_core_class(p.core_class);
    q->set_throughput_mb_s(p.throughput_bytes_per_s / kMega);
    q->set_source(p.source);
    q->set_page_cache(p.page_cache);
  }
  for (const CoreClassSpec& c : d.cores) {
    proto::CoreClass* q = out.add_cores();
    q->set_name(c.name);
    q->set_count(c.count);
    q->set_ghz(c.ghz);
    q->set_io_issue_factor(c.io_issue_factor);
    q->set_gemv_gb_s(c.gemv_bytes_per_s / kGiga);
    q->set_dense_gops(c.dense_ops_per_s / kGiga);
    q->set_task_dispatch_us(c.task_dispatch_ns / 1e3);
    q->set_idle_wake_us(c.idle_wake_ns / 1e3);
    q->set_idle_window_us(c.idle_window_ns / 1e3);
    if (c.queued_task_ns) q->set_queued_task_us(*c.queued_task_ns / 1e3);
    q->set_active_w(c.active_w);
    q->set_dense_gemv_gb_s(c.dense_gemv_bytes_per_s / kGiga);
    for (const KernelRateSpec& k : c.kernel_rates) {
      proto::KernelRate* r = q->add_kernel_rates();
      r->set_format(k.format);
      r->set_gemv_gb_s(k.gemv_bytes_per_s / kGiga);
      r->set_dense_gemv_gb_s(k.dense_gemv_bytes_per_s / kGiga);
      r->set_gemv_alone_gb_s(k.gemv_alone_bytes_per_s / kGiga);
      r->set_dense_gemv_alone_gb_s(k.dense_gemv_alone_bytes_per_s / kGiga);
      r->set_span_mib(k.span.span_bytes >> 20);
      r->set_wide_span_mib(k.span.wide_span_bytes >> 20);
      r->set_wide_gemv_gb_s(k.span.wide_gemv_bytes_per_s / kGiga);
      r->set_wide_gemv_alone_gb_s(k.span.wide_gemv_alone_bytes_per_s / kGiga);
      r->set_call_us(k.call_ns / 1e3);
    }
    q->set_gemv_alone_gb_s(c.gemv_alone_bytes_per_s / kGiga);
    q->set_dense_gemv_alone_gb_s(c.dense_gemv_alone_bytes_per_s / kGiga);
    q->set_source(c.source);
  }
  proto::Dram* m = out.mutable_dram();
  m->set_capacity_bytes(d.dram.capacity_bytes);
  m->set_app_available_bytes(d.dram.app_available_bytes);
  m->set_cpu_gb_s(d.dram.cpu_bytes_per_s / kGiga);
  m->set_npu_gb_s(d.dram.npu_bytes_per_s / kGiga);
  m->set_combined_gb_s(d.dram.combined_bytes_per_s / kGiga);
  m->set_rewrite_gb_s(d.dram.rewrite_bytes_per_s / kGiga);
  m->set_source(d.dram.source);
  m->set_page_cache(d.dram.page_cache);
  m->set_energy_pj_per_byte(d.dram.energy_joules_per_byte * 1e12);
  proto::Npu* n = out.mutable_npu();
  n->set_present(d.npu.present);
  n->set_dense_tops(d.npu.dense_ops_per_s / 1e12);
  n->set_launch_overhead_us(d.npu.launch_overhead_ns / 1e3);
  n->set_source(d.npu.source);
  n->set_active_w(d.npu.active_w);
  return out;
}

}  // namespace

absl::StatusOr<DeviceProfile> ParseDeviceProfile(const std::string& text,
                                                 const std::string& origin) {
  proto::DeviceProfile proto;
  if (absl::Status s = ParseTextProto(text, origin, &proto); !s.ok()) return s;
  DeviceProfile profile = FromProto(proto);
  if (absl::Status s = profile.Validate(origin); !s.ok()) return s;
  return profile;
}

const NamedCatalog<DeviceProfile>& BuiltinDevices() {
  static const auto* catalog = [] {
    auto* c = new NamedCatalog<DeviceProfile>("device");
    for (int i = 0; i < kDeviceFiles_count; ++i) {
      absl::StatusOr<DeviceProfile> d =
          ParseDeviceProfile(kDeviceFiles[i].contents, kDeviceFiles[i].name);
      if (!d.ok()) {
        std::fprintf(stderr, "built-in device catalog is broken: %s\n",
                     std::string(d.status().message()).c_str());
        std::abort();
      }
      c->Add(*std::move(d));
    }
    return c;
  }();
  return *catalog;
}

absl::StatusOr<DeviceProfile> LoadDevice(const std::string& name_or_path) {
  if (NamesAFile(name_or_path)) {
    absl::StatusOr<std::string> text = ReadWholeFile(name_or_path, "device profile");
    if (!text.ok()) return text.status();
    return ParseDeviceProfile(*text, name_or_path);
  }
  return BuiltinDevices().Find(name_or_path);
}

std::string DeviceProfileToText(const DeviceProfile& profile) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(ToProto(profile), &text);
  return text;
}

}  // namespace sparseflash
