// This process's memory as the kernel counts it, read from /proc: resident
// set, its peak, and the share on transparent huge pages. Each reader returns
// -1 where the kernel does not say (another OS, a field it lacks). Also the
// machine's steal time: what a hypervisor took from this VM's cores.
#pragma once

#include <cstdint>
#include <string>

namespace sparseflash {

// A "Field: N kB" line of a /proc file, bytes; -1 if the file or field is absent.
int64_t ProcFieldBytes(const std::string& path, const std::string& field);

// A memory field of /proc/self/status ("VmRSS", "VmHWM"), bytes; -1 if absent.
int64_t ProcessStatusBytes(const std::string& field);

// Peak resident set of this process (VmHWM), bytes.
int64_t PeakRssBytes();

// This process's anonymous memory on transparent huge pages (smaps_rollup's
// AnonHugePages), bytes.
int64_t HugePageBytes();

// CPU time the hypervisor ran something else while this machine's virtual
// cores wanted to run (the "steal" column of the first line of `path`, a
// /proc/stat), summed over the cores, seconds; -1 if absent. On a VM it is the
// clearest sign a measurement shared the host.
double StealSeconds(const std::string& path = "/proc/stat");

}  // namespace sparseflash
