// Heap tuning for processes that only simulate (simulate, sweep, validate,
// trace gen, the benchmarks), with glibc's own malloc; elsewhere (another libc,
// a sanitizer's malloc) no-ops. Not for real runs (replay, generate,
// calibrate), whose memory is a budget the process must stay inside.
#pragma once

namespace sparseflash {

// Whether the functions below change anything in this build.
bool HeapTuningApplies();

// Memory a run frees stays with the process for the next run instead of going
// back to the kernel, so each run of a sweep does not fault in and zero fresh
// pages for its per-neuron arrays (tens of MB for a 47B MoE model): large
// blocks come from the heap, not their own mappings, and the heap's top is not
// trimmed.
void KeepFreedHeapForReuse();

// KeepFreedHeapForReuse, and the main heap backed by transparent huge pages:
// its first 2 GiB of address space (not memory: a page is backed when first
// written) are marked MADV_HUGEPAGE. A simulation writes its per-neuron arrays
// once each (160 MB for TurboSparse-Mixtral-47B); in 4 KiB pages that is ~46 K
// page faults, about a third of a 256-token run's time. With one run at a time
// (`concurrent_runs` 1) every thread allocates from that heap; with more, each
// thread keeps its own heap (small pages), as one heap would serialise them.
// Where the kernel has no THP, or refuses the address space, the heap stays
// as it was.
void TuneHeapForSimulation(int concurrent_runs);

}  // namespace sparseflash
