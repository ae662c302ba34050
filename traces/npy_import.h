// Import of dense activation arrays saved by NumPy: one .npy file per layer,
// each a C-order 2-D array of shape (tokens, neurons). Boolean and integer arrays
// (bool, int8/16/32/64, uint8/16/32/64) are masks: non-zero = active. Float arrays
// (float16/32/64) hold activation values and need a threshold: a neuron is active
// when |value| > threshold. Headers are validated before anything is allocated;
// rows are streamed, so memory is one row per layer.
#pragma once

#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "traces/activation.h"
#include "traces/trace_writer.h"

namespace sparseflash {

struct NpyImportOptions {
  double threshold = -1;  // for float arrays: active when |v| > threshold; < 0 = not given
  TraceWriterOptions writer;
};

// Reads one array from `in` (named `origin` in errors): checks its header against
// `neurons` per row (and the threshold for floats), then calls `row` with each
// token's active ids. The core of the import, for tests and fuzzing.
absl::Status ForEachNpyRow(std::istream& in, const std::string& origin, int64_t neurons,
                           double threshold,
                           const std::function<void(const std::vector<uint32_t>&)>& row);

// Imports the per-layer files into `out_path`; returns the tokens imported.
absl::StatusOr<uint64_t> ImportNpyMasks(const std::vector<std::string>& layer_files,
                                        const TraceModelShape& shape,
                                        const TraceProvenance& provenance,
                                        const std::string& out_path,
                                        const NpyImportOptions& options = {});

}  // namespace sparseflash
