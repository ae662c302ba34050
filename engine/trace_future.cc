#include "engine/trace_future.h"

#include "engine/token_source.h"

namespace sparseflash {

absl::StatusOr<std::shared_ptr<const TraceFuture>> TraceFuture::Collect(
    TokenSource& source, const NeuronIndexer& indexer, AccessSet set) {
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
    if (accessed.size() >= UINT32_MAX) {
      return absl::ResourceExhaustedError("belady: the trace has 2^32 accesses or more");
    }
    token_end.push_back(static_cast<uint32_t>(accessed.size()));
    ++t;
  }
  auto future = std::make_shared<TraceFuture>();
  std::vector<uint32_t>& start = future->start_;
  start.assign(keys + 1, 0);
  for (CacheKey k : accessed) ++start[k + 1];
  for (size_t k = 0; k < keys; ++k) start[k + 1] += start[k];
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  future->uses_.resize(accessed.size());
  size_t i = 0;
  for (uint32_t tok = 0; tok < token_end.size(); ++tok) {
    for (; i < token_end[tok]; ++i) future->uses_[fill[accessed[i]]++] = tok;
  }
  future->first_windows_.resize(keys);
  for (CacheKey k = 0; k < keys; ++k) {
    UseWindow& w = future->first_windows_[k];
    w.next = future->begin(k);
    future->Fill(w, k, 0);
  }
  return std::shared_ptr<const TraceFuture>(std::move(future));
}

uint32_t TraceFuture::Fill(UseWindow& w, CacheKey key, uint32_t t) const {
  const uint32_t last = end(key);
  uint32_t i = w.next;
  while (i < last && use(i) < t) ++i;
  for (uint64_t& word : w.mask) word = 0;
  w.base = i < last ? use(i) : UINT32_MAX;
  for (; i < last && use(i) - w.base < UseWindow::kSpan; ++i) {
    const uint32_t bit = use(i) - w.base;
    w.mask[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  w.next = i;
  return w.base;
}

}  // namespace sparseflash
