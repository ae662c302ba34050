// A synthetic neuron request stream for comparing cache policies and cache
// simulators: per token, each layer requests a set of neurons, part of it drawn
// from the sets its previous tokens requested (reuse) and the rest by Zipf
// popularity over a per-layer permutation of the neurons; keys come layer by
// layer, ascending within a layer, as the simulator's caches see them.
// Deterministic for a seed on every platform (integer PRNG; for alpha = 1 the
// weights are plain divisions).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/request_stream.h"

namespace sparseflash {

struct SyntheticStreamOptions {
  uint32_t layers = 32;
  uint32_t neurons = 14336;    // per layer
  double active = 0.10;        // share of a layer's neurons each token requests
  double reuse = 0.70;         // share of a token's set drawn from the window's sets
  uint32_t window_tokens = 4;  // previous tokens the reuse draws from
  double zipf_alpha = 1.0;     // popularity of the other draws
  uint32_t tokens = 512;
  uint32_t object_bytes = 8192;
  uint64_t seed = 1;
};

// Errors name the option that is out of range.
absl::StatusOr<RequestStream> MakeSyntheticStream(const SyntheticStreamOptions& options);

}  // namespace sparseflash
