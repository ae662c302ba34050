// Helpers for traces/ tests: temporary paths and tiny hand-made traces.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "traces/activation.h"
#include "traces/trace_writer.h"

namespace sparseflash::testing {

// A fresh path in the test temp directory (removed when the test binary ends).
inline std::string TempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "sparseflash_test";
  std::filesystem::create_directories(dir);
  return (dir / (std::to_string(::getpid()) + "_" + name)).string();
}

inline TraceHeader TinyHeader(int layers = 2, int d_ffn = 10) {
  TraceHeader h;
  h.model = {"toy", layers, d_ffn, 1, 1, false};
  return h;
}

// One dense token whose layer l has the ids `sets[l]`.
inline TokenActivations DenseToken(uint64_t t, const std::vector<std::vector<uint32_t>>& sets) {
  TokenActivations token;
  token.token = t;
  for (size_t l = 0; l < sets.size(); ++l) {
    token.layers.push_back({static_cast<uint32_t>(l), {{0, sets[l], {}, {}}}});
  }
  return token;
}

// Writes `tokens` to `path` with `header`; returns the status of Finish().
inline absl::Status WriteTrace(const std::string& path, TraceHeader header,
                               const std::vector<TokenActivations>& tokens) {
  auto writer = TraceWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  for (const auto& t : tokens) {
    if (auto s = (*writer)->Append(t); !s.ok()) return s;
  }
  return (*writer)->Finish();
}

// The whole contents of a file.
inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace sparseflash::testing
