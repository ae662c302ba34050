// Memory for weights the kernels read in place (the cache's arena, resident
// weights, calibration and benchmark arenas): aligned to and sized in 2 MiB,
// and asked to be backed by transparent huge pages (MADV_HUGEPAGE) where the
// kernel has them. A sparse FFN's active bundles lie scattered, so on 4 KiB
// pages nearly every bundle costs a TLB miss and a page walk: on an AMD EPYC
// VM the INT4 g32 kernel read 8.0-8.3 GiB/s of scattered bundles on 4 KiB
// pages and 10.1-10.6 on huge pages (BM_SparseFfn over 512 MiB, three
// alternated rounds). Where huge pages are off or unavailable the memory is
// ordinary pages and only the rounding remains. Not zeroed.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace sparseflash {

struct WeightMemoryDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using WeightMemory = std::unique_ptr<uint8_t, WeightMemoryDeleter>;

// At least `bytes` (at least one byte), or null when the allocation fails.
WeightMemory AllocateWeightMemory(int64_t bytes);

// The bytes AllocateWeightMemory(bytes) takes: `bytes` rounded up to 2 MiB.
int64_t WeightMemoryBytes(int64_t bytes);

// This process's anonymous memory on transparent huge pages (smaps_rollup's
// AnonHugePages), bytes; -1 where the kernel does not say.
int64_t HugePageBytes();

// A "Field: N kB" line of a /proc file, bytes; -1 if the file or field is absent.
int64_t ProcFieldBytes(const std::string& path, const std::string& field);

}  // namespace sparseflash
