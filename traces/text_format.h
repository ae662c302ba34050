// Plain-text activation traces, the format of the real model's golden files:
//   A <token> <layer>[:<expert>] <id> <id> ...   active neurons
//   P <token> <layer>[:<expert>] <id> ...        predicted set (optional)
//   G <token> <layer>[:<expert>] <id> ...        gate-only neurons (optional)
//   T <token> <input> <next>                     token ids (ignored on import)
//   # comment
// Lines of one token are contiguous; tokens are 0, 1, 2, ... Import streams the
// text into a binary trace; export streams a binary trace out as text.
#pragma once

#include <functional>
#include <istream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "traces/activation.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace sparseflash {

// Parses text trace lines from `in` (named `origin` in errors) for a model of
// `shape`, calling `emit` with each complete token: every layer listed (a layer
// without lines is empty), ids sorted and unique. Stops at the first error.
using TokenSink = std::function<absl::Status(const TokenActivations&)>;
absl::Status ParseTextTrace(std::istream& in, const std::string& origin,
                            const TraceModelShape& shape, const TokenSink& emit);

// Converts text file `in_path` to binary trace `out_path` for a model of `shape`.
absl::Status ImportTextTrace(const std::string& in_path, const TraceModelShape& shape,
                             const TraceProvenance& provenance, const std::string& out_path,
                             const TraceWriterOptions& options = {});

// Writes every token of `reader` as text, one token's lines per call of `sink`;
// stops at the first error of the reader or the sink.
using TextSink = std::function<absl::Status(absl::string_view)>;
absl::Status ExportTextTrace(TraceReader& reader, const TextSink& sink);

}  // namespace sparseflash
