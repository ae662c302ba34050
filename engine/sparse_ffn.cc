#include "engine/sparse_ffn.h"

#include <algorithm>

namespace sparseflash {

void MarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits) {
  if (ids.empty()) return;
  const size_t size = (static_cast<size_t>(ids.back()) >> 6) + 1;  // ids are sorted
  if (bits->size() < size) bits->resize(size, 0);
  // A word's bits gather in a register: ids are sorted, so they come word by word.
  uint64_t* words = bits->data();
  size_t word = ids.front() >> 6;
  uint64_t gathered = 0;
  for (uint32_t id : ids) {
    if ((id >> 6) != word) {
      words[word] |= gathered;
      word = id >> 6;
      gathered = 0;
    }
    gathered |= uint64_t{1} << (id & 63);
  }
  words[word] |= gathered;
}

void UnmarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits) {
  if (ids.empty()) return;
  // Only these ids' bits are set, and they lie in the words from the first id's to the last's.
  std::fill(bits->begin() + (ids.front() >> 6), bits->begin() + (ids.back() >> 6) + 1, 0);
}

void AttachBits(NeuronSet* set) {
  NeuronBits& b = set->bits;
  b = NeuronBits{.present = true};
  MarkIds(set->active, &b.active);
  MarkIds(set->predicted, &b.predicted);
  MarkIds(set->gate_only, &b.gate_only);
}

}  // namespace sparseflash
