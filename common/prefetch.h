// Software prefetch of one cache line, as an asm statement: GCC 12 deletes a
// loop whose only statements are __builtin_prefetch calls (it takes the loop
// for finite and without effect; seen at -O2 and -O3), which left callers with
// no prefetch at all. A volatile asm statement must run, so it stays.
#pragma once

namespace sparseflash {

// Asks for the cache line at `line` into L2 and the levels below it (for data a
// few kilobytes ahead, which lines asked into L1 would push out of it).
inline void PrefetchLine(const void* line) {
  const char* p = static_cast<const char*>(line);
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht1 %0" : : "m"(*p));
#elif defined(__aarch64__)
  asm volatile("prfm pldl2keep, %0" : : "Q"(*p));
#else
  __builtin_prefetch(p, 0, 2);
#endif
}

// Asks for the cache line at `line` into every level, L1 included (for data the
// caller reads within a few hundred cycles).
inline void PrefetchLineL1(const void* line) {
  const char* p = static_cast<const char*>(line);
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*p));
#elif defined(__aarch64__)
  asm volatile("prfm pldl1keep, %0" : : "Q"(*p));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

}  // namespace sparseflash
