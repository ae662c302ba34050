#include "engine/synthetic_stream.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/random.h"
#include "engine/neuron_cache.h"

namespace sparseflash {
namespace {

absl::Status Check(const SyntheticStreamOptions& o) {
  auto bad = [](const char* name, const std::string& range) {
    return absl::InvalidArgumentError(absl::StrCat("synthetic stream: ", name, " ", range));
  };
  if (o.layers == 0 || o.neurons == 0) return bad("layers and neurons", "must be at least 1");
  if (uint64_t{o.layers} * o.neurons > kMaxKeySpace) {
    return bad("layers x neurons", absl::StrCat("must be at most ", kMaxKeySpace));
  }
  if (!(o.active > 0 && o.active <= 0.5)) return bad("active", "must be in (0, 0.5]");
  if (!(o.reuse >= 0 && o.reuse <= 1)) return bad("reuse", "must be in [0, 1]");
  if (!(o.zipf_alpha >= 0 && o.zipf_alpha <= 4)) return bad("zipf_alpha", "must be in [0, 4]");
  if (o.tokens == 0) return bad("tokens", "must be at least 1");
  if (o.object_bytes == 0) return bad("object_bytes", "must be at least 1");
  const double requests = double(o.tokens) * o.layers * std::round(o.active * o.neurons);
  if (requests >= double(kNoNextUse))
    return bad("tokens x layers x active", "exceed 2^32 requests");
  return absl::OkStatus();
}

// Popularity by rank: the cumulative Zipf weights of ranks 1..n.
std::vector<double> ZipfCdf(uint32_t n, double alpha) {
  std::vector<double> cdf(n);
  double sum = 0;
  for (uint32_t k = 1; k <= n; ++k) {
    sum += alpha == 1.0 ? 1.0 / k : std::pow(double(k), -alpha);
    cdf[k - 1] = sum;
  }
  return cdf;
}

// One layer's state: its neurons in popularity order and its recent sets.
struct Layer {
  std::vector<uint32_t> by_rank;             // neuron of each rank
  std::deque<std::vector<uint32_t>> recent;  // the window's sets, newest last
  std::vector<uint32_t> mark;                // per neuron: token+1 when chosen this token
};

}  // namespace

absl::StatusOr<RequestStream> MakeSyntheticStream(const SyntheticStreamOptions& o) {
  if (absl::Status s = Check(o); !s.ok()) return s;
  Random random(o.seed);
  const std::vector<double> cdf = ZipfCdf(o.neurons, o.zipf_alpha);
  std::vector<Layer> layers(o.layers);
  for (Layer& l : layers) {
    l.by_rank.resize(o.neurons);
    for (uint32_t i = 0; i < o.neurons; ++i) l.by_rank[i] = i;
    for (uint32_t i = o.neurons; i > 1; --i)
      std::swap(l.by_rank[i - 1], l.by_rank[random.Below(i)]);
    l.mark.assign(o.neurons, 0);
  }
  const auto count = static_cast<uint32_t>(std::max(1.0, std::round(o.active * o.neurons)));
  const auto reused = static_cast<uint32_t>(std::round(o.reuse * count));
  RequestStreamBuilder stream(o.object_bytes, size_t{o.tokens} * o.layers * count);
  std::vector<uint32_t> set, pool;
  for (uint32_t t = 0; t < o.tokens; ++t) {
    for (uint32_t li = 0; li < o.layers; ++li) {
      Layer& l = layers[li];
      set.clear();
      auto take = [&](uint32_t id) {
        if (l.mark[id] == t + 1) return;
        l.mark[id] = t + 1;
        set.push_back(id);
      };
      pool.clear();  // the window's distinct neurons, in the order they were requested
      for (const std::vector<uint32_t>& s : l.recent) {
        for (uint32_t id : s) {
          if (l.mark[id] != t + 1) {
            l.mark[id] = t + 1;
            pool.push_back(id);
          }
        }
      }
      for (uint32_t id : pool) l.mark[id] = 0;
      for (uint32_t i = 0; i < reused && !pool.empty(); ++i) {  // without replacement
        const uint32_t pick = random.Below(static_cast<uint32_t>(pool.size()));
        take(pool[pick]);
        pool[pick] = pool.back();
        pool.pop_back();
      }
      while (set.size() < count) {
        const double u = random.Uniform() * cdf.back();
        const auto rank =
            static_cast<uint32_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        take(l.by_rank[std::min(rank, o.neurons - 1)]);
      }
      std::sort(set.begin(), set.end());
      for (uint32_t id : set) stream.Add(uint64_t{li} * o.neurons + id, t);
      l.recent.push_back(set);
      if (l.recent.size() > o.window_tokens) l.recent.pop_front();
    }
  }
  return std::move(stream).Finish();
}

}  // namespace sparseflash
