// Bounds on a model's shape that every file-borne shape (trace headers, model
// files) must respect, so a damaged or hostile input cannot drive allocations or
// overflow the 32-bit neuron keys (layer x expert x neuron) the engine uses.
// Far above any real model: 1,024 layers, 1,024 experts, 4 Mi neurons per expert,
// 64 Mi neurons in all (DeepSeek-V3 has 32 Mi: 61 layers x 256 experts x 2,048).
#pragma once

#include <cstdint>
#include <string>

namespace sparseflash {

inline constexpr int kMaxLayers = 1024;
inline constexpr int kMaxExperts = 1024;
inline constexpr int kMaxNeuronsPerExpert = 1 << 22;
inline constexpr int64_t kMaxNeuronKeys = int64_t{1} << 26;

// "" when the shape is within bounds, else what is wrong (in 64-bit arithmetic).
std::string ShapeLimitError(int64_t layers, int64_t d_ffn, int64_t experts, int64_t top_k);

}  // namespace sparseflash
