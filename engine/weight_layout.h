// How one FFN neuron's bytes sit on flash and which reads fetch them:
//  - "bundle": gate row i + up row i + down column i (or up + down for ReLU
//    up/down FFNs) contiguous, padded to the alignment, fetched by one read of
//    whole pages;
//  - "split-bundle": the padded bundle read as two 4 KB halves, the second only
//    when the gate output is non-zero (PowerInfer-2's INT4 layout);
//  - "matrix": each matrix stored separately, one page-aligned read per row.
// Pure arithmetic on ModelBytes; value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model_bytes.h"
#include "traces/model_spec.h"

namespace sparseflash {

enum class LayoutKind { kBundle, kSplitBundle, kMatrix };

absl::StatusOr<LayoutKind> ParseLayout(const std::string& name);
const char* LayoutName(LayoutKind kind);

// The reads of one missing neuron: `first` always (the gate part, or all of it),
// `second` only after a non-zero gate output when `second_conditional`.
struct NeuronReads {
  int64_t first_bytes = 0;  // bytes per request
  int first_reads = 0;
  int64_t second_bytes = 0;
  int second_reads = 0;
  bool second_conditional = false;

  int64_t total_bytes() const { return first_bytes * first_reads + second_bytes * second_reads; }
};

// The layout's reads for `model` (with `bytes` = ComputeModelBytes(model)).
// "split-bundle" needs a bundle padded to exactly two pages.
absl::StatusOr<NeuronReads> PlanNeuronReads(const ModelSpec& model, const ModelBytes& bytes,
                                            LayoutKind layout, int64_t page_bytes = 4096);

}  // namespace sparseflash
