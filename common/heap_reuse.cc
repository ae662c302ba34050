#include "common/heap_reuse.h"

#include <cstdint>
#include <cstdlib>  // before the #if below: it defines __GLIBC__

// glibc's malloc, not a sanitizer's (which would also shadow the 2 GiB reserve).
#if defined(__GLIBC__)
#define SF_GLIBC_MALLOC 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#undef SF_GLIBC_MALLOC
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#undef SF_GLIBC_MALLOC
#endif

#if defined(SF_GLIBC_MALLOC)
#include <malloc.h>
#include <sys/mman.h>
#endif

namespace sparseflash {

bool HeapTuningApplies() {
#if defined(SF_GLIBC_MALLOC)
  return true;
#else
  return false;
#endif
}

void KeepFreedHeapForReuse() {
#if defined(SF_GLIBC_MALLOC)
  // The largest mmap threshold glibc takes on 64-bit (32 MiB): blocks below it
  // come from the heap. Trim only beyond 1 GiB of free heap top.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

void TuneHeapForSimulation(int concurrent_runs) {
  KeepFreedHeapForReuse();
#if defined(SF_GLIBC_MALLOC) && defined(MADV_HUGEPAGE)
  // The main arena (grown by brk) for every thread when one run allocates,
  // every block from it, and its top never trimmed: the address range marked
  // below stays the heap's for the life of the process.
  if (concurrent_runs <= 1) mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);  // glibc reads it as SIZE_MAX: never
  constexpr size_t kReserve = size_t{2} << 30;
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  void* block = std::malloc(kReserve);  // extends the heap; writes only its header
  if (block == nullptr) return;         // strict overcommit: stay with small pages
  const auto start = reinterpret_cast<uintptr_t>(block);
  const uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (start + kReserve) & ~(kHugePage - 1);
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // a hint
  std::free(block);  // back to the heap's top, which keeps the marked range
#endif
}

}  // namespace sparseflash
