#include "engine/real/weight_memory.h"

#include <sys/mman.h>

#include <algorithm>

namespace sparseflash {
namespace {
constexpr int64_t kHugePage = int64_t{2} << 20;
}  // namespace

int64_t WeightMemoryBytes(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage;
}

WeightMemory AllocateWeightMemory(int64_t bytes) {
  const int64_t size = WeightMemoryBytes(bytes);
  void* p = nullptr;
  if (posix_memalign(&p, static_cast<size_t>(kHugePage), static_cast<size_t>(size)) != 0) {
    return nullptr;
  }
#ifdef MADV_HUGEPAGE
  madvise(p, static_cast<size_t>(size), MADV_HUGEPAGE);  // a hint: failure leaves small pages
#endif
  return WeightMemory(static_cast<uint8_t*>(p));
}

}  // namespace sparseflash
