// The model's trace generator run on a thread of its own (ReadAhead), a few
// tokens ahead of the reader, so generating the next tokens overlaps the
// reader's work on the current one (the engine's, or a trace writer's). Yields
// exactly the tokens a TraceGenerator with the same options yields, in order.
// Next() is called from one thread.
#pragma once

#include "traces/generator.h"
#include "traces/read_ahead.h"

namespace sparseflash {

class ReadAheadGenerator {
 public:
  // `ahead`: tokens the generator may run ahead of the reader (>= 1).
  ReadAheadGenerator(const ModelSpec& model, const GeneratorOptions& options, int ahead = 2);

  const TraceHeader& header() const { return generator_.header(); }
  // The next token, valid until the next call; nullptr after the last.
  const TokenActivations* Next();

 private:
  TraceGenerator generator_;
  ReadAhead ahead_;  // after generator_: its thread stops before the generator goes
};

}  // namespace sparseflash
