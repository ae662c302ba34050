// The TinyStories byte-pair tokenizer (llama2.c tokenizer.bin format): encoding
// with a BOS and a leading-space token, merges by score, raw-byte fallback;
// decoding that drops the space after BOS and turns <0xXX> into bytes.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace sparseflash {

class Tokenizer {
 public:
  static constexpr int kBos = 1;
  static constexpr int kEos = 2;

  // Reads a tokenizer file with `vocab` entries; errors name the file and entry.
  static absl::StatusOr<Tokenizer> Load(const std::string& path, int vocab);
  // The same from the file's bytes; `origin` names it in errors.
  static absl::StatusOr<Tokenizer> Parse(const std::string& data, int vocab,
                                         const std::string& origin);

  std::vector<int> Encode(const std::string& text) const;
  // The text of `token` following `previous`.
  std::string Decode(int previous, int token) const;

 private:
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  absl::flat_hash_map<std::string, int> ids_;
};

}  // namespace sparseflash
