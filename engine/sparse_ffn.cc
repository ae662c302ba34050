#include "engine/sparse_ffn.h"

namespace sparseflash {

void MarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits) {
  if (ids.empty()) return;
  const size_t words = (static_cast<size_t>(ids.back()) >> 6) + 1;  // ids are sorted
  if (bits->size() < words) bits->resize(words, 0);
  for (uint32_t id : ids) (*bits)[id >> 6] |= uint64_t{1} << (id & 63);
}

void UnmarkIds(const std::vector<uint32_t>& ids, std::vector<uint64_t>* bits) {
  for (uint32_t id : ids) (*bits)[id >> 6] = 0;
}

}  // namespace sparseflash
