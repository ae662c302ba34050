// The real sparse FFN kernel: for a list of active neurons, each a bundle in
// DRAM (gate row, up row, down column, each as int4 or int8 weights followed by
// FP16 group scales), computes h = relu(gate . x) * (up . x) (relu(up . x) for
// up/down FFNs) and accumulates out += h * down. Written once with Google
// Highway and dispatched at run time to the best SIMD target (SSE4, AVX2,
// AVX-512, NEON, SVE); on x86-64 CPUs with AVX-512 VNNI a hand-written path
// (sparse_ffn_vnni.h) takes its place. A plain scalar version is the reference
// for tests.
#pragma once

#include <cstdint>

namespace sparseflash {

struct FfnKernelShape {
  int d_model = 0;
  int group = 32;     // weights per FP16 scale; a multiple of 16 (8 lanes x 2 nibbles)
  int bits = 4;       // 4 or 8
  bool gated = true;  // gate + up + down, or up + down

  int64_t row_bytes() const { return int64_t{d_model} * bits / 8 + int64_t{d_model} / group * 2; }
  int64_t bundle_bytes() const { return row_bytes() * (gated ? 3 : 2); }
};

// out[d_model] += sum over the `count` bundles of h(bundle) * down(bundle), on
// the fastest path this CPU has for `shape`.
void SparseFfn(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
               const float* x, float* out);
// The Highway path alone (x rounded to int16 per group), and the reference.
void SparseFfnPortable(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
                       const float* x, float* out);
void SparseFfnScalar(const FfnKernelShape& shape, const uint8_t* const* bundles, int count,
                     const float* x, float* out);

// y[r] = row r . x for the `rows` consecutive rows at `base`, each
// shape.row_bytes() long (weights, then FP16 group scales): a dense GEMV in
// matrix order, as attention, predictors, the head and dense FFN matrices are
// computed (every row read in turn, no activation test). Same paths as
// SparseFfn; the portable one and the reference alone below.
void DenseGemv(const FfnKernelShape& shape, const uint8_t* base, int64_t rows, const float* x,
               float* y);
void DenseGemvPortable(const FfnKernelShape& shape, const uint8_t* base, int64_t rows,
                       const float* x, float* y);
void DenseGemvScalar(const FfnKernelShape& shape, const uint8_t* base, int64_t rows, const float* x,
                     float* y);

// Name of the path SparseFfn takes for `shape`, and of the Highway target.
const char* SparseFfnTarget(const FfnKernelShape& shape);
const char* SparseFfnPortableTarget();

// Writes `bundles` bundles of `shape` at `base`, every byte of them: weights of
// +1 and scales of 0.01, so every gate is positive and the kernel does all of
// each bundle's work (synthetic weights for benchmarks, calibration and real
// runs).
void FillUnitBundles(const FfnKernelShape& shape, uint8_t* base, int64_t bundles);

// IEEE half to float.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

}  // namespace sparseflash
