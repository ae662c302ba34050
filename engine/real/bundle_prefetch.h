// Software prefetch of a sparse FFN's bundles, shared by every kernel path and
// the kernel's benchmark. The active neurons' bundles lie at random places in
// DRAM, so the hardware prefetcher only finds each one after its first lines
// have missed. About 14 KiB of bundles are kept in flight (two INT4 bundles of
// a 4096-wide layer, one INT8), a dense GEMV's rows 64 KiB; both asked into L2,
// not L1: lines asked into L1 pushed out the lines in use and each other. On an
// AMD EPYC VM (32 KiB L1 data cache), asking into L2 made the int4 sparse kernel
// 1.4-1.6x and the dense GEMV 1.6-2.2x faster from DRAM (sparse_ffn_benchmark
// and `device calibrate`, alternated with the L1 build), and the bundles' 14 KiB
// window instead of 64 KiB made the sparse kernel from DRAM 12 % (INT4 g32) and
// 8 % (INT8 g64) faster (BM_SparseFfn, ten repetitions in random interleaving;
// windows of 7 to 128 KiB swept: 14 KiB was the best of both), and a call's
// fixed cost in `device calibrate` fell from 10.7-12.6 to 2.8-3.9 us (the
// whole window is asked for at a call's start).
// The prefetch is common/prefetch.h's asm statement, which GCC cannot delete.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/prefetch.h"

namespace sparseflash {

// Asks for every line of `bytes` bytes at `at`.
inline void PrefetchBytes(const uint8_t* at, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) PrefetchLine(at + o);
}

// Asks for `bytes` at `at` a few lines at a time, spread over `steps` steps of
// the caller's work. A bundle's hundred-odd prefetches issued at once filled
// the core's load queue and stalled the arithmetic behind them; spread over
// the dot product's chunks, the sparse kernel from DRAM went from 6.5-6.9 to
// 7.7-7.8 GiB/s (INT4 g32) and from 7.4-7.6 to 10.8-11.5 (INT8), and the dense
// INT4 GEMV from 12.1-13.7 to 16.8-18.2 (BM_SparseFfn, BM_DenseGemv, AMD EPYC
// VM, two runs each). A null `at` asks for nothing.
class PacedLines {
 public:
  PacedLines(const uint8_t* at, int64_t bytes, int64_t steps)
      : at_(at),
        bytes_(at == nullptr ? 0 : bytes),
        per_step_(64 * std::max<int64_t>(
                           1, ((bytes + 63) / 64 + steps - 1) / std::max<int64_t>(1, steps))) {}

  // Asks for the next step's lines.
  void Step() { AskUpTo(std::min(bytes_, next_ + per_step_)); }

  // Asks for every line not yet asked for.
  void Rest() { AskUpTo(bytes_); }

  // Whether every line has been asked for.
  bool done() const { return next_ >= bytes_; }

 private:
  void AskUpTo(int64_t stop) {
    for (; next_ < stop; next_ += 64) PrefetchLine(at_ + next_);
  }

  const uint8_t* at_;
  int64_t bytes_;
  int64_t per_step_;
  int64_t next_ = 0;  // offset of the first line not yet asked for
};

// The bundle ahead as a kernel reads a bundle: its first row (the gate of a
// gated FFN, the whole bundle otherwise), asked for during the first row's dot
// product, then the rest, during the second's.
struct BundleAhead {
  const uint8_t* first = nullptr;
  int64_t first_bytes = 0;
  const uint8_t* rest = nullptr;
  int64_t rest_bytes = 0;

  // Asks for the rest at once: the second row is skipped (gate not positive).
  void FetchRest() const { PacedLines(rest, rest_bytes, 1).Rest(); }
};

class BundlePrefetcher {
 public:
  static constexpr int64_t kWindowBytes = 14 << 10;

  BundlePrefetcher(const uint8_t* const* bundles, int count, int64_t bundle_bytes)
      : bundles_(bundles),
        count_(count),
        bundle_bytes_(bundle_bytes),
        distance_(static_cast<int>(std::max<int64_t>(1, kWindowBytes / bundle_bytes))) {}

  // Bundles ahead of the one in use that are asked for.
  int distance() const { return distance_; }

  // Call before bundle k's work: asks for bundle k + distance(), and for the
  // whole window at k == 0; and for one line per page of bundle k + 4 x
  // distance(), so that its page walks are done before its lines are asked
  // for (scattered bundles miss the TLB: INT4 6.2-6.9 GB/s without this, 7.0-7.3
  // with it, in four alternated runs of BM_SparseFfn on an AMD EPYC VM; a
  // distance of 2 x gave 6.6-7.4).
  void Before(int k) const {
    StartOf(k);
    if (const uint8_t* ahead = Ahead(k)) Fetch(ahead);
  }

  // Before() without asking for bundle k + distance(): a caller that spreads
  // those lines over its own work (PacedLines) calls this and Ahead(k).
  void StartOf(int k) const {
    if (k == 0) {
      for (int j = 0; j < distance_ && j < count_; ++j) Fetch(bundles_[j]);
    }
    if (k + 4 * distance_ < count_) TouchPages(bundles_[k + 4 * distance_]);
  }

  // Bundle k + distance(), or null past the list's end.
  const uint8_t* Ahead(int k) const {
    return k + distance_ < count_ ? bundles_[k + distance_] : nullptr;
  }

  // Bundle k + distance() split after its first `first_bytes` (all null past
  // the list's end).
  BundleAhead AheadSplit(int k, int64_t first_bytes) const {
    const uint8_t* ahead = Ahead(k);
    if (ahead == nullptr) return {};
    return {ahead, first_bytes, ahead + first_bytes, bundle_bytes_ - first_bytes};
  }

 private:
  void Fetch(const uint8_t* bundle) const { PrefetchBytes(bundle, bundle_bytes_); }
  void TouchPages(const uint8_t* bundle) const {
    for (int64_t o = 0; o < bundle_bytes_; o += 4096) PrefetchLine(bundle + o);
    PrefetchLine(bundle + bundle_bytes_ - 1);  // the last page, when the bundle straddles one more
  }

  const uint8_t* const* bundles_;
  int count_;
  int64_t bundle_bytes_;
  int distance_;
};

// The same window over consecutive rows (a dense GEMV): each row ends in its
// scales, which the kernel reads before the row's weights, so the reads jump
// back every row and the hardware prefetcher of an AMD EPYC VM fell behind on
// rows of INT4 g16 (2.2x slower than g32 from DRAM, equal in cache).
class RowPrefetcher {
 public:
  static constexpr int64_t kWindowBytes = 64 << 10;

  RowPrefetcher(const uint8_t* base, int64_t rows, int64_t row_bytes)
      : base_(base),
        rows_(rows),
        row_bytes_(row_bytes),
        distance_(std::max<int64_t>(1, kWindowBytes / row_bytes)) {}

  // Call before row r's work: asks for row r + distance, and the window at r == 0.
  void Before(int64_t r) const {
    StartOf(r);
    if (const uint8_t* ahead = Ahead(r)) PrefetchBytes(ahead, row_bytes_);
  }

  // Before() without asking for row r + distance (see PacedLines).
  void StartOf(int64_t r) const {
    if (r == 0) PrefetchBytes(base_, std::min(distance_, rows_) * row_bytes_);
  }

  // Row r + distance, or null past the matrix's end.
  const uint8_t* Ahead(int64_t r) const {
    return r + distance_ < rows_ ? base_ + (r + distance_) * row_bytes_ : nullptr;
  }

 private:
  const uint8_t* base_;
  int64_t rows_, row_bytes_, distance_;
};

}  // namespace sparseflash
