// SF_CHECK(condition): aborts with the condition, file and line when a
// programmer error is found, in every build type (unlike assert). For errors of
// the outside world (files, profiles, traces) return an absl::Status instead.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace sparseflash::internal {

[[noreturn]] inline void CheckFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, condition);
  std::abort();
}

}  // namespace sparseflash::internal

#define SF_CHECK(condition)                                                  \
  do {                                                                       \
    if (!(condition)) {                                                      \
      ::sparseflash::internal::CheckFailed(#condition, __FILE__, __LINE__); \
    }                                                                        \
  } while (false)
