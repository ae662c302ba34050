// In-memory record types of an activation trace: the header and one token's
// active neuron ids per layer (and per expert for MoE). Plain value types used by
// readers, writers, generators, statistics and the engine. Ids are sorted,
// unique and < d_ffn.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sparseflash {

struct TraceModelShape {
  std::string name;
  int layers = 0;
  int d_ffn = 0;  // neurons per layer, per expert for MoE
  int experts = 1;
  int top_k = 1;
  bool gated = false;

  bool operator==(const TraceModelShape&) const = default;
};

struct TraceProvenance {
  std::string recorded_from;
  std::string inputs;
  std::string generator;
  std::map<std::string, std::string> parameters;
  uint64_t seed = 0;
  std::string tool;
};

struct TraceHeader {
  TraceModelShape model;
  TraceProvenance provenance;
  uint64_t tokens = 0;
  bool has_predicted = false;
  bool has_gate_only = false;
};

// The same sets as bitsets (bit i of word i / 64 for id i), kept beside the
// ids by sources that hold a trace in memory for many runs; empty unless
// `present`.
struct NeuronBits {
  bool present = false;
  std::vector<uint64_t> active, predicted, gate_only;
};

// One expert's (or a dense layer's) neuron sets for one token.
struct NeuronSet {
  uint32_t expert = 0;
  std::vector<uint32_t> active;     // output non-zero
  std::vector<uint32_t> predicted;  // marked by the predictor (if recorded)
  std::vector<uint32_t> gate_only;  // gate non-zero, up/down output zero (gated FFN)
  NeuronBits bits;
};

struct LayerActivations {
  uint32_t layer = 0;
  std::vector<NeuronSet> experts;  // exactly one (expert 0) for dense models
};

struct TokenActivations {
  uint64_t token = 0;
  std::vector<LayerActivations> layers;
};

}  // namespace sparseflash
