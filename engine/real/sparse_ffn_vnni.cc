#include "engine/real/sparse_ffn_vnni.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/real/bundle_prefetch.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sparseflash {
namespace {

// x rounded to int8 per weight group: x ~ q * scale.
struct Q8 {
  std::vector<int8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> q_sum;
};

Q8 QuantizeQ8(const FfnKernelShape& s, const float* x) {
  const int groups = s.d_model / s.group;
  Q8 r;
  r.q.resize(s.d_model);
  r.scale.resize(groups);
  r.q_sum.resize(groups);
  for (int g = 0; g < groups; ++g) {
    const float* xg = x + g * s.group;
    float max_abs = 0;
    for (int i = 0; i < s.group; ++i) max_abs = std::max(max_abs, std::fabs(xg[i]));
    const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    const float inv = 1.0f / scale;
    int32_t sum = 0;
    for (int i = 0; i < s.group; ++i) {
      const int8_t q = static_cast<int8_t>(std::lrintf(xg[i] * inv));
      r.q[g * s.group + i] = q;
      sum += q;
    }
    r.scale[g] = scale;
    r.q_sum[g] = sum;
  }
  return r;
}

}  // namespace

void SparseFfnScalarQ8(const FfnKernelShape& s, const uint8_t* const* bundles, int count,
                       const float* x, float* out) {
  const Q8 q = QuantizeQ8(s, x);
  std::vector<float> rounded(s.d_model);
  for (int i = 0; i < s.d_model; ++i) rounded[i] = q.q[i] * q.scale[i / s.group];
  SparseFfnScalar(s, bundles, count, rounded.data(), out);
}

#if defined(__x86_64__)

#define SF_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,f16c,fma")))

// GCC 12's AVX-512 intrinsics self-initialise their "undefined" merge operands,
// which its own -Wuninitialized flags (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

constexpr int kChunk = 64;  // bytes of weights per vector

int64_t WeightBytes(const FfnKernelShape& s) { return int64_t{s.d_model} * s.bits / 8; }

// Bytes of one weight group within the vectors the dot product loads: for
// int4 each byte holds two weights, split into an even and an odd vector.
int GroupBytes(const FfnKernelShape& s) { return s.bits == 4 ? s.group / 2 : s.group; }

// x as the dot products want it, once per call.
struct PreparedQ8 {
  std::vector<int8_t> even, odd;  // int4: x[2i] and x[2i+1]; int8: `even` is x in order
  std::vector<int8_t> q;          // int4: x in order, before the split
  std::vector<float> scale;       // per group, padded by 16 for whole-vector loads
  std::vector<float> correction;  // per group: what the weight offset adds, / weight scale
};

// A worker's buffers, kept from call to call: a small call must not pay for
// allocating and zeroing them (about 15 us per call when it did).
struct Scratch {
  PreparedQ8 p;
  std::vector<float> even, odd, owed, owed_half, factor, down_factors;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Lanes [0, n) of 16 (all when n >= 16).
SF_VNNI inline __mmask16 FirstLanes(int n) {
  return static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1);
}

// x rounded to int8 per weight group as QuantizeQ8 does, 16 lanes at a time
// (the same float operations and round-to-nearest-even, so the same bytes),
// laid out for the dot products in `p`.
SF_VNNI void Prepare(const FfnKernelShape& s, const float* x, PreparedQ8* p) {
  const int n = s.d_model, groups = n / s.group;
  std::vector<int8_t>& q = s.bits == 4 ? p->q : p->even;
  q.resize(n);
  p->scale.assign(groups + 16, 0.0f);
  p->correction.assign(groups + 16, 0.0f);
  // int4 weights are nibbles w + 8; int8 weights are read as bytes w + 128.
  const float offset = s.bits == 4 ? 8.0f : 128.0f;
  for (int g = 0; g < groups; ++g) {
    const float* xg = x + g * s.group;
    __m512 max_abs = _mm512_setzero_ps();
    for (int i = 0; i < s.group; i += 16) {
      const __m512 v = _mm512_maskz_loadu_ps(FirstLanes(s.group - i), xg + i);
      max_abs = _mm512_max_ps(max_abs, _mm512_abs_ps(v));
    }
    const float top = _mm512_reduce_max_ps(max_abs);
    const float scale = top > 0 ? top / 127.0f : 1.0f;
    const __m512 inv = _mm512_set1_ps(1.0f / scale);
    __m512i sum = _mm512_setzero_si512();
    for (int i = 0; i < s.group; i += 16) {
      const __mmask16 m = FirstLanes(s.group - i);
      const __m512i qi = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, xg + i), inv));
      sum = _mm512_add_epi32(sum, qi);
      _mm_mask_storeu_epi8(q.data() + g * s.group + i, m, _mm512_cvtepi32_epi8(qi));
    }
    p->scale[g] = scale;
    p->correction[g] = offset * static_cast<float>(_mm512_reduce_add_epi32(sum));
  }
  if (s.bits != 4) return;
  p->even.resize(n / 2);
  p->odd.resize(n / 2);
  for (int i = 0; i < n; i += 64) {  // bytes 2k and 2k+1 of each 16-bit lane
    const __m512i v = _mm512_loadu_si512(q.data() + i);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p->even.data() + i / 2),
                        _mm512_cvtepi16_epi8(v));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p->odd.data() + i / 2),
                        _mm512_cvtepi16_epi8(_mm512_srai_epi16(v, 8)));
  }
}

// out += the accumulated down columns: for int4, out[2i] += even[i] - o and
// out[2i+1] += odd[i] - o with o = 8 * owed[2i / group]; for int8, out += even.
SF_VNNI void FoldOutput(const FfnKernelShape& s, Scratch& t, float* out) {
  const int n = s.d_model;
  if (s.bits != 4) {
    for (int i = 0; i < n; i += 16) {
      _mm512_storeu_ps(out + i,
                       _mm512_add_ps(_mm512_loadu_ps(out + i), _mm512_loadu_ps(t.even.data() + i)));
    }
    return;
  }
  const int half_group = s.group / 2;
  t.owed_half.resize(n / 2);
  for (int g = 0; g < n / s.group; ++g) {
    const __m512 o = _mm512_set1_ps(8.0f * t.owed[g]);
    for (int i = 0; i < half_group; i += 16) {
      _mm512_mask_storeu_ps(t.owed_half.data() + g * half_group + i, FirstLanes(half_group - i), o);
    }
  }
  alignas(64) int32_t lo_idx[16], hi_idx[16];
  for (int l = 0; l < 16; ++l) {
    lo_idx[l] = l / 2 + (l % 2) * 16;  // even[0], odd[0], even[1], odd[1], ...
    hi_idx[l] = 8 + l / 2 + (l % 2) * 16;
  }
  const __m512i lo = _mm512_load_si512(lo_idx), hi = _mm512_load_si512(hi_idx);
  for (int i = 0; i < n / 2; i += 16) {
    const __m512 o = _mm512_loadu_ps(t.owed_half.data() + i);
    const __m512 e = _mm512_sub_ps(_mm512_loadu_ps(t.even.data() + i), o);
    const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(t.odd.data() + i), o);
    float* at = out + 2 * i;
    _mm512_storeu_ps(at, _mm512_add_ps(_mm512_loadu_ps(at), _mm512_permutex2var_ps(e, lo, d)));
    _mm512_storeu_ps(at + 16,
                     _mm512_add_ps(_mm512_loadu_ps(at + 16), _mm512_permutex2var_ps(e, hi, d)));
  }
}

// Lane l of a 64-byte chunk's int32 sums belongs to group base + index[l].
SF_VNNI __m512i ChunkGroupIndex(int group_bytes) {
  alignas(64) int32_t idx[16];
  for (int l = 0; l < 16; ++l) idx[l] = group_bytes < kChunk ? 4 * l / group_bytes : 0;
  return _mm512_load_si512(idx);
}

// Per-group factors of one row: factor[g] = half scale[g] * times * mul[g]
// (mul may be null: 1), and the sum of factor[g] * correction[g] (correction
// may be null).
SF_VNNI float RowFactors(const FfnKernelShape& s, const uint8_t* row, float times, const float* mul,
                         const float* correction, float* factor) {
  const int groups = s.d_model / s.group;
  const uint16_t* halves = reinterpret_cast<const uint16_t*>(row + WeightBytes(s));
  __m512 owed = _mm512_setzero_ps();
  for (int g = 0; g < groups; g += 16) {
    const __mmask16 m = FirstLanes(groups - g);
    __m512 f = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, halves + g)),
                             _mm512_set1_ps(times));
    if (mul != nullptr) f = _mm512_mul_ps(f, _mm512_maskz_loadu_ps(m, mul + g));
    _mm512_mask_storeu_ps(factor + g, m, f);
    if (correction != nullptr)
      owed = _mm512_fmadd_ps(f, _mm512_maskz_loadu_ps(m, correction + g), owed);
  }
  return _mm512_reduce_add_ps(owed);
}

// One 64-byte chunk's int32 sums of weights times x.
SF_VNNI inline __m512i ChunkDot(int bits, const uint8_t* w, const int8_t* even, const int8_t* odd) {
  const __m512i b = _mm512_loadu_si512(w);
  if (bits == 8) {
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(b, _mm512_set1_epi8(-128)),
                               _mm512_loadu_si512(even));
  }
  const __m512i nibble = _mm512_set1_epi8(0x0f);
  const __m512i lo = _mm512_and_si512(b, nibble);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), nibble);
  const __m512i acc = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(even));
  return _mm512_dpbusd_epi32(acc, hi, _mm512_loadu_si512(odd));
}

// Where a chunk's factors start in the row's per-group factors: chunk c's
// first group is c * kChunk / group_bytes, stepped without a division (a
// 64-bit divide per chunk was the largest cost of the dot product).
class ChunkFactors {
 public:
  SF_VNNI ChunkFactors(int group_bytes, const float* factor)
      : at_(factor),
        step_(group_bytes < kChunk ? kChunk / group_bytes : 1),
        chunks_per_group_(group_bytes < kChunk ? 1 : group_bytes / kChunk),
        left_(chunks_per_group_) {}

  // The 16 factors of the current chunk's lanes; moves to the next chunk.
  SF_VNNI __m512 Next(__m512i index) {
    const __m512 f = _mm512_permutexvar_ps(index, _mm512_loadu_ps(at_));
    if (--left_ == 0) {
      at_ += step_;
      left_ = chunks_per_group_;
    }
    return f;
  }

 private:
  const float* at_;
  int step_, chunks_per_group_, left_;
};

// Dot product of one gate or up row with x. Even chunks accumulate in one
// chain and odd chunks in another. The `ahead_bytes` at `ahead` (null: none)
// are asked for over the chunks (PacedLines).
SF_VNNI float RowDot(const FfnKernelShape& s, const uint8_t* row, const PreparedQ8& p,
                     __m512i index, float* factor, const uint8_t* ahead, int64_t ahead_bytes) {
  const float owed = RowFactors(s, row, 1.0f, p.scale.data(), p.correction.data(), factor);
  ChunkFactors factors(GroupBytes(s), factor);
  const int64_t chunks = WeightBytes(s) / kChunk;
  PacedLines fetch(ahead, ahead_bytes, chunks);
  const int8_t* odd = s.bits == 4 ? p.odd.data() : nullptr;
  auto chunk = [&](int64_t c, __m512 total) SF_VNNI {
    fetch.Step();
    const int64_t at = c * kChunk;
    const __m512i sums =
        ChunkDot(s.bits, row + at, p.even.data() + at, odd == nullptr ? nullptr : odd + at);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), factors.Next(index), total);
  };
  __m512 total0 = _mm512_setzero_ps(), total1 = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + 1 < chunks; c += 2) {
    total0 = chunk(c, total0);
    total1 = chunk(c + 1, total1);
  }
  if (c < chunks) total0 = chunk(c, total0);
  fetch.Rest();
  return _mm512_reduce_add_ps(_mm512_add_ps(total0, total1)) - owed;
}

// Down columns of up to four active neurons, accumulated together.
struct DownBatch {
  int n = 0;
  const uint8_t* col[4];
  float h[4];
};

// 16 weight bytes at `at` of each of N columns, times their factors `f`, added
// to out (even and odd elements for int4). Columns alternate between two
// accumulator chains so that the FMAs of one step do not wait on each other.
template <int N>
SF_VNNI inline void DownStep(int bits, const uint8_t* const* col, int64_t at, const __m512* f,
                             float* out_even, float* out_odd) {
  if (bits == 4) {
    const __m512i nibble = _mm512_set1_epi32(0x0f);
    __m512 even[2] = {_mm512_loadu_ps(out_even + at), _mm512_setzero_ps()};
    __m512 odd[2] = {_mm512_loadu_ps(out_odd + at), _mm512_setzero_ps()};
    for (int j = 0; j < N; ++j) {
      const __m512i b =
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(col[j] + at)));
      even[j % 2] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(b, nibble)), f[j], even[j % 2]);
      odd[j % 2] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4)), f[j], odd[j % 2]);
    }
    _mm512_storeu_ps(out_even + at, _mm512_add_ps(even[0], even[1]));
    _mm512_storeu_ps(out_odd + at, _mm512_add_ps(odd[0], odd[1]));
  } else {
    __m512 o[2] = {_mm512_loadu_ps(out_even + at), _mm512_setzero_ps()};
    for (int j = 0; j < N; ++j) {
      const __m512i b =
          _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(col[j] + at)));
      o[j % 2] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(b), f[j], o[j % 2]);
    }
    _mm512_storeu_ps(out_even + at, _mm512_add_ps(o[0], o[1]));
  }
}

// All of N columns' weights, each times its per-group factors `f[j]`, added to
// out. A group of 16 bytes or more shares one factor per column across its
// steps; narrower groups (8 bytes: int4 g16) take two factors per step.
template <int N>
SF_VNNI void DownColumns(const FfnKernelShape& s, const uint8_t* const* col, float* const* f,
                         float* out_even, float* out_odd) {
  const int group_bytes = GroupBytes(s);
  const int groups = s.d_model / s.group;
  __m512 fv[N];
  if (group_bytes >= 16) {
    for (int g = 0; g < groups; ++g) {
      for (int j = 0; j < N; ++j) fv[j] = _mm512_set1_ps(f[j][g]);
      const int64_t end = int64_t{g + 1} * group_bytes;
      for (int64_t at = int64_t{g} * group_bytes; at < end; at += 16) {
        DownStep<N>(s.bits, col, at, fv, out_even, out_odd);
      }
    }
    return;
  }
  alignas(64) int32_t idx[16];
  for (int l = 0; l < 16; ++l) idx[l] = l / group_bytes;
  const __m512i index = _mm512_load_si512(idx);
  const int64_t groups_per_step = 16 / group_bytes;
  for (int64_t at = 0, first = 0; at < WeightBytes(s); at += 16, first += groups_per_step) {
    for (int j = 0; j < N; ++j) {
      fv[j] = _mm512_permutexvar_ps(index, _mm512_loadu_ps(f[j] + first));
    }
    DownStep<N>(s.bits, col, at, fv, out_even, out_odd);
  }
}

// out (split into even and odd elements for int4) += sum_j h_j * column_j;
// `owed[g]` collects what the weight offset adds to group g.
SF_VNNI void AccumulateDown(const FfnKernelShape& s, const DownBatch& batch, float* factors,
                            float* out_even, float* out_odd, float* owed) {
  const int groups = s.d_model / s.group;
  float* f[4];
  for (int j = 0; j < batch.n; ++j) {
    f[j] = factors + j * (groups + 16);
    RowFactors(s, batch.col[j], batch.h[j], nullptr, nullptr, f[j]);
    if (s.bits == 4) {
      for (int g = 0; g < groups; ++g) owed[g] += f[j][g];
    }
  }
  switch (batch.n) {
    case 4:
      return DownColumns<4>(s, batch.col, f, out_even, out_odd);
    case 3:
      return DownColumns<3>(s, batch.col, f, out_even, out_odd);
    case 2:
      return DownColumns<2>(s, batch.col, f, out_even, out_odd);
    case 1:
      return DownColumns<1>(s, batch.col, f, out_even, out_odd);
    default:
      return;
  }
}

}  // namespace

bool SparseFfnVnniSupports(const FfnKernelShape& s) {
  static const bool cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512vnni");
  if (!cpu || (s.bits != 4 && s.bits != 8) || s.group <= 0 || s.d_model % s.group != 0)
    return false;
  const int group_bytes = GroupBytes(s);
  const bool tiles = group_bytes < kChunk ? kChunk % group_bytes == 0 : group_bytes % kChunk == 0;
  return tiles && group_bytes % 8 == 0 && WeightBytes(s) % kChunk == 0;
}

SF_VNNI void SparseFfnVnni(const FfnKernelShape& s, const uint8_t* const* bundles, int count,
                           const float* x, float* out) {
  const int n = s.d_model, groups = n / s.group;
  Scratch& t = ThreadScratch();
  Prepare(s, x, &t.p);
  const PreparedQ8& p = t.p;
  const __m512i index = ChunkGroupIndex(GroupBytes(s));
  const int64_t half = WeightBytes(s);
  t.even.assign(half, 0.0f);
  t.odd.assign(s.bits == 4 ? half : 0, 0.0f);
  t.owed.assign(groups, 0.0f);
  t.factor.assign(groups + 16, 0.0f);
  t.down_factors.assign(4 * (groups + 16), 0.0f);
  const int64_t row = s.row_bytes();
  const int64_t gate_up_bytes = row * (s.gated ? 2 : 1);
  DownBatch batch;
  const int64_t bundle = s.bundle_bytes();
  const BundlePrefetcher prefetch(bundles, count, bundle);
  for (int k = 0; k < count; ++k) {
    const uint8_t* b = bundles[k];
    prefetch.StartOf(k);
    // Bundle k + distance is asked for while this one's rows are computed:
    // its gate row during the gate's, the rest during the up row's.
    const BundleAhead ahead = prefetch.AheadSplit(k, s.gated ? row : bundle);
    float h = RowDot(s, b, p, index, t.factor.data(), ahead.first, ahead.first_bytes);
    if (h <= 0) {  // the neuron is off: its up row and down column are not needed
      ahead.FetchRest();
      continue;
    }
    if (s.gated) h *= RowDot(s, b + row, p, index, t.factor.data(), ahead.rest, ahead.rest_bytes);
    batch.col[batch.n] = b + gate_up_bytes;
    batch.h[batch.n++] = h;
    if (batch.n == 4) {
      AccumulateDown(s, batch, t.down_factors.data(), t.even.data(), t.odd.data(), t.owed.data());
      batch.n = 0;
    }
  }
  if (batch.n > 0) {
    AccumulateDown(s, batch, t.down_factors.data(), t.even.data(), t.odd.data(), t.owed.data());
  }
  FoldOutput(s, t, out);
}

SF_VNNI void DenseGemvVnni(const FfnKernelShape& s, const uint8_t* base, int64_t rows,
                           const float* x, float* y) {
  Scratch& t = ThreadScratch();
  Prepare(s, x, &t.p);
  const __m512i index = ChunkGroupIndex(GroupBytes(s));
  t.factor.assign(s.d_model / s.group + 16, 0.0f);
  const int64_t row = s.row_bytes();
  const RowPrefetcher prefetch(base, rows, row);
  for (int64_t r = 0; r < rows; ++r) {
    prefetch.StartOf(r);
    y[r] = RowDot(s, base + r * row, t.p, index, t.factor.data(), prefetch.Ahead(r), row);
  }
}

#else  // not x86-64

bool SparseFfnVnniSupports(const FfnKernelShape&) { return false; }

void DenseGemvVnni(const FfnKernelShape& s, const uint8_t* base, int64_t rows, const float* x,
                   float* y) {
  DenseGemvScalar(s, base, rows, x, y);
}

void SparseFfnVnni(const FfnKernelShape& s, const uint8_t* const* bundles, int count,
                   const float* x, float* out) {
  SparseFfnScalarQ8(s, bundles, count, x, out);
}

#endif

}  // namespace sparseflash
