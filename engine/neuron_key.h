// Maps (layer, expert, neuron) to the dense cache key used by NeuronCache and
// its policies, and back. Value type.
//
// Slot(key), the key's (layer, expert) pair as one index, divides by a
// multiplication (Lemire, Kaser and Kurz, "Faster remainder by direct
// computation", 2019: floor(n / d) = high 64 bits of n x (floor((2^64 - 1) / d) + 1)
// for every 32-bit n and d > 1), for loops that group many keys by slot.
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
      : layers_(layers),
        experts_(experts),
        d_ffn_(d_ffn),
        slot_magic_(d_ffn > 1 ? ~uint64_t{0} / d_ffn + 1 : 0) {}

  uint32_t key_space() const { return layers_ * experts_ * d_ffn_; }
  uint32_t Key(uint32_t layer, uint32_t expert, uint32_t neuron) const {
    return (layer * experts_ + expert) * d_ffn_ + neuron;
  }
  // layer x experts + expert: key / d_ffn.
  uint32_t Slot(uint32_t key) const {
    if (d_ffn_ <= 1) return key;
    return static_cast<uint32_t>((static_cast<unsigned __int128>(slot_magic_) * key) >> 64);
  }
  NeuronId Id(uint32_t key) const {
    return {key / (experts_ * d_ffn_), (key / d_ffn_) % experts_, key % d_ffn_};
  }

 private:
  uint32_t layers_, experts_, d_ffn_;
  uint64_t slot_magic_;  // for Slot
};

}  // namespace sparseflash
