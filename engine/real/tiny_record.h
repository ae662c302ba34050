// Writes the activations of a real TinyStories run as a trace (one token per
// position, each layer's active neurons), so real activation data can feed the
// simulator and be checked against the generator.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "engine/real/tiny_generate.h"

namespace sparseflash {

absl::Status WriteTinyTrace(const TinyModel& model, const TinyGenerateResult& run,
                            const std::string& prompt, const std::string& path, bool overwrite);

}  // namespace sparseflash
