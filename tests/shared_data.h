// Location of the shared real data (../shared/data beside the repository).
// Tests run from the repository root.
#pragma once

#include <string>

namespace sparseflash::testing {

inline std::string SharedData(const std::string& relative) {
  return "../shared/data/" + relative;
}

}  // namespace sparseflash::testing
