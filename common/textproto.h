// Parsing of protobuf text format at the edge of the program, with errors that
// name the file, line and column. Thread-safe (no shared state).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace sparseflash {

// Parses `text` (from `source_name`, used in errors) into `message`.
absl::Status ParseTextProto(std::string_view text, std::string_view source_name,
                            google::protobuf::Message* message);

}  // namespace sparseflash
