// The real TinyStories ReLU-260K model (llama2.c "version 2" int8 export): the
// file loader with validation, and its forward pass split into the pieces the
// engine schedules: attention of a layer, the FFN gate (kept resident as the
// exact predictor), and the up/down part computed from per-neuron bundles that
// may come from DRAM or flash. The dense forward pass is the same pieces over
// every neuron, so the sparse, offloaded engine computes exactly the same numbers.
// Not thread-safe; one TinyForward per sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseflash {

// O_DIRECT's alignment of the model's flash file.
inline constexpr int64_t kTinyFlashAlignment = 4096;

struct TinyConfig {
  int dim = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, vocab = 0, seq_len = 0;
  bool shared_classifier = true;
  int group = 0;
};

// An int8 tensor with one float scale per `group` consecutive values.
struct QTensor {
  int rows = 0, cols = 0;
  std::vector<int8_t> q;
  std::vector<float> s;
};

class TinyModel {
 public:
  // Reads and checks a model file (magic, version, shape, exact size); errors
  // name the file and the field.
  static absl::StatusOr<TinyModel> Load(const std::string& path);
  // The same from the file's bytes; `origin` names it in errors.
  static absl::StatusOr<TinyModel> Parse(const std::string& data, const std::string& origin);

  // The size of the file a header describes (header, norms, every tensor),
  // for a shape that passed the header's checks (each value at most 2^20).
  static int64_t ExpectedFileBytes(const TinyConfig& config);
  static constexpr int kHeaderBytes = 256;

  const TinyConfig& config() const { return c_; }
  int64_t file_bytes() const { return file_bytes_; }
  // The flash bundle of FFN neuron `i` of `layer`: up row i (W3) with its
  // dim / group scales, then down column i (W2) with a scale per value;
  // bundle_bytes() long. Every size follows from the header the file matched.
  void WriteBundle(int layer, int neuron, uint8_t* out) const;
  int64_t up_bytes() const;  // the up row and its scales, where the down column starts
  int64_t bundle_bytes() const;
  // A bundle's place on flash: bundle_bytes() padded to kTinyFlashAlignment,
  // so O_DIRECT reads of whole bundles land aligned.
  int64_t bundle_stride() const;

  // Weights, public for the forward pass.
  std::vector<float> att_norm, ffn_norm, final_norm;  // layers x dim, layers x dim, dim
  QTensor embedding;
  std::vector<QTensor> wq, wk, wv, wo, w1, w2, w3;

 private:
  TinyConfig c_;
  int64_t file_bytes_ = 0;
};

// Activations quantized per group of `group` values (the model's scheme).
struct QVector {
  std::vector<int8_t> q;
  std::vector<float> s;
};
QVector Quantize(const std::vector<float>& v, int group);

// One sequence's forward pass state.
class TinyForward {
 public:
  explicit TinyForward(const TinyModel& model);

  // Starts position `pos` with `token`: x = its embedding row.
  void Begin(int token, int pos);
  // Attention of `layer` (x += Wo attention), then the FFN input and the gate
  // g = W1 f of every neuron. Returns the neurons whose gate passes (g > 0.25):
  // the ones whose up/down bundle is needed.
  std::vector<uint32_t> AttentionAndGate(int layer);
  // Finishes the FFN of `layer` from the bundles of `neurons` (those returned by
  // AttentionAndGate, bundles[k] for neurons[k]); returns the active neurons
  // (h != 0).
  std::vector<uint32_t> FinishFfn(int layer, const std::vector<uint32_t>& neurons,
                                  const std::vector<const uint8_t*>& bundles);
  // Final norm and classifier; the logits of the position.
  std::vector<float> Logits();

  // Dense reference step: every piece, every bundle from the model in memory.
  // Returns the logits; `active` (if not null) gets each layer's active set.
  std::vector<float> DenseStep(int token, int pos, std::vector<std::vector<uint32_t>>* active);

 private:
  const TinyModel& m_;
  std::vector<float> x_, g_;
  QVector f_;
  int pos_ = 0;
  std::vector<int8_t> key_cache_, value_cache_;  // layers x seq_len x kv_dim
};

int ArgMax(const std::vector<float>& v);

}  // namespace sparseflash
