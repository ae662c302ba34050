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

TraceOracle::TraceOracle(std::shared_ptr<const TraceFuture> future) : future_(std::move(future)) {
  cursor_.resize(future_->keys());
  for (CacheKey k = 0; k < cursor_.size(); ++k) {
    const uint32_t begin = future_->begin(k), end = future_->end(k);
    cursor_[k] = {begin, end, UseAt(begin, end), UseAt(begin + 1, end)};
  }
}

absl::StatusOr<std::unique_ptr<TraceOracle>> TraceOracle::Collect(TokenSource& source,
                                                                  const NeuronIndexer& indexer,
                                                                  AccessSet set) {
  absl::StatusOr<std::shared_ptr<const TraceFuture>> future =
      TraceFuture::Collect(source, indexer, set);
  if (!future.ok()) return future.status();
  return std::make_unique<TraceOracle>(*std::move(future));
}

uint32_t TraceOracle::NextUse(CacheKey key) const {
  Cursor& c = cursor_[key];
  while (c.now <= token_) {  // usually once: the key is at its use `now`
    ++c.next;
    c.now = c.after;
    c.after = UseAt(c.next + 1, c.end);
  }
  return c.now;
}

}  // namespace sparseflash
