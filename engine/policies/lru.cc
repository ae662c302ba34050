#include "engine/policies/lru.h"

#include <algorithm>

#include "engine/policies/policies.h"

namespace sparseflash {

std::unique_ptr<EvictionPolicy> MakeLru(const PolicyOptions& o) {
  return std::make_unique<LruPolicy>(o.key_space,
                                     static_cast<size_t>(std::max<int64_t>(0, o.capacity_entries)));
}

}  // namespace sparseflash
