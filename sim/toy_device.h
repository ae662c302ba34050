// A round-numbered device for golden tests: reads of 1,000,000 bytes at
// 1e9 bytes/s (1 ms each, same IOPS for smaller reads), cores that stream 1e9
// bytes/s and do 1e9 operations/s, and no DRAM ceiling in the way. Test-only.
#pragma once

#include "devices/device_profile.h"

namespace sparseflash {

inline DeviceProfile ToyDevice(int cores = 4) {
  DeviceProfile d;
  d.name = "toy";
  d.flash.interface = "toy";
  d.flash.command_queue_depth = 32;
  for (bool sequential : {false, true}) {
    FlashPoint p;
    p.request_bytes = 1000000;
    p.sequential = sequential;
    p.throughput_bytes_per_s = 1e9;
    d.flash.points.push_back(p);
  }
  CoreClassSpec core;
  core.name = "big";
  core.count = cores;
  core.ghz = 1;
  core.gemv_bytes_per_s = 1e9;
  core.dense_ops_per_s = 1e9;
  d.cores.push_back(core);
  d.dram.capacity_bytes = int64_t{16} << 30;
  d.dram.app_available_bytes = int64_t{16} << 30;
  d.dram.cpu_bytes_per_s = 1e12;
  d.dram.npu_bytes_per_s = 1e12;
  d.dram.combined_bytes_per_s = 1e12;
  d.dram.rewrite_bytes_per_s = 1e9;
  return d;
}

}  // namespace sparseflash
