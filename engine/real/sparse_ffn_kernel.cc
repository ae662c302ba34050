// Compiled once per SIMD target (hwy/foreach_target.h re-includes this file).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/real/sparse_ffn_kernel.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#ifndef SPARSEFLASH_SPARSE_FFN_SHARED
#define SPARSEFLASH_SPARSE_FFN_SHARED
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/real/bundle_prefetch.h"
#include "engine/real/sparse_ffn_kernel.h"
#include "engine/real/sparse_ffn_vnni.h"

namespace sparseflash {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = (bits >> 16) & 0x8000u;
  const int exp = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  const uint32_t mant = bits & 0x7fffffu;
  if (exp <= 0) return sign;  // flush tiny values to zero
  if (exp >= 31) return sign | 0x7c00u;
  return sign | static_cast<uint16_t>(exp << 10) | static_cast<uint16_t>(mant >> 13);
}

}  // namespace sparseflash
#endif  // SPARSEFLASH_SPARSE_FFN_SHARED

HWY_BEFORE_NAMESPACE();
namespace sparseflash {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The kernel's plan, per call: x is quantized once per weight group to int16
// (scale per group) so the gate and up rows are integer dot products (pairwise
// int16 multiply-add into int32, then one float multiply per group); int4
// weights are stored with an offset of 8, removed per group through the sum of
// the quantized x. The down columns of the active neurons are accumulated four
// at a time, so `out` is loaded and stored once per four columns; their offset
// of 8 is removed per group once at the end. Scales are FP16, converted a row at
// a time with the hardware conversion where there is one.

// Lanes for a float vector (at most 8, the int32 halves of 16 int16 lanes).
using FloatTag = hn::CappedTag<float, 8>;
using Int32Tag = hn::Rebind<int32_t, FloatTag>;

// x prepared once per call.
struct PreparedX {
  std::vector<int16_t> q_even, q_odd;  // int4: x[2i] and x[2i+1] quantized
  std::vector<int16_t> q;              // int8: x quantized, in order (int4: before the split)
  std::vector<float> scale;            // per group: x = q * scale
  std::vector<int32_t> q_sum;          // per group: the sum of q (for the int4 offset)
};

// A worker's buffers, kept from call to call so that a small call does not
// pay for allocating and zeroing them.
struct Scratch {
  PreparedX p;
  std::vector<float> oe, oo, o, offset, scales;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// v rounded to the nearest integer, ties to even, as lrintf rounds in the
// default mode, for |v| < 2^22, without a library call: adding 1.5 * 2^23
// leaves no fraction bits.
inline int32_t RoundNearest(float v) {
  constexpr float kMagic = 12582912.0f;
  return static_cast<int32_t>((v + kMagic) - kMagic);
}

void PrepareX(const FfnKernelShape& s, const float* x, PreparedX* p) {
  const int n = s.d_model, groups = n / s.group;
  p->scale.resize(groups);
  p->q_sum.resize(groups);
  std::vector<int16_t>& q = p->q;
  q.resize(n);
  for (int g = 0; g < groups; ++g) {
    float max_abs = 0;
    for (int i = g * s.group; i < (g + 1) * s.group; ++i)
      max_abs = std::max(max_abs, std::fabs(x[i]));
    const float scale = max_abs > 0 ? max_abs / 32767.0f : 1.0f;
    const float inv = 1.0f / scale;
    int32_t sum = 0;
    for (int i = g * s.group; i < (g + 1) * s.group; ++i) {
      q[i] = static_cast<int16_t>(RoundNearest(x[i] * inv));
      sum += q[i];
    }
    p->scale[g] = scale;
    p->q_sum[g] = sum;
  }
  if (s.bits == 4) {
    p->q_even.resize(n / 2);
    p->q_odd.resize(n / 2);
    for (int i = 0; i < n / 2; ++i) {
      p->q_even[i] = q[2 * i];
      p->q_odd[i] = q[2 * i + 1];
    }
  }
}

// The FP16 scales after a row's weights, as floats.
void LoadScales(const FfnKernelShape& s, const uint8_t* row, float* out) {
  const FloatTag df;
  const hn::Rebind<hwy::float16_t, FloatTag> dh;
  const int groups = s.d_model / s.group;
  const uint8_t* base = row + int64_t{s.d_model} * s.bits / 8;
  const int lanes = static_cast<int>(hn::Lanes(df));
  int g = 0;
  for (; g + lanes <= groups; g += lanes) {
    hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(base) + g)),
               df, out + g);
  }
  for (; g < groups; ++g) {
    uint16_t h;
    std::memcpy(&h, base + 2 * g, 2);
    out[g] = HalfToFloat(h);
  }
}

// Dot product of one row with x. `D16` caps the int16 lanes so that one load
// never crosses a weight group (8 bytes of int4 for groups of 16). `ahead`'s
// bytes are asked for over the groups (PacedLines).
template <class D16>
float RowDot(D16 d16, const FfnKernelShape& s, const uint8_t* row, const PreparedX& p,
             float* scales, const uint8_t* ahead, int64_t ahead_bytes) {
  const hn::Repartition<int32_t, D16> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const hn::Rebind<uint8_t, D16> du8;
  const hn::Rebind<int8_t, D16> di8;
  const int lanes = static_cast<int>(hn::Lanes(d16));
  LoadScales(s, row, scales);
  auto total = hn::Zero(df);
  float offset = 0;
  const int groups = s.d_model / s.group;
  PacedLines fetch(ahead, ahead_bytes, groups);
  for (int g = 0; g < groups; ++g) {
    fetch.Step();
    auto acc = hn::Zero(d32), acc1 = hn::Zero(d32);
    if (s.bits == 4) {
      const int half = s.group / 2;
      for (int k = g * half; k < (g + 1) * half; k += lanes) {
        const auto b = hn::PromoteTo(d16, hn::LoadU(du8, row + k));
        acc = hn::ReorderWidenMulAccumulate(d32, hn::And(b, hn::Set(d16, 0xf)),
                                            hn::LoadU(d16, p.q_even.data() + k), acc, acc1);
        acc = hn::ReorderWidenMulAccumulate(d32, hn::ShiftRight<4>(b),
                                            hn::LoadU(d16, p.q_odd.data() + k), acc, acc1);
      }
    } else {
      const int8_t* w = reinterpret_cast<const int8_t*>(row);
      for (int k = g * s.group; k < (g + 1) * s.group; k += lanes) {
        acc = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LoadU(di8, w + k)),
                                            hn::LoadU(d16, p.q.data() + k), acc, acc1);
      }
    }
    const float scale = scales[g] * p.scale[g];
    total = hn::MulAdd(hn::ConvertTo(df, hn::RearrangeToOddPlusEven(acc, acc1)), hn::Set(df, scale),
                       total);
    if (s.bits == 4) offset += 8.0f * scale * static_cast<float>(p.q_sum[g]);
  }
  fetch.Rest();
  return hn::GetLane(hn::SumOfLanes(df, total)) - offset;
}

// even += f * low nibbles (even elements), odd += f * high nibbles (odd
// elements) of int4 `bytes`, still offset by 8. (Vectors are passed by
// reference, not held in a struct: SVE vectors are sizeless.)
template <class V>
void MulAddInt4(const uint8_t* bytes, V f, V& even, V& odd) {
  const FloatTag df;
  const Int32Tag di;
  const hn::Rebind<uint8_t, FloatTag> du8;
  const auto b = hn::PromoteTo(di, hn::LoadU(du8, bytes));
  even = hn::MulAdd(hn::ConvertTo(df, hn::And(b, hn::Set(di, 0xf))), f, even);
  odd = hn::MulAdd(hn::ConvertTo(df, hn::ShiftRight<4>(b)), f, odd);
}

// Down columns of up to four active neurons, accumulated together.
struct DownBatch {
  int n = 0;
  const uint8_t* col[4];
  float h[4];
};

// out (split into even and odd elements for int4) += sum_j h_j * column_j;
// `offset[g]` collects what the int4 offset of 8 owes group g.
void AccumulateDown(const FfnKernelShape& s, const DownBatch& batch, float* scales, float* out_even,
                    float* out_odd, float* out, float* offset) {
  const FloatTag df;
  const Int32Tag di;
  const hn::Rebind<int8_t, FloatTag> di8;
  const int lanes = static_cast<int>(hn::Lanes(df));
  const int groups = s.d_model / s.group;
  float* hs[4];
  for (int j = 0; j < batch.n; ++j) {
    hs[j] = scales + j * groups;
    LoadScales(s, batch.col[j], hs[j]);
    for (int g = 0; g < groups; ++g) hs[j][g] *= batch.h[j];
  }
  for (int g = 0; g < groups; ++g) {
    if (s.bits == 4) {
      float owed = 0;
      for (int j = 0; j < batch.n; ++j) owed += hs[j][g];
      offset[g] += 8.0f * owed;
      const int half = s.group / 2;
      for (int k = g * half; k < (g + 1) * half; k += lanes) {
        auto even = hn::LoadU(df, out_even + k), odd = hn::LoadU(df, out_odd + k);
        for (int j = 0; j < batch.n; ++j) {
          MulAddInt4(batch.col[j] + k, hn::Set(df, hs[j][g]), even, odd);
        }
        hn::StoreU(even, df, out_even + k);
        hn::StoreU(odd, df, out_odd + k);
      }
    } else {
      for (int k = g * s.group; k < (g + 1) * s.group; k += lanes) {
        auto o = hn::LoadU(df, out + k);
        for (int j = 0; j < batch.n; ++j) {
          const int8_t* w = reinterpret_cast<const int8_t*>(batch.col[j]);
          o = hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(di8, w + k))),
                         hn::Set(df, hs[j][g]), o);
        }
        hn::StoreU(o, df, out + k);
      }
    }
  }
}

template <class D16>
void SparseFfnWith(D16 d16, const FfnKernelShape& s, const uint8_t* const* bundles, int count,
                   const float* x, float* out) {
  const int n = s.d_model, groups = n / s.group;
  Scratch& t = ThreadScratch();
  PrepareX(s, x, &t.p);
  const PreparedX& p = t.p;
  std::vector<float>&oe = t.oe, &oo = t.oo, &o = t.o, &offset = t.offset, &scales = t.scales;
  oe.assign(n / 2, 0.0f);
  oo.assign(n / 2, 0.0f);
  o.assign(n, 0.0f);
  offset.assign(groups, 0.0f);
  scales.resize(4 * groups);
  const int64_t row = s.row_bytes();
  DownBatch batch;
  const int64_t gate_up_bytes = row * (s.gated ? 2 : 1);
  const int64_t bundle = s.bundle_bytes();
  const BundlePrefetcher prefetch(bundles, count, bundle);
  for (int k = 0; k < count; ++k) {
    const uint8_t* b = bundles[k];
    prefetch.StartOf(k);
    // Bundle k + distance is asked for while this one's rows are computed:
    // its gate row during the gate's, the rest during the up row's.
    const BundleAhead ahead = prefetch.AheadSplit(k, s.gated ? row : bundle);
    float h = RowDot(d16, s, b, p, scales.data(), ahead.first, ahead.first_bytes);
    if (h <= 0) {  // the neuron is off: its up row and down column are not needed
      ahead.FetchRest();
      continue;
    }
    if (s.gated) h *= RowDot(d16, s, b + row, p, scales.data(), ahead.rest, ahead.rest_bytes);
    batch.col[batch.n] = b + gate_up_bytes;
    batch.h[batch.n++] = h;
    if (batch.n == 4) {
      AccumulateDown(s, batch, scales.data(), oe.data(), oo.data(), o.data(), offset.data());
      batch.n = 0;
    }
  }
  if (batch.n > 0) {
    AccumulateDown(s, batch, scales.data(), oe.data(), oo.data(), o.data(), offset.data());
  }
  if (s.bits == 4) {
    for (int i = 0; i < n / 2; ++i) {
      const float owed = offset[2 * i / s.group];
      out[2 * i] += oe[i] - owed;
      out[2 * i + 1] += oo[i] - owed;
    }
  } else {
    for (int i = 0; i < n; ++i) out[i] += o[i];
  }
}

void SparseFfnImpl(const FfnKernelShape& s, const uint8_t* const* bundles, int count,
                   const float* x, float* out) {
  // One int16 load must stay inside a group: 8 int4 bytes for groups of 16.
  if (s.bits == 4 && s.group < 32) {
    SparseFfnWith(hn::CappedTag<int16_t, 8>(), s, bundles, count, x, out);
  } else {
    SparseFfnWith(hn::CappedTag<int16_t, 16>(), s, bundles, count, x, out);
  }
}

template <class D16>
void DenseGemvWith(D16 d16, const FfnKernelShape& s, const uint8_t* base, int64_t rows,
                   const float* x, float* y) {
  Scratch& t = ThreadScratch();
  PrepareX(s, x, &t.p);
  const PreparedX& p = t.p;
  std::vector<float>& scales = t.scales;
  scales.resize(s.d_model / s.group);
  const int64_t row = s.row_bytes();
  const RowPrefetcher prefetch(base, rows, row);
  for (int64_t r = 0; r < rows; ++r) {
    prefetch.StartOf(r);
    y[r] = RowDot(d16, s, base + r * row, p, scales.data(), prefetch.Ahead(r), row);
  }
}

void DenseGemvImpl(const FfnKernelShape& s, const uint8_t* base, int64_t rows, const float* x,
                   float* y) {
  if (s.bits == 4 && s.group < 32) {
    DenseGemvWith(hn::CappedTag<int16_t, 8>(), s, base, rows, x, y);
  } else {
    DenseGemvWith(hn::CappedTag<int16_t, 16>(), s, base, rows, x, y);
  }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace sparseflash
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflash {

HWY_EXPORT(SparseFfnImpl);
HWY_EXPORT(TargetName);
HWY_EXPORT(DenseGemvImpl);

void DenseGemvPortable(const FfnKernelShape& shape, const uint8_t* base, int64_t rows,
                       const float* x, float* y) {
  HWY_DYNAMIC_DISPATCH(DenseGemvImpl)(shape, base, rows, x, y);
}

void DenseGemv(const FfnKernelShape& shape, const uint8_t* base, int64_t rows, const float* x,
               float* y) {
  if (SparseFfnVnniSupports(shape)) {
    DenseGemvVnni(shape, base, rows, x, y);
  } else {
    DenseGemvPortable(shape, base, rows, x, y);
  }
}

void SparseFfnPortable(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
                       const float* x, float* out) {
  HWY_DYNAMIC_DISPATCH(SparseFfnImpl)(shape, bundles, count, x, out);
}

const char* SparseFfnPortableTarget() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

void SparseFfn(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
               const float* x, float* out) {
  if (SparseFfnVnniSupports(shape)) {
    SparseFfnVnni(shape, bundles, count, x, out);
  } else {
    SparseFfnPortable(shape, bundles, count, x, out);
  }
}

void FillUnitBundles(const FfnKernelShape& s, uint8_t* base, int64_t bundles) {
  const int64_t weight_bytes = int64_t{s.d_model} * s.bits / 8;
  const uint8_t one = s.bits == 4 ? 0x99 : 0x01;  // int4 stores w + 8 per nibble
  const uint16_t scale = FloatToHalf(0.01f);
  for (int64_t r = 0; r < bundles * (s.gated ? 3 : 2); ++r) {
    uint8_t* row = base + r * s.row_bytes();
    std::memset(row, one, weight_bytes);
    uint16_t* scales = reinterpret_cast<uint16_t*>(row + weight_bytes);
    for (int g = 0; g < s.d_model / s.group; ++g) scales[g] = scale;
  }
}

const char* SparseFfnTarget(const FfnKernelShape& shape) {
  return SparseFfnVnniSupports(shape) ? "AVX512_VNNI" : SparseFfnPortableTarget();
}

namespace {

float Weight(const FfnKernelShape& s, const uint8_t* row, int i) {
  if (s.bits == 8) return static_cast<float>(reinterpret_cast<const int8_t*>(row)[i]);
  const uint8_t byte = row[i / 2];
  return static_cast<float>(((i % 2 == 0) ? (byte & 0xf) : (byte >> 4)) - 8);
}

float ScalarDot(const FfnKernelShape& s, const uint8_t* row, const float* x) {
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(row + int64_t{s.d_model} * s.bits / 8);
  float total = 0;
  for (int g = 0; g < s.d_model / s.group; ++g) {
    float acc = 0;
    for (int i = g * s.group; i < (g + 1) * s.group; ++i) acc += Weight(s, row, i) * x[i];
    total += acc * HalfToFloat(scales[g]);
  }
  return total;
}

}  // namespace

void DenseGemvScalar(const FfnKernelShape& s, const uint8_t* base, int64_t rows, const float* x,
                     float* y) {
  for (int64_t r = 0; r < rows; ++r) y[r] = ScalarDot(s, base + r * s.row_bytes(), x);
}

void SparseFfnScalar(const FfnKernelShape& s, const uint8_t* const* bundles, int count,
                     const float* x, float* out) {
  const int64_t row = s.row_bytes();
  for (int k = 0; k < count; ++k) {
    const uint8_t* b = bundles[k];
    float h;
    if (s.gated) {
      const float g = ScalarDot(s, b, x);
      if (g <= 0) continue;
      h = g * ScalarDot(s, b + row, x);
    } else {
      h = ScalarDot(s, b, x);
      if (h <= 0) continue;
    }
    const uint8_t* col = b + row * (s.gated ? 2 : 1);
    const uint16_t* scales =
        reinterpret_cast<const uint16_t*>(col + int64_t{s.d_model} * s.bits / 8);
    for (int i = 0; i < s.d_model; ++i) {
      out[i] += h * HalfToFloat(scales[i / s.group]) * Weight(s, col, i);
    }
  }
}

}  // namespace sparseflash
#endif  // HWY_ONCE
