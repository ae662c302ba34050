// A cache's request stream held in memory: one dense key per request, each
// request's next use (the index of the key's next request), and the object
// size. Made from a trace's neuron accesses, or read from and written to
// libCacheSim's oracleGeneral binary format (24-byte records: uint32 time,
// uint64 object id, uint32 size, int64 next access index, -1 for none), so the
// same stream runs through sparseflash's policies and through libCacheSim.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/eviction_policy.h"
#include "engine/trace_future.h"

namespace sparseflash {

class TokenSource;

inline constexpr uint32_t kNoNextUse = UINT32_MAX;

struct RequestStream {
  std::vector<CacheKey> keys;      // dense keys in [0, key_space), first seen first
  std::vector<uint32_t> time;      // per request: its token (a trace) or the record's time
  std::vector<uint32_t> next_use;  // per request: index of the key's next request, or kNoNextUse
  std::vector<uint64_t> ids;       // per key: the object id it stands for
  uint32_t object_bytes = 0;       // every object's size

  uint32_t key_space() const { return static_cast<uint32_t>(ids.size()); }
  size_t requests() const { return keys.size(); }
};

// Builds a stream request by request: object ids become dense keys in order
// of first request; Finish() fills the next uses.
class RequestStreamBuilder {
 public:
  explicit RequestStreamBuilder(uint32_t object_bytes, size_t expected_requests = 0);
  void Add(uint64_t object_id, uint32_t time);
  size_t requests() const { return stream_.keys.size(); }
  size_t objects() const { return stream_.ids.size(); }
  RequestStream Finish() &&;

 private:
  RequestStream stream_;
  absl::flat_hash_map<uint64_t, CacheKey> dense_;
};

// The accesses of every token `source` yields (as the simulator's caches see
// them: layer by layer, ascending ids), each object `object_bytes` large; the
// object id is the neuron key.
absl::StatusOr<RequestStream> CollectRequestStream(TokenSource& source, AccessSet set,
                                                   uint32_t object_bytes);

// Reads an oracleGeneral file. Object ids map to dense keys in order of first
// request; the next-use field is recomputed, not trusted. Errors name the file
// and the record: a size that is not a whole number of records, an empty
// file, a zero or a differing object size (sizes must be equal).
absl::StatusOr<RequestStream> ReadOracleGeneral(const std::string& path);
// The same from an open stream of `size` bytes, named `path` in errors.
absl::StatusOr<RequestStream> ReadOracleGeneral(std::FILE* file, int64_t size,
                                                const std::string& path);
// Writes `stream` as an oracleGeneral file (replaced only once complete).
absl::Status WriteOracleGeneral(const RequestStream& stream, const std::string& path);

}  // namespace sparseflash
