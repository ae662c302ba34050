// A hand-written x86-64 path of the sparse FFN kernel for CPUs with AVX-512
// VNNI (Highway 1.0 has no op for `vpdpbusd`). The gate and up rows are
// integer dot products of the unsigned weight nibbles (or bytes, offset by 128)
// with x quantized to int8 per weight group, as llama.cpp's Q8 activations do;
// the down columns are accumulated in float, 16 lanes at a time. Same bundle
// layout and contract as SparseFfn (sparse_ffn_kernel.h), which picks this path
// when SparseFfnVnniSupports() holds.
#pragma once

#include "engine/real/sparse_ffn_kernel.h"

namespace sparseflash {

// True when this CPU has AVX-512 F/BW/VL/VNNI and `shape`'s rows split into
// whole 64-byte chunks whose weight groups tile them.
bool SparseFfnVnniSupports(const FfnKernelShape& shape);

// out[d_model] += sum over the bundles of h(bundle) * down(bundle), with x
// rounded to int8 per group. Requires SparseFfnVnniSupports(shape).
void SparseFfnVnni(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
                   const float* x, float* out);

// y[r] = row r . x for `rows` consecutive rows at `base`, with x rounded to
// int8 per group (DenseGemv's contract). Requires SparseFfnVnniSupports(shape).
void DenseGemvVnni(const FfnKernelShape& shape, const uint8_t* base, int64_t rows, const float* x,
                   float* y);

// The scalar reference with the same int8 rounding of x: what SparseFfnVnni
// computes, up to float summation order.
void SparseFfnScalarQ8(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
                       const float* x, float* out);

}  // namespace sparseflash
