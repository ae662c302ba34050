#include "engine/policies/lru.h"

#include "engine/policies/policies.h"

namespace sparseflash {

std::unique_ptr<EvictionPolicy> MakeLru(const PolicyOptions& o) {
  return std::make_unique<LruPolicy>(o.key_space);
}

}  // namespace sparseflash
