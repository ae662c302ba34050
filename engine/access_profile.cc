#include "engine/access_profile.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "traces/generator.h"

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
  p.Rank();
  return p;
}

ActivationProfile ActivationProfile::OfGenerator(const ModelSpec& model) {
  return FromProbabilities(ExpectedActivity(model));
}

ActivationProfile ActivationProfile::FromProbabilities(std::vector<float> probability) {
  ActivationProfile p;
  p.counts_.reserve(probability.size());
  for (float q : probability) {
    // std::lround of a non-negative float, without a library call per key: in
    // double, adding a half is exact and truncation is the floor.
    const float count = std::clamp(q, 0.f, 1.f) * 65535.f;
    p.counts_.push_back(static_cast<uint32_t>(static_cast<double>(count) + 0.5));
  }
  p.tokens_ = 65535;
  probability = std::vector<float>();  // its block is free for the ranking's
  p.Rank();
  return p;
}

void ActivationProfile::Rank() {
  // Counting sort by count (at most the token count): linear in the key space.
  // The ranking is allocated first, so that it can take a block just freed
  // (FromProbabilities') before the buckets split it.
  ranked_.resize(counts_.size());
  uint32_t top = 0;
  for (uint32_t c : counts_) top = std::max(top, c);
  std::vector<size_t> start(static_cast<size_t>(top) + 2, 0);
  for (uint32_t c : counts_) ++start[top - c + 1];
  for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  for (CacheKey k = 0; k < counts_.size(); ++k) ranked_[start[top - counts_[k]]++] = k;
}

absl::StatusOr<std::shared_ptr<const ActivationProfile>> ProfileCache::Get(
    const std::string& path, uint32_t key_space, AccessSet set, const Collector& collect) {
  // Held while counting: runs that want the same profile wait for it, not count it again.
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_tuple(path, key_space, set);
  auto it = profiles_.find(key);
  if (it != profiles_.end()) return it->second;
  absl::StatusOr<ActivationProfile> profile = collect();
  if (!profile.ok()) return profile.status();
  auto shared = std::make_shared<const ActivationProfile>(*std::move(profile));
  profiles_.emplace(key, shared);
  return shared;
}

TraceOracle::TraceOracle(std::shared_ptr<const TraceFuture> future)
    : future_(std::move(future)), cursor_(future_->first_windows()) {}

absl::StatusOr<std::unique_ptr<TraceOracle>> TraceOracle::Collect(TokenSource& source,
                                                                  const NeuronIndexer& indexer,
                                                                  AccessSet set) {
  absl::StatusOr<std::shared_ptr<const TraceFuture>> future =
      TraceFuture::Collect(source, indexer, set);
  if (!future.ok()) return future.status();
  return std::make_unique<TraceOracle>(*std::move(future));
}

uint32_t TraceOracle::NextUse(CacheKey key) const {
  UseWindow& c = cursor_[key];
  const uint32_t t = token_ + 1;  // the first token that counts
  if (t <= c.base) return c.base;
  for (uint32_t skip = t - c.base; skip < UseWindow::kSpan; skip = (skip | 63) + 1) {
    const uint64_t later = c.mask[skip / 64] >> (skip % 64);
    if (later != 0) return c.base + skip + static_cast<uint32_t>(std::countr_zero(later));
  }
  return future_->Fill(c, key, t);
}

}  // namespace sparseflash
