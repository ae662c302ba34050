// For processes that run many simulations one after another (a sweep, the
// validation suite, a benchmark): memory a run frees stays with the process
// for the next run instead of going back to the kernel, so each run does not
// fault in and zero fresh pages for its per-neuron arrays (tens of MB for a
// 47B MoE model). With glibc: large blocks come from the heap, not their own
// mappings, and the heap's top is not trimmed. Elsewhere a no-op. Not for real
// runs, whose memory is a budget the process must stay inside.
#pragma once

namespace sparseflash {

void KeepFreedHeapForReuse();

}  // namespace sparseflash
