// Maps (layer, expert, neuron) to the dense cache key used by NeuronCache and
// its policies, and back. Value type.
#pragma once

#include <cstdint>

namespace sparseflash {

struct NeuronId {
  uint32_t layer = 0;
  uint32_t expert = 0;
  uint32_t neuron = 0;
};

class NeuronIndexer {
 public:
  NeuronIndexer(uint32_t layers, uint32_t experts, uint32_t d_ffn)
      : layers_(layers), experts_(experts), d_ffn_(d_ffn) {}

  uint32_t key_space() const { return layers_ * experts_ * d_ffn_; }
  uint32_t Key(uint32_t layer, uint32_t expert, uint32_t neuron) const {
    return (layer * experts_ + expert) * d_ffn_ + neuron;
  }
  NeuronId Id(uint32_t key) const {
    return {key / (experts_ * d_ffn_), (key / d_ffn_) % experts_, key % d_ffn_};
  }

 private:
  uint32_t layers_, experts_, d_ffn_;
};

}  // namespace sparseflash
