#include "traces/read_ahead_generator.h"

namespace sparseflash {

ReadAheadGenerator::ReadAheadGenerator(const ModelSpec& model, const GeneratorOptions& options,
                                       int ahead)
    : generator_(model, options),
      ahead_(
          [this](TokenActivations* token) -> absl::StatusOr<bool> {
            return generator_.Next(token);
          },
          ahead) {}

const TokenActivations* ReadAheadGenerator::Next() {
  // The generator has no error to report.
  return *ahead_.Next();
}

}  // namespace sparseflash
