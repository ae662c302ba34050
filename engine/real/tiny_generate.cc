#include "engine/real/tiny_generate.h"

#include "engine/real/real_env.h"

namespace sparseflash {

absl::StatusOr<TinyGenerateResult> GenerateTiny(const TinyModel& model, const Tokenizer& tokenizer,
                                                const TinyGenerateOptions& o) {
  const int positions =
      o.positions > 0 ? std::min(o.positions, model.config().seq_len) : model.config().seq_len;
  std::vector<int> prompt = tokenizer.Encode(o.prompt);
  if (static_cast<int>(prompt.size()) > positions) {
    return absl::InvalidArgumentError("the prompt is longer than the positions to run");
  }
  if (absl::Status s = WriteTinyFlashFile(model, o.flash_file); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<TinyStrategy>> strategy =
      TinyStrategy::Create(model, prompt, o.strategy);
  if (!strategy.ok()) return strategy.status();

  TinyGenerateResult result;
  CompletionQueue queue;
  absl::StatusOr<std::unique_ptr<FlashDevice>> flash =
      OpenFlashDevice({.path = o.flash_file, .queue_depth = o.strategy.io_depth, .io = o.io},
                      &queue, &result.notice);
  if (!flash.ok()) return flash.status();
  if (o.fail_nth_read > 0) {
    *flash = std::make_unique<FaultInjectingFlashDevice>(*std::move(flash), o.fail_nth_read);
  }
  RealClock clock;
  ThreadPoolCompute compute(1, &queue);
  std::unique_ptr<TokenSource> steps = MakeStepSource(positions);
  Engine engine(Env{&clock, flash->get(), &compute}, strategy->get(), steps.get(),
                EngineOptions{.max_tokens = static_cast<uint64_t>(positions)});
  const int64_t kernel_before = ProcessStorageReadBytes();
  if (absl::Status s = RunOnThisThread(engine, queue); !s.ok()) return s;
  const int64_t kernel_after = ProcessStorageReadBytes();
  result.kernel_read_bytes =
      kernel_before < 0 || kernel_after < 0 ? -1 : kernel_after - kernel_before;
  result.engine_read_bytes = (*flash)->bytes_read();
  result.output = (*strategy)->output();
  result.record = engine.record();
  result.memory = (*strategy)->memory();
  result.cache_neurons = (*strategy)->cache_capacity_neurons();
  result.cache_hits = (*strategy)->counters().hits;
  result.cache_accesses = (*strategy)->counters().accesses;
  const std::vector<int>& tokens = result.output.tokens;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    result.text += tokenizer.Decode(tokens[i], tokens[i + 1]);
  }
  return result;
}

}  // namespace sparseflash
