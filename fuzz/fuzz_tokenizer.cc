// libFuzzer harness: the TinyStories tokenizer file, then encoding and decoding
// with what it accepts.
#include <string>

#include "engine/tiny/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (int vocab : {259, 1024}) {
    absl::StatusOr<sparseflash::Tokenizer> t = sparseflash::Tokenizer::Parse(bytes, vocab, "fuzz");
    if (!t.ok()) continue;
    const std::vector<int> ids = t->Encode("Once upon a time, \xc3\xa9 \x01");
    int previous = 1;
    for (int id : ids) {
      (void)t->Decode(previous, id);
      previous = id;
    }
  }
  return 0;
}
