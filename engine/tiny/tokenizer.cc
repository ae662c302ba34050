#include "engine/tiny/tokenizer.h"

#include <cstring>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/files.h"

namespace sparseflash {

absl::StatusOr<Tokenizer> Tokenizer::Load(const std::string& path, int vocab) {
  absl::StatusOr<std::string> file = ReadWholeFile(path, "tokenizer", int64_t{64} << 20);
  if (!file.ok()) return file.status();
  return Parse(*file, vocab, path);
}

absl::StatusOr<Tokenizer> Tokenizer::Parse(const std::string& data, int vocab,
                                           const std::string& path) {
  // Tokens 3..258 are the raw bytes every encoding may fall back to.
  if (vocab < 259 || vocab > (1 << 24)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a vocabulary of ", vocab, " tokens; need 259 to 2^24 (with the 256 byte tokens)"));
  }
  std::istringstream in(data);
  Tokenizer t;
  int32_t max_len = 0;
  if (!in.read(reinterpret_cast<char*>(&max_len), 4) || max_len <= 0 || max_len > 1024) {
    return absl::DataLossError(absl::StrCat(path, ": bad max_token_length"));
  }
  for (int i = 0; i < vocab; ++i) {
    float score;
    int32_t len;
    if (!in.read(reinterpret_cast<char*>(&score), 4) ||
        !in.read(reinterpret_cast<char*>(&len), 4) || len < 0 || len > max_len) {
      return absl::DataLossError(absl::StrCat(path, ": token ", i,
                                              " is damaged or missing (file has ",
                                              "fewer than the model's ", vocab, " tokens?)"));
    }
    std::string piece(len, '\0');
    if (!in.read(piece.data(), len)) {
      return absl::DataLossError(absl::StrCat(path, ": token ", i, " is cut short"));
    }
    t.ids_.emplace(piece, i);
    t.pieces_.push_back(std::move(piece));
    t.scores_.push_back(score);
  }
  return t;
}

std::vector<int> Tokenizer::Encode(const std::string& text) const {
  std::vector<int> tokens = {kBos};
  if (text.empty()) return tokens;
  if (auto it = ids_.find(" "); it != ids_.end()) tokens.push_back(it->second);
  for (size_t i = 0; i < text.size();) {
    // One UTF-8 character: a lead byte and its continuation bytes.
    size_t len = 1;
    while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80 &&
           len < 4) {
      ++len;
    }
    auto it = ids_.find(text.substr(i, len));
    if (it != ids_.end()) {
      tokens.push_back(it->second);
    } else {
      for (size_t k = 0; k < len; ++k)
        tokens.push_back(static_cast<unsigned char>(text[i + k]) + 3);
    }
    i += len;
  }
  while (true) {
    float best = -1e10f;
    int best_id = -1;
    size_t best_at = 0;
    for (size_t i = 1; i + 1 < tokens.size(); ++i) {
      auto it = ids_.find(pieces_[tokens[i]] + pieces_[tokens[i + 1]]);
      if (it != ids_.end() && scores_[it->second] > best) {
        best = scores_[it->second];
        best_id = it->second;
        best_at = i;
      }
    }
    if (best_id < 0) break;
    tokens[best_at] = best_id;
    tokens.erase(tokens.begin() + best_at + 1);
  }
  return tokens;
}

std::string Tokenizer::Decode(int previous, int token) const {
  std::string piece = pieces_[token];
  if (previous == kBos && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
  unsigned int byte;
  if (piece.size() == 6 && std::sscanf(piece.c_str(), "<0x%02X>", &byte) == 1) {
    return std::string(1, static_cast<char>(byte));
  }
  return piece;
}

}  // namespace sparseflash
