// A weight file with the exact shape and flash layout of a catalog model, for
// real-mode replay: a 4 KiB header, then every FFN neuron (layer, expert,
// neuron order) at a fixed stride, then the non-FFN weights. Values are random;
// only the bytes' size and place matter for speed. Written streaming (never held
// in memory) through a temporary file renamed at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/model_bytes.h"
#include "engine/weight_layout.h"
#include "traces/model_spec.h"

namespace sparseflash {

struct WeightFileInfo {
  std::string model;
  std::string quantization;
  std::string layout;
  int64_t neurons = 0;
  int64_t neuron_stride = 0;   // bytes between consecutive neurons on flash
  int64_t ffn_offset = 0;      // first neuron
  int64_t non_ffn_offset = 0;  // attention, embeddings
  int64_t non_ffn_bytes = 0;
  int64_t file_bytes = 0;

  int64_t NeuronOffset(int64_t index) const { return ffn_offset + index * neuron_stride; }
};

// The layout of `model` in a weight file.
WeightFileInfo PlanWeightFile(const ModelSpec& model, LayoutKind layout);

// Writes the file; `progress(bytes_done, bytes_total)` now and then. Refuses an
// existing `path` unless `overwrite`.
absl::Status WriteWeightFile(const ModelSpec& model, LayoutKind layout, const std::string& path,
                             bool overwrite, const std::function<void(int64_t, int64_t)>& progress);

// Parses a weight file's header (its first 4 KiB) without checking it against a
// model: the fields, and sizes that are consistent with each other. `origin`
// names the file in errors.
absl::StatusOr<WeightFileInfo> ParseWeightFileHeader(absl::string_view bytes,
                                                     const std::string& origin);

// Reads a weight file's header (unchecked against any model); errors name the file.
absl::StatusOr<WeightFileInfo> ReadWeightFileInfo(const std::string& path);

// A weight file says what it is: checks that its header names `model`, and sets
// the model's quantization to the file's. `quant_flag` (a --quant value, or "")
// must agree with the file; errors name the file, both values and the fix.
absl::Status MatchModelToWeightFile(const std::string& path, const std::string& quant_flag,
                                    ModelSpec* model);

// Reads and checks a weight file's header against `model` and `layout`, and its
// size; errors name the file and the field.
absl::StatusOr<WeightFileInfo> ReadWeightFileHeader(const std::string& path,
                                                    const ModelSpec& model);

}  // namespace sparseflash
