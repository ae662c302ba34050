#include "common/heap_reuse.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sparseflash {

void KeepFreedHeapForReuse() {
#if defined(__GLIBC__)
  // The largest mmap threshold glibc takes on 64-bit (32 MiB): blocks below it
  // come from the heap. Trim only beyond 1 GiB of free heap top.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace sparseflash
