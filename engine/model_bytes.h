// Byte accounting of a model under a quantization: the bytes of one FFN neuron
// bundle (on flash, with padding), of the whole FFN, and of everything the engine
// keeps resident (attention, embeddings, KV cache, predictors, scales, runtime).
// Pure arithmetic on the model shape; value type.
#pragma once

#include <cstdint>
#include <string>

#include "traces/model_spec.h"

namespace sparseflash {

struct ModelBytes {
  double ffn_bytes_per_weight = 0;  // including in-bundle scales
  int64_t matrix_row_bytes = 0;     // one neuron's row (or column) of one FFN matrix
  int64_t bundle_bytes = 0;         // one neuron, every FFN matrix, unpadded
  int64_t bundle_flash_bytes = 0;   // as laid out on flash, padded to the alignment
  // What a sparse engine keeps per cached neuron and computes per active one:
  // the bundle, less the gate row when the gate runs for every neuron
  // (gate_threshold: the gate rows are then the predictor, resident).
  int64_t sparse_neuron_bytes = 0;
  int64_t neurons = 0;                 // FFN neurons in the model (all layers, experts)
  int64_t ffn_bytes = 0;               // all FFN weights (+ in-bundle scales), unpadded
  int64_t ffn_flash_bytes = 0;         // FFN as laid out on flash
  int64_t ffn_scale_bytes = 0;         // FFN scales kept resident (scales_resident)
  int64_t attention_bytes = 0;         // q, k, v, o of every layer
  int64_t embedding_bytes = 0;         // token embeddings and LM head
  int64_t kv_bytes_per_token = 0;      // FP16 K and V of every layer
  int64_t predictor_bytes = 0;         // all activation predictors
  int64_t ffn_in_predictor_bytes = 0;  // FFN bytes the predictor is (gate_threshold: gate rows)
  int64_t runtime_bytes = 0;           // runtime buffers

  int64_t non_ffn_bytes() const { return attention_bytes + embedding_bytes; }
  // The input embedding table when it is not also the LM head (untied): an
  // engine may read its one row per token instead of keeping it.
  int64_t untied_input_embedding_bytes = 0;
  int64_t model_bytes() const { return non_ffn_bytes() + ffn_bytes + ffn_scale_bytes; }
  int64_t kv_bytes(int tokens) const { return kv_bytes_per_token * tokens; }
  // FFN bytes a sparse engine's neuron cache can hold: all but the predictor's.
  int64_t cacheable_ffn_bytes() const { return ffn_bytes - ffn_in_predictor_bytes; }
  // The predictor's bytes beyond the model's own weights.
  int64_t separate_predictor_bytes() const { return predictor_bytes - ffn_in_predictor_bytes; }
  // Always resident for a sparse offloading engine: non-FFN weights, KV cache for
  // `context` tokens, predictors, resident scales and runtime buffers.
  int64_t resident_bytes(int context) const {
    return non_ffn_bytes() + kv_bytes(context) + predictor_bytes + ffn_scale_bytes + runtime_bytes;
  }
};

// Bytes per weight of a format, including FP16 group scales unless `no_scales`.
double BytesPerWeight(const Quantization& q, bool no_scales = false);

ModelBytes ComputeModelBytes(const ModelSpec& model);
ModelBytes ComputeModelBytes(const ModelSpec& model, const Quantization& quantization);

}  // namespace sparseflash
