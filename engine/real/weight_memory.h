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

namespace sparseflash {

// Frees memory from malloc or posix_memalign: weight memory and other buffers
// this code aligns itself.
struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using WeightMemory = std::unique_ptr<uint8_t, FreeDeleter>;

// At least `bytes` (at least one byte), or null when the allocation fails.
WeightMemory AllocateWeightMemory(int64_t bytes);

// The bytes AllocateWeightMemory(bytes) takes: `bytes` rounded up to 2 MiB.
int64_t WeightMemoryBytes(int64_t bytes);

}  // namespace sparseflash
