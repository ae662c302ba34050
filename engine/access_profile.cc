#include "engine/access_profile.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sparseflash {

absl::StatusOr<ActivationProfile> ActivationProfile::Collect(TokenSource& source,
                                                             const NeuronIndexer& indexer,
                                                             AccessSet set) {
  ActivationProfile p;
  p.counts_.assign(indexer.key_space(), 0);
  while (true) {
    absl::StatusOr<const TokenActivations*> token = source.Next();
    if (!token.ok()) return token.status();
    if (*token == nullptr) break;
    ++p.tokens_;
    ForEachAccess(**token, indexer, set, [&](CacheKey k) { ++p.counts_[k]; });
  }
  return p;
}

ActivationProfile ActivationProfile::FromProbabilities(const std::vector<float>& probability) {
  ActivationProfile p;
  p.counts_.reserve(probability.size());
  for (float q : probability) {
    p.counts_.push_back(static_cast<uint32_t>(std::lround(std::clamp(q, 0.f, 1.f) * 65535.f)));
  }
  p.tokens_ = 65535;
  return p;
}

std::vector<CacheKey> ActivationProfile::Ranked() const {
  // Counting sort by count (at most the token count): linear in the key space.
  uint32_t top = 0;
  for (uint32_t c : counts_) top = std::max(top, c);
  std::vector<size_t> start(static_cast<size_t>(top) + 2, 0);
  for (uint32_t c : counts_) ++start[top - c + 1];
  for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<CacheKey> keys(counts_.size());
  for (CacheKey k = 0; k < counts_.size(); ++k) keys[start[top - counts_[k]]++] = k;
  return keys;
}

absl::StatusOr<std::unique_ptr<TraceOracle>> TraceOracle::Collect(TokenSource& source,
                                                                  const NeuronIndexer& indexer,
                                                                  AccessSet set) {
  // One pass keeps each token's distinct keys; a counting sort then lays them
  // out key by key.
  const size_t keys = indexer.key_space();
  std::vector<CacheKey> accessed;
  std::vector<uint32_t> token_end;  // per token: one past its last entry of `accessed`
  std::vector<uint32_t> last(keys, UINT32_MAX);
  uint32_t t = 0;
  while (true) {
    absl::StatusOr<const TokenActivations*> token = source.Next();
    if (!token.ok()) return token.status();
    if (*token == nullptr) break;
    ForEachAccess(**token, indexer, set, [&](CacheKey k) {
      if (last[k] == t) return;
      last[k] = t;
      accessed.push_back(k);
    });
    if (accessed.size() > UINT32_MAX) {
      return absl::ResourceExhaustedError("belady: the trace has more than 2^32 accesses");
    }
    token_end.push_back(static_cast<uint32_t>(accessed.size()));
    ++t;
  }
  auto oracle = std::make_unique<TraceOracle>();
  oracle->span_.assign(keys, {0, 0});
  for (CacheKey k : accessed) ++oracle->span_[k].end;
  uint32_t at = 0;
  for (Span& s : oracle->span_) {
    s.next = at;
    at += s.end;
    s.end = s.next;  // the fill below advances it to one past the key's last use
  }
  oracle->uses_.resize(accessed.size());
  size_t i = 0;
  for (uint32_t tok = 0; tok < token_end.size(); ++tok) {
    for (; i < token_end[tok]; ++i) oracle->uses_[oracle->span_[accessed[i]].end++] = tok;
  }
  return oracle;
}

uint32_t TraceOracle::NextUse(CacheKey key) const {
  Span& s = span_[key];
  while (s.next < s.end && uses_[s.next] <= token_) ++s.next;
  return s.next < s.end ? uses_[s.next] : UINT32_MAX;
}

}  // namespace sparseflash
