// Compiled once per SIMD target (hwy/foreach_target.h re-includes this file).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/real/sparse_ffn_kernel.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#ifndef SPARSEFLASH_SPARSE_FFN_SHARED
#define SPARSEFLASH_SPARSE_FFN_SHARED
#include <cstring>
#include <vector>

#include "engine/real/sparse_ffn_kernel.h"

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

// At most 8 lanes: a group of 16 int4 weights is 8 bytes.
using FloatTag = hn::CappedTag<float, 8>;

// The int4 weights of `lanes` bytes as floats: the low nibbles (even elements)
// and the high nibbles (odd elements), each stored with an offset of 8.
struct Nibbles {
  hn::Vec<FloatTag> even, odd;
};
Nibbles LoadInt4(const uint8_t* bytes) {
  const FloatTag df;
  const hn::Rebind<int32_t, FloatTag> di;
  const hn::Rebind<uint8_t, FloatTag> du8;
  const auto b = hn::PromoteTo(di, hn::LoadU(du8, bytes));
  return {hn::ConvertTo(df, hn::Sub(hn::And(b, hn::Set(di, 0xf)), hn::Set(di, 8))),
          hn::ConvertTo(df, hn::Sub(hn::ShiftRight<4>(b), hn::Set(di, 8)))};
}

// Dot product of one matrix row with x: int4 rows against x split into even and
// odd elements, int8 rows against x itself.
float RowDot(const FfnKernelShape& s, const uint8_t* row, const float* x_even, const float* x_odd,
             const float* x) {
  const FloatTag df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<int8_t, decltype(df)> di8;
  const size_t lanes = hn::Lanes(df);
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(row + int64_t{s.d_model} * s.bits / 8);
  auto total = hn::Zero(df);
  for (int g = 0; g < s.d_model / s.group; ++g) {
    auto acc = hn::Zero(df);
    if (s.bits == 4) {
      const int half = s.group / 2;  // bytes (and even/odd pairs) per group
      for (int k = 0; k < half; k += static_cast<int>(lanes)) {
        const int byte = g * half + k;
        const Nibbles w = LoadInt4(row + byte);
        acc = hn::MulAdd(w.even, hn::LoadU(df, x_even + byte), acc);
        acc = hn::MulAdd(w.odd, hn::LoadU(df, x_odd + byte), acc);
      }
    } else {
      const int8_t* w = reinterpret_cast<const int8_t*>(row);
      for (int k = 0; k < s.group; k += static_cast<int>(lanes)) {
        const int i = g * s.group + k;
        const auto wf = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(di8, w + i)));
        acc = hn::MulAdd(wf, hn::LoadU(df, x + i), acc);
      }
    }
    total = hn::MulAdd(acc, hn::Set(df, HalfToFloat(scales[g])), total);
  }
  return hn::GetLane(hn::SumOfLanes(df, total));
}

// out (split like x) += h * column.
void Axpy(const FfnKernelShape& s, float h, const uint8_t* col, float* out_even, float* out_odd,
          float* out) {
  const FloatTag df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<int8_t, decltype(df)> di8;
  const size_t lanes = hn::Lanes(df);
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(col + int64_t{s.d_model} * s.bits / 8);
  for (int g = 0; g < s.d_model / s.group; ++g) {
    const auto hs = hn::Set(df, h * HalfToFloat(scales[g]));
    if (s.bits == 4) {
      const int half = s.group / 2;
      for (int k = 0; k < half; k += static_cast<int>(lanes)) {
        const int byte = g * half + k;
        const Nibbles w = LoadInt4(col + byte);
        hn::StoreU(hn::MulAdd(w.even, hs, hn::LoadU(df, out_even + byte)), df, out_even + byte);
        hn::StoreU(hn::MulAdd(w.odd, hs, hn::LoadU(df, out_odd + byte)), df, out_odd + byte);
      }
    } else {
      const int8_t* w = reinterpret_cast<const int8_t*>(col);
      for (int k = 0; k < s.group; k += static_cast<int>(lanes)) {
        const int i = g * s.group + k;
        const auto wf = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(di8, w + i)));
        hn::StoreU(hn::MulAdd(wf, hs, hn::LoadU(df, out + i)), df, out + i);
      }
    }
  }
}

void SparseFfnImpl(const FfnKernelShape& s, const uint8_t* const* bundles, int count,
                   const float* x, float* out) {
  const int n = s.d_model;
  std::vector<float> xe(n / 2), xo(n / 2), oe(n / 2, 0.0f), oo(n / 2, 0.0f), o(n, 0.0f);
  for (int i = 0; i < n / 2; ++i) {
    xe[i] = x[2 * i];
    xo[i] = x[2 * i + 1];
  }
  const int64_t row = s.row_bytes();
  for (int k = 0; k < count; ++k) {
    const uint8_t* b = bundles[k];
    float h;
    if (s.gated) {
      const float g = RowDot(s, b, xe.data(), xo.data(), x);
      if (g <= 0) continue;  // the up/down half is not needed
      h = g * RowDot(s, b + row, xe.data(), xo.data(), x);
    } else {
      h = RowDot(s, b, xe.data(), xo.data(), x);
      if (h <= 0) continue;
    }
    Axpy(s, h, b + row * (s.gated ? 2 : 1), oe.data(), oo.data(), o.data());
  }
  if (s.bits == 4) {
    for (int i = 0; i < n / 2; ++i) {
      out[2 * i] += oe[i];
      out[2 * i + 1] += oo[i];
    }
  } else {
    for (int i = 0; i < n; ++i) out[i] += o[i];
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

void SparseFfn(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
               const float* x, float* out) {
  HWY_DYNAMIC_DISPATCH(SparseFfnImpl)(shape, bundles, count, x, out);
}

const char* SparseFfnTarget() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

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
