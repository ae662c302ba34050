// Streams an activation trace to a file: records are delta-encoded, grouped into
// zstd frames of about 256 KiB and written as they fill, so memory stays bounded
// whatever the trace length. The file appears under its name only after Finish()
// succeeds (it is written beside it and renamed), so an interrupted writer never
// leaves a half-written trace in place of a good one. Not thread-safe.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/atomic_file.h"
#include "traces/activation.h"
#include "traces/trace.pb.h"

struct ZSTD_CCtx_s;

namespace sparseflash {

struct TraceWriterOptions {
  // zstd compression level (1 fastest .. 19 smallest); on delta-coded ids 1 is
  // about as small as 3, with half the work.
  int zstd_level = 1;
  bool overwrite = true;  // replace an existing file at Finish()
  bool sync = true;       // fsync before the file is moved into place
};

class TraceWriter {
 public:
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(
      const std::string& path, const TraceHeader& header,
      const TraceWriterOptions& options = {});
  ~TraceWriter();  // an unfinished writer leaves nothing behind

  // Appends the next token; its `token` field must equal the number already written.
  absl::Status Append(const TokenActivations& token);
  // Flushes, records the token count in the header and moves the file into place.
  absl::Status Finish();

  uint64_t tokens_written() const { return tokens_; }
  // Bytes of the file so far (header and finished frames); -1 after Finish().
  int64_t bytes_written() const { return file_ ? std::ftell(file_->stream()) : -1; }

 private:
  TraceWriter(std::unique_ptr<AtomicFile> file, TraceHeader header, TraceWriterOptions options);
  absl::Status CheckLayers(const TokenActivations& token) const;
  absl::Status FlushFrame();
  absl::Status WriteHeader();
  absl::Status IoError(const std::string& what) const;

  std::string path_;
  std::unique_ptr<AtomicFile> file_;
  TraceHeader header_;
  TraceWriterOptions options_;
  uint64_t tokens_ = 0;
  std::string raw_;         // records of the frame being filled
  std::string compressed_;  // scratch for the zstd output
  proto::TokenRecord record_;
  ZSTD_CCtx_s* cctx_;       // reused for every frame
};

}  // namespace sparseflash
