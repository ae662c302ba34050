// A stable 64-bit content hash for keys that must not change between builds or
// machines: model identity seeds, run-configuration keys, file hashes. It is
// FNV-1a's multiply-xor with a non-standard offset basis (1469598103934665603,
// not FNV's 14695981039346656037): generated traces and stored database keys
// depend on this exact value, so it stays. Streamable: pass the previous result
// as `state` to continue.
#pragma once

#include <cstdint>
#include <string_view>

namespace sparseflash {

constexpr uint64_t kStableHashSeed = 1469598103934665603ull;

inline uint64_t StableHash64(std::string_view data, uint64_t state = kStableHashSeed) {
  for (unsigned char c : data) state = (state ^ c) * 1099511628211ull;
  return state;
}

}  // namespace sparseflash
