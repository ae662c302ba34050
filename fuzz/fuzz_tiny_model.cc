// libFuzzer harness: the TinyStories model loader (header, shape checks and
// every tensor's bounds), then the path `generate` takes with what it accepts:
// the flash layout written bundle by bundle, the strategy's arena and staging
// buffers, and two decode steps through the engine with reads served from
// memory. The input is tried as a whole file and, so that shapes larger than
// the fuzzer's inputs are reached, as a header whose tensors are filled by
// repeating the rest of the input.
#include <cstring>
#include <deque>
#include <functional>
#include <string>

#include "engine/engine.h"
#include "engine/tiny/tiny_model.h"
#include "engine/tiny/tiny_strategy.h"

namespace sparseflash {
namespace {

constexpr int64_t kMaxExpandedBytes = int64_t{4} << 20;
constexpr int64_t kMaxFlashBytes = int64_t{64} << 20;

// Completions are queued and delivered by the loop, never from inside Submit.
class MemoryWorld : public FlashDevice, public ComputeBackend, public Clock {
 public:
  explicit MemoryWorld(std::string flash) : flash_(std::move(flash)) {}
  void SetSink(CompletionSink* sink) override { sink_ = sink; }
  void Submit(const FlashRead& read) override {
    bool ok = read.target != nullptr;
    for (int i = 0; ok && i < read.count; ++i) {
      const int64_t at = read.target->offsets[i];
      ok = at >= 0 && at + read.request_bytes <= static_cast<int64_t>(flash_.size());
      if (ok) {
        std::memcpy(read.target->buffer + i * read.request_bytes, flash_.data() + at,
                    read.request_bytes);
      }
    }
    bytes_ += read.request_bytes * read.count;
    done_.push_back([this, tag = read.tag, ok] { sink_->OnReadDone(tag, ok); });
  }
  void Submit(const ComputeTask& task) override {
    if (task.work) (*task.work)();
    done_.push_back([this, tag = task.tag] { sink_->OnComputeDone(tag); });
  }
  int64_t bytes_read() const override { return bytes_; }
  Nanos busy_time() const override { return Nanos(); }
  int cpu_workers() const override { return 1; }
  bool has_npu() const override { return false; }
  Nanos Now() const override { return Nanos(); }

  void Run(Engine& engine) {
    engine.Start();
    while (!engine.finished() && !done_.empty()) {
      std::function<void()> next = std::move(done_.front());
      done_.pop_front();
      next();
    }
  }

 private:
  std::string flash_;
  CompletionSink* sink_ = nullptr;
  std::deque<std::function<void()>> done_;
  int64_t bytes_ = 0;
};

void RunTwoSteps(const TinyModel& model) {
  const TinyConfig& c = model.config();
  const int64_t flash_bytes = int64_t{c.layers} * c.hidden * model.bundle_stride();
  if (flash_bytes > kMaxFlashBytes) return;
  std::string flash(flash_bytes, '\0');
  for (int l = 0; l < c.layers; ++l) {
    for (int n = 0; n < c.hidden; ++n) {
      model.WriteBundle(
          l, n,
          reinterpret_cast<uint8_t*>(flash.data()) + (int64_t{l} * c.hidden + n) * model.bundle_stride());
    }
  }
  auto strategy = TinyStrategy::Create(model, {1, 3 % c.vocab},
                                       {.strategy = "powerinfer2", .ffn_resident = 0.5});
  if (!strategy.ok()) return;
  MemoryWorld world(std::move(flash));
  std::unique_ptr<TokenSource> steps = MakeStepSource(2);
  Engine engine(Env{&world, &world, &world}, strategy->get(), steps.get(),
                EngineOptions{.max_tokens = 2});
  world.Run(engine);
}

// The input's header with its tensors filled from the rest of the input.
std::string Expanded(const std::string& input) {
  if (input.size() < TinyModel::kHeaderBytes) return "";
  TinyConfig c;
  int32_t shape[7], group;
  std::memcpy(shape, input.data() + 8, 28);
  std::memcpy(&group, input.data() + 37, 4);
  for (int v : shape) {
    if (v <= 0 || v > (1 << 20)) return "";
  }
  if (group <= 0 || shape[0] % group != 0 || shape[1] % group != 0) return "";
  c = {shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6], true, group};
  const int64_t bytes = TinyModel::ExpectedFileBytes(c);
  if (bytes > kMaxExpandedBytes || bytes <= static_cast<int64_t>(input.size())) return "";
  std::string out = input;
  const size_t tail = input.size() - TinyModel::kHeaderBytes;
  out.resize(bytes, '\0');
  for (int64_t i = input.size(); tail > 0 && i < bytes; ++i) {
    // Small values, so the float scales and norms stay finite.
    out[i] = static_cast<char>(input[TinyModel::kHeaderBytes + (i % tail)] & 0x3f);
  }
  return out;
}

void Try(const std::string& bytes) {
  absl::StatusOr<TinyModel> model = TinyModel::Parse(bytes, "fuzz.bin");
  if (model.ok()) RunTwoSteps(*model);
}

}  // namespace
}  // namespace sparseflash

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  sparseflash::Try(bytes);
  if (std::string expanded = sparseflash::Expanded(bytes); !expanded.empty()) {
    sparseflash::Try(expanded);
  }
  return 0;
}
