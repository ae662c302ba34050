#include "engine/token_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/access_profile.h"
#include "engine/sparse_ffn.h"
#include "traces/generator.h"
#include "traces/read_ahead.h"
#include "traces/read_ahead_generator.h"
#include "traces/trace_reader.h"

namespace sparseflash {
namespace {

class TraceFileSource : public TokenSource {
 public:
  explicit TraceFileSource(std::unique_ptr<TraceReader> reader) : reader_(std::move(reader)) {}
  const TraceHeader& header() const override { return reader_->header(); }
  absl::StatusOr<const TokenActivations*> Next() override {
    absl::StatusOr<bool> more = reader_->Next(&token_);
    if (!more.ok()) return more.status();
    return *more ? &token_ : nullptr;
  }

 private:
  std::unique_ptr<TraceReader> reader_;
  TokenActivations token_;
};

// Fills each set's bits from its ids where it has none (a trace reader's sets
// never have them; the generator's do).
void AttachAllBits(TokenActivations* token) {
  for (LayerActivations& layer : token->layers) {
    for (NeuronSet& set : layer.experts) {
      if (!set.bits.present) AttachBits(&set);
    }
  }
}

class ReadAheadFileSource : public TokenSource {
 public:
  explicit ReadAheadFileSource(std::unique_ptr<TraceReader> reader)
      : reader_(std::move(reader)), ahead_([this](TokenActivations* token) -> absl::StatusOr<bool> {
          absl::StatusOr<bool> more = reader_->Next(token);
          // The reader leaves every set without bits: made here, for the planner.
          if (more.ok() && *more) AttachAllBits(token);
          return more;
        }) {}
  const TraceHeader& header() const override { return reader_->header(); }
  absl::StatusOr<const TokenActivations*> Next() override { return ahead_.Next(); }

 private:
  std::unique_ptr<TraceReader> reader_;
  ReadAhead ahead_;  // after reader_: its thread stops before the reader goes
};

class GeneratorSource : public TokenSource {
 public:
  GeneratorSource(const ModelSpec& model, const GeneratorOptions& options)
      : generator_(model, options) {}
  const TraceHeader& header() const override { return generator_.header(); }
  absl::StatusOr<const TokenActivations*> Next() override { return generator_.Next(); }

 private:
  ReadAheadGenerator generator_;
};

class MemorySource : public TokenSource {
 public:
  MemorySource(std::shared_ptr<const TokenTrace> trace, uint64_t tokens)
      : trace_(std::move(trace)), left_(std::min<uint64_t>(tokens, trace_->tokens.size())) {}
  const TraceHeader& header() const override { return trace_->header; }
  absl::StatusOr<const TokenActivations*> Next() override {
    if (next_ >= left_) return nullptr;
    return &trace_->tokens[next_++];
  }

 private:
  std::shared_ptr<const TokenTrace> trace_;
  uint64_t left_, next_ = 0;
};

class StepSource : public TokenSource {
 public:
  explicit StepSource(int steps) : left_(steps) {}
  const TraceHeader& header() const override { return header_; }
  absl::StatusOr<const TokenActivations*> Next() override {
    return left_-- > 0 ? &empty_ : nullptr;
  }

 private:
  TraceHeader header_;
  TokenActivations empty_;
  int left_;
};

}  // namespace

std::unique_ptr<TokenSource> MakeStepSource(int steps) {
  return std::make_unique<StepSource>(steps);
}

absl::StatusOr<std::unique_ptr<TokenSource>> OpenTraceSource(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<TokenSource>(new TraceFileSource(*std::move(reader)));
}

absl::StatusOr<std::unique_ptr<TokenSource>> OpenTraceSourceReadAhead(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<TokenSource>(new ReadAheadFileSource(*std::move(reader)));
}

std::unique_ptr<TokenSource> MakeGeneratorSource(const ModelSpec& model, uint64_t seed,
                                                 uint64_t tokens, int threads, int setup_threads) {
  GeneratorOptions options{
      .seed = seed, .tokens = tokens, .threads = threads, .setup_threads = setup_threads};
  return std::make_unique<GeneratorSource>(model, options);
}

namespace {

// Adds a decoded token to `trace`; false when the trace has grown past `max_bytes`.
bool Keep(TokenActivations&& token, int64_t max_bytes, TokenTrace* trace) {
  trace->bytes += TokenBytes(token);
  trace->tokens.push_back(std::move(token));
  return trace->bytes <= max_bytes;
}

absl::Status TooLarge(const std::string& what, const TokenTrace& trace, int64_t max_bytes) {
  return absl::ResourceExhaustedError(absl::StrCat(what, ": its ", trace.tokens.size(),
                                                   " first tokens take ", trace.bytes,
                                                   " bytes of memory, more than ", max_bytes));
}

}  // namespace

int64_t TokenBytes(const TokenActivations& token) {
  auto size = [](const auto& v) { return static_cast<int64_t>(v.capacity() * sizeof(v[0])); };
  int64_t bytes = size(token.layers);
  for (const LayerActivations& layer : token.layers) {
    bytes += size(layer.experts);
    for (const NeuronSet& set : layer.experts) {
      bytes += size(set.active) + size(set.predicted) + size(set.gate_only) +
               size(set.bits.active) + size(set.bits.predicted) + size(set.bits.gate_only);
    }
  }
  return bytes;
}

absl::StatusOr<std::shared_ptr<const TokenTrace>> GenerateTokenTrace(const ModelSpec& model,
                                                                     uint64_t seed, uint64_t tokens,
                                                                     int64_t max_bytes) {
  auto trace = std::make_shared<TokenTrace>();
  trace->seed = seed;
  TraceGenerator generator(model, {.seed = seed, .tokens = tokens});
  trace->header = generator.header();
  trace->tokens.reserve(tokens);
  for (TokenActivations token; generator.Next(&token); token = {}) {
    // Its runs plan from bitsets of the sets (the generator's), made once, not per run.
    AttachAllBits(&token);
    if (!Keep(std::move(token), max_bytes, trace.get())) {
      return TooLarge(absl::StrCat("the generated trace of ", model.name), *trace, max_bytes);
    }
  }
  return std::shared_ptr<const TokenTrace>(std::move(trace));
}

absl::StatusOr<std::shared_ptr<const TokenTrace>> ReadTokenTrace(const std::string& path,
                                                                 uint64_t tokens,
                                                                 int64_t max_bytes) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  auto trace = std::make_shared<TokenTrace>();
  trace->header = (*reader)->header();
  for (TokenActivations token; trace->tokens.size() < tokens; token = {}) {
    absl::StatusOr<bool> more = (*reader)->Next(&token);
    if (!more.ok()) return more.status();
    if (!*more) break;
    AttachAllBits(&token);
    if (!Keep(std::move(token), max_bytes, trace.get())) return TooLarge(path, *trace, max_bytes);
  }
  return std::shared_ptr<const TokenTrace>(std::move(trace));
}

absl::StatusOr<std::shared_ptr<const TraceFuture>> TokenTrace::Future(const NeuronIndexer& indexer,
                                                                      AccessSet set,
                                                                      uint64_t count) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = futures_.find({set, count});
  if (it != futures_.end()) return it->second;
  // A source over this trace that does not own it (the caller does).
  MemorySource source(std::shared_ptr<const TokenTrace>(std::shared_ptr<void>(), this), count);
  absl::StatusOr<std::shared_ptr<const TraceFuture>> future =
      TraceFuture::Collect(source, indexer, set);
  if (future.ok()) futures_.emplace(std::make_pair(set, count), *future);
  return future;
}

std::shared_ptr<const ActivationProfile> TokenTrace::GeneratorProfile(
    const ModelSpec& model) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [spec, profile] : profiles_) {
    if (spec == model) return profile;
  }
  auto profile = std::make_shared<const ActivationProfile>(ActivationProfile::OfGenerator(model));
  profiles_.emplace_back(model, profile);
  return profile;
}

std::unique_ptr<TokenSource> MakeMemorySource(std::shared_ptr<const TokenTrace> trace,
                                              uint64_t tokens) {
  return std::make_unique<MemorySource>(std::move(trace), tokens);
}

}  // namespace sparseflash
