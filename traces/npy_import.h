// Import of dense activation masks saved by NumPy: one .npy file per layer, each
// a C-order 2-D array of tokens x neurons (bool, uint8, int8 or float32; non-zero
// = active). Rows are streamed, so memory is one row per layer.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "traces/activation.h"

namespace sparseflash {

absl::Status ImportNpyMasks(const std::vector<std::string>& layer_files,
                            const TraceModelShape& shape, const TraceProvenance& provenance,
                            const std::string& out_path);

}  // namespace sparseflash
