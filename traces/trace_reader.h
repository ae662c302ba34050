// Streams an activation trace file token by token. Memory is bounded by one
// frame (at most 64 MiB, typically 256 KiB), whatever the file size. Every
// record is validated against the header's model shape; a damaged file gives an
// error naming the file, the token, the layer and what was wrong. Not thread-safe.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "traces/activation.h"
#include "traces/trace.pb.h"

struct ZSTD_DCtx_s;

namespace sparseflash {

class TraceReader {
 public:
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);
  // Reads from an open stream (taking ownership; e.g. fmemopen for tests and
  // fuzzing); `name` stands for the file in errors.
  static absl::StatusOr<std::unique_ptr<TraceReader>> FromStream(FILE* file, std::string name);
  ~TraceReader();

  const TraceHeader& header() const { return header_; }
  const std::string& path() const { return path_; }

  // Reads the next token into `token` (its vectors are reused; its sets carry
  // no bitsets: `bits.present` is false). Returns false at the end of a
  // complete trace, an error for a damaged one.
  absl::StatusOr<bool> Next(TokenActivations* token);

 private:
  TraceReader(std::string path, FILE* file);
  absl::Status ReadHeader();
  absl::StatusOr<bool> LoadFrame();
  absl::Status Decode(TokenActivations* token);
  absl::Status DecodeIds(const google::protobuf::RepeatedField<uint32_t>& deltas, uint32_t layer,
                         const char* what, std::vector<uint32_t>* out);
  absl::Status Error(const std::string& what) const;
  absl::Status LayerError(uint32_t layer, const std::string& what) const;

  std::string path_;
  FILE* file_;
  TraceHeader header_;
  uint64_t tokens_read_ = 0;
  int frames_read_ = 0;
  std::string compressed_;
  std::string raw_;
  size_t raw_pos_ = 0;
  proto::TokenRecord record_;
  ZSTD_DCtx_s* dctx_ = nullptr;
};

// Reads a whole trace, calling `fn(token)` for each; stops at the first error.
template <typename Fn>
absl::Status ForEachToken(TraceReader& reader, Fn&& fn) {
  TokenActivations token;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&token);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    fn(token);
  }
}

}  // namespace sparseflash
