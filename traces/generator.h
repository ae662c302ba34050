// Synthetic activation traces calibrated to published statistics: per-layer
// active ratio and hot-neuron skew, temporal reuse, co-activation, predictor
// errors, gate-only neurons and MoE routing (see reference/models.md section 5).
// Generates one token at a time so traces of any length stream to disk.
// Deterministic: the same model, profile and seed give the same tokens, for
// any number of threads (each layer's streams and router have seeds of their
// own, and a token's layers are stepped independently). Not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/worker_pool.h"
#include "traces/activation.h"
#include "traces/expert_router.h"
#include "traces/model_spec.h"
#include "traces/neuron_stream.h"

namespace sparseflash {

struct GeneratorOptions {
  uint64_t seed = 1;
  uint64_t tokens = 256;
  bool with_predicted = true;  // record predicted sets when the profile has a predictor
  int threads = 1;             // threads stepping a token's layers (the caller's among them)
  // Threads making the neuron streams (every neuron's thresholds, written once)
  // before the first token; 0: `threads`. More than `threads` when the reader
  // is busy setting itself up meanwhile and the stepping later must leave it a core.
  int setup_threads = 0;
};

class TraceGenerator {
 public:
  // `model.generator` is the profile; it must be valid for the model. The
  // neuron streams are made on the first Next(), so a generator handed to a
  // thread of its own (ReadAheadGenerator) makes them there, while its owner
  // goes on.
  TraceGenerator(const ModelSpec& model, const GeneratorOptions& options);
  ~TraceGenerator();

  const TraceHeader& header() const { return header_; }
  // Fills the next token; returns false once options.tokens have been produced.
  bool Next(TokenActivations* token);

 private:
  // A stream's parameters: its layer's propensities by rank, scattered by the
  // stream's identity seed.
  NeuronStreamParams StreamParams(const std::vector<double>& by_rank, uint64_t identity) const;
  void MakeStreams();
  void MakeLayerStreams(int layer);
  void StepLayer(int layer, LayerActivations* out);

  ModelSpec model_;
  GeneratorOptions options_;
  TraceHeader header_;
  uint64_t next_token_ = 0;
  Random token_regimes_;                                // draws each token steady or shifting
  bool shifting_ = false;                               // the current token's
  std::vector<std::unique_ptr<NeuronStream>> streams_;  // [layer * experts + expert]
  std::vector<std::unique_ptr<ExpertRouter>> routers_;  // per layer (MoE only)
  WorkerPool pool_;
};

// The seed of a model's fixed properties (which neurons and experts are hot).
uint64_t ModelIdentitySeed(const std::string& name);

// The tool a generated trace's provenance names.
inline constexpr char kGeneratorTool[] = "sparseflash trace gen";

// The provenance parameter of a generated trace that names its hot neurons.
inline constexpr char kHotNeuronsParameter[] = "hot_neurons";

// A fingerprint (16 hex digits) of what decides which neurons `model`'s
// generator makes hot, and how hot (ExpectedActivity): the model's name and
// shape, the per-layer active ratios and skew, the experts' popularity. The
// token-to-token dynamics (persistence, co-activation, reuse swing, predictor)
// do not enter it. Built from the parsed numbers, not from computed floats, so
// it is the same on every machine.
std::string HotNeuronFingerprint(const ModelSpec& model);

// True when `header` is of a trace this generator made for `model` with the
// model's own hot neurons (the fingerprint in its provenance, where it has
// one: traces written before it was recorded are taken by their model name):
// only then does the model's generator profile know which of the trace's
// neurons are hot.
bool GeneratedFor(const TraceHeader& header, const ModelSpec& model);

// Each neuron's long-run activation probability per token under `model`'s
// generator profile, indexed (layer * experts + expert) * d_ffn + neuron: what
// an offline profile over very many tokens converges to. Needs no generator,
// so it costs a fraction of one.
std::vector<float> ExpectedActivity(const ModelSpec& model);

// The trace shape a model implies.
TraceModelShape ShapeOf(const ModelSpec& model);

}  // namespace sparseflash

namespace sparseflash {

// Generates `options.tokens` tokens of `model` into the trace file `path`,
// calling `progress(tokens_done)` now and then.
absl::Status WriteGeneratedTrace(const ModelSpec& model, const GeneratorOptions& options,
                                 const std::string& path,
                                 const std::function<void(uint64_t)>& progress = {},
                                 bool overwrite = true);

}  // namespace sparseflash
