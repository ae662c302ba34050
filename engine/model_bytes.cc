#include "engine/model_bytes.h"

#include <cmath>

#include "common/units.h"

namespace sparseflash {

double BytesPerWeight(const Quantization& q, bool no_scales) {
  double scale = (no_scales || q.group_size <= 0) ? 0.0 : 2.0 / q.group_size;
  switch (q.kind) {
    case QuantKind::kFp32:
      return 4;
    case QuantKind::kFp16:
      return 2;
    case QuantKind::kInt8:
      return 1 + scale;
    case QuantKind::kInt4:
      return 0.5 + scale;
  }
  return 2;
}

ModelBytes ComputeModelBytes(const ModelSpec& model) {
  return ComputeModelBytes(model, model.quantization);
}

ModelBytes ComputeModelBytes(const ModelSpec& m, const Quantization& q) {
  ModelBytes b;
  const double all_in = BytesPerWeight(q);
  b.ffn_bytes_per_weight = BytesPerWeight(q, q.scales_resident);
  b.matrix_row_bytes = std::llround(m.d_model * b.ffn_bytes_per_weight);
  b.bundle_bytes = b.matrix_row_bytes * m.ffn_matrices();
  b.sparse_neuron_bytes = b.bundle_bytes - (m.gate_threshold ? b.matrix_row_bytes : 0);
  b.bundle_flash_bytes =
      q.bundle_align_bytes > 0 ? AlignUp(b.bundle_bytes, q.bundle_align_bytes) : b.bundle_bytes;
  b.neurons = int64_t{m.layers} * m.experts * m.d_ffn;
  b.ffn_bytes = b.neurons * b.bundle_bytes;
  b.ffn_flash_bytes = b.neurons * b.bundle_flash_bytes;
  if (q.scales_resident && q.group_size > 0) {
    b.ffn_scale_bytes =
        std::llround(double(b.neurons) * m.ffn_matrices() * m.d_model * 2.0 / q.group_size);
  }
  const int64_t q_dim = int64_t{m.heads} * m.head_dim;
  const int64_t kv_dim = int64_t{m.kv_heads} * m.head_dim;
  const int64_t attention_weights = m.layers * (2 * m.d_model * q_dim + 2 * m.d_model * kv_dim);
  const int64_t embedding_weights = int64_t{m.vocab} * m.d_model * (m.tied_embeddings ? 1 : 2);
  b.attention_bytes = std::llround(attention_weights * all_in);
  b.embedding_bytes = std::llround(embedding_weights * all_in);
  b.untied_input_embedding_bytes = m.tied_embeddings ? 0 : b.embedding_bytes / 2;
  b.kv_bytes_per_token = int64_t{m.layers} * 2 * kv_dim * 2;
  if (m.predictor_bytes > 0) {
    b.predictor_bytes = m.predictor_bytes;
  } else if (m.gate_threshold) {  // the gate's own rows tell which neurons are active
    b.ffn_in_predictor_bytes = b.neurons * b.matrix_row_bytes;
    b.predictor_bytes = b.ffn_in_predictor_bytes;
  } else {
    b.predictor_bytes =
        int64_t{m.predictor_rank} * (m.d_model + m.d_ffn) * 2 * m.layers * m.experts;
  }
  b.runtime_bytes = m.runtime_bytes;
  return b;
}

}  // namespace sparseflash
