// Location of the real data the repository ships (data/, each folder with its own
// README and checksums). Tests run from the repository root.
#pragma once

#include <string>

namespace sparseflash::testing {

inline std::string RepoData(const std::string& relative) { return "data/" + relative; }

}  // namespace sparseflash::testing
