// Packs (layer, expert, neuron) into one 64-bit cache key. Value type.
#pragma once

#include <cstdint>

namespace sparseflash {

struct NeuronId {
  uint32_t layer = 0;
  uint32_t expert = 0;
  uint32_t neuron = 0;
};

// 16 bits of layer, 16 of expert, 32 of neuron.
constexpr uint64_t PackNeuron(uint32_t layer, uint32_t expert, uint32_t neuron) {
  return (uint64_t{layer} << 48) | (uint64_t{expert} << 32) | neuron;
}

constexpr NeuronId UnpackNeuron(uint64_t key) {
  return {static_cast<uint32_t>(key >> 48), static_cast<uint32_t>((key >> 32) & 0xffff),
          static_cast<uint32_t>(key & 0xffffffff)};
}

}  // namespace sparseflash
