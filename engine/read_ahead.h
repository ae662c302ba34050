// The kernel's read-ahead windows of a mapped file as llamacpp plans them and
// `device calibrate` measures them: the device's read-ahead (doubled when the
// reader advises POSIX_FADV_SEQUENTIAL, as llama.cpp does), each window sent as
// requests of at most the device's largest request.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sparseflash {

struct ReadAheadShape {
  int64_t window_bytes = 0;
  int64_t request_bytes = 0;  // one request: the window, or the device's largest request
  int32_t requests_per_window = 1;
};

inline ReadAheadShape PlanReadAhead(int64_t read_ahead_kb, bool fadvise_sequential,
                                    int64_t max_request_kb) {
  ReadAheadShape s;
  s.window_bytes = read_ahead_kb * 1024 * (fadvise_sequential ? 2 : 1);
  s.request_bytes = std::min(s.window_bytes, max_request_kb * 1024);
  s.requests_per_window =
      static_cast<int32_t>((s.window_bytes + s.request_bytes - 1) / s.request_bytes);
  return s;
}

}  // namespace sparseflash
