#include "engine/sparse_ffn.h"

#include <algorithm>

namespace sparseflash {

void MarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits) {
  if (ids.empty()) return;
  const size_t size = (static_cast<size_t>(ids.back()) >> 6) + 1;  // ids are sorted
  if (bits->size() < size) bits->resize(size, 0);
  // A word's bits gather in a register and are stored after every id, without
  // a branch on where a word ends (ids are sorted, so they come word by word,
  // and a word's bits are clear before its first id).
  uint64_t* words = bits->data();
  uint32_t word = ids.front() >> 6;
  uint64_t gathered = 0;
  for (uint32_t id : ids) {
    const uint32_t w = id >> 6;
    const uint64_t same_word = uint64_t{0} - static_cast<uint64_t>(w == word);  // all ones or 0
    gathered = (gathered & same_word) | (uint64_t{1} << (id & 63));
    words[w] = gathered;
    word = w;
  }
}

void UnmarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits) {
  if (ids.empty()) return;
  // Only these ids' bits are set, and they lie in the words from the first id's to the last's.
  std::fill(bits->begin() + (ids.front() >> 6), bits->begin() + (ids.back() >> 6) + 1, 0);
}

void AttachBits(NeuronSet* set) {
  NeuronBits& b = set->bits;
  b.present = true;
  // Cleared, not replaced: a set refilled token after token keeps its room.
  for (std::vector<uint64_t>* bits : {&b.active, &b.predicted, &b.gate_only}) bits->clear();
  MarkIds(set->active, &b.active);
  MarkIds(set->predicted, &b.predicted);
  MarkIds(set->gate_only, &b.gate_only);
}

}  // namespace sparseflash
