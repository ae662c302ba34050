#include "engine/request_stream.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "engine/neuron_cache.h"
#include "engine/token_source.h"

namespace sparseflash {
namespace {

// One oracleGeneral record, packed as libCacheSim reads it.
constexpr size_t kRecordBytes = 24;
struct Record {
  uint32_t time;
  uint64_t id;
  uint32_t bytes;
  int64_t next;
};

Record Decode(const unsigned char* p) {
  Record r;
  std::memcpy(&r.time, p, 4);
  std::memcpy(&r.id, p + 4, 8);
  std::memcpy(&r.bytes, p + 12, 4);
  std::memcpy(&r.next, p + 16, 8);
  return r;
}

void Encode(const Record& r, unsigned char* p) {
  std::memcpy(p, &r.time, 4);
  std::memcpy(p + 4, &r.id, 8);
  std::memcpy(p + 12, &r.bytes, 4);
  std::memcpy(p + 16, &r.next, 8);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

RequestStreamBuilder::RequestStreamBuilder(uint32_t object_bytes, size_t expected_requests) {
  stream_.object_bytes = object_bytes;
  stream_.keys.reserve(expected_requests);
  stream_.time.reserve(expected_requests);
}

void RequestStreamBuilder::Add(uint64_t object_id, uint32_t time) {
  auto [it, fresh] = dense_.try_emplace(object_id, static_cast<CacheKey>(stream_.ids.size()));
  if (fresh) stream_.ids.push_back(object_id);
  stream_.keys.push_back(it->second);
  stream_.time.push_back(time);
}

RequestStream RequestStreamBuilder::Finish() && {
  RequestStream& s = stream_;
  s.next_use.assign(s.keys.size(), kNoNextUse);
  std::vector<uint32_t> later(s.key_space(), kNoNextUse);
  for (size_t i = s.keys.size(); i-- > 0;) {
    s.next_use[i] = later[s.keys[i]];
    later[s.keys[i]] = static_cast<uint32_t>(i);
  }
  return std::move(s);
}

absl::StatusOr<RequestStream> CollectRequestStream(TokenSource& source, AccessSet set,
                                                   uint32_t object_bytes) {
  const TraceModelShape& m = source.header().model;
  const NeuronIndexer indexer(m.layers, m.experts, m.d_ffn);
  RequestStreamBuilder stream(object_bytes);
  for (uint32_t t = 0;; ++t) {
    absl::StatusOr<const TokenActivations*> token = source.Next();
    if (!token.ok()) return token.status();
    if (*token == nullptr) break;
    ForEachAccess(**token, indexer, set, [&](CacheKey neuron) { stream.Add(neuron, t); });
    if (stream.requests() >= kNoNextUse) {
      return absl::ResourceExhaustedError("request stream: the trace has 2^32 accesses or more");
    }
  }
  return std::move(stream).Finish();
}

absl::StatusOr<RequestStream> ReadOracleGeneral(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(::fileno(file.get()), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file (a directory or a device?)"));
  }
  return ReadOracleGeneral(file.get(), st.st_size, path);
}

absl::StatusOr<RequestStream> ReadOracleGeneral(std::FILE* file, int64_t size,
                                                const std::string& path) {
  if (size <= 0 || size % kRecordBytes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", size, " bytes is not a whole, non-zero number of ", kRecordBytes,
        "-byte oracleGeneral records (the file is cut short, empty or not oracleGeneral)"));
  }
  const uint64_t records = static_cast<uint64_t>(size) / kRecordBytes;
  if (records >= kNoNextUse) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": 2^32 requests or more"));
  }
  RequestStreamBuilder stream(0, records);
  uint32_t object_bytes = 0;
  std::vector<unsigned char> buffer(kRecordBytes * 4096);
  for (uint64_t index = 0; index < records;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(4096, records - index));
    if (std::fread(buffer.data(), kRecordBytes, want, file) != want) {
      return absl::DataLossError(absl::StrCat(path, ": read failed at record ", index));
    }
    for (size_t j = 0; j < want; ++j, ++index) {
      const Record r = Decode(buffer.data() + j * kRecordBytes);
      if (r.bytes == 0 || (object_bytes != 0 && r.bytes != object_bytes)) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": record ", index, ": obj_size ", r.bytes, " (every object must have one size, ",
            object_bytes == 0 ? "above 0" : absl::StrCat(object_bytes, " bytes"), ")"));
      }
      object_bytes = r.bytes;
      stream.Add(r.id, r.time);
    }
    if (stream.objects() > kMaxKeySpace) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": more than ", kMaxKeySpace, " distinct objects"));
    }
  }
  RequestStream out = std::move(stream).Finish();
  out.object_bytes = object_bytes;
  return out;
}

absl::Status WriteOracleGeneral(const RequestStream& stream, const std::string& path) {
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path, {.sync = false});
  if (!file.ok()) return file.status();
  std::vector<unsigned char> chunk;
  chunk.reserve(kRecordBytes * 4096);
  for (size_t i = 0; i < stream.requests(); ++i) {
    const uint32_t next = stream.next_use[i];
    const Record r{.time = stream.time[i],
                   .id = stream.ids[stream.keys[i]],
                   .bytes = stream.object_bytes,
                   .next = next == kNoNextUse ? int64_t{-1} : int64_t{next}};
    chunk.resize(chunk.size() + kRecordBytes);
    Encode(r, chunk.data() + chunk.size() - kRecordBytes);
    if (chunk.size() == chunk.capacity() || i + 1 == stream.requests()) {
      absl::Status s = (*file)->Write(
          absl::string_view(reinterpret_cast<const char*>(chunk.data()), chunk.size()));
      if (!s.ok()) return s;
      chunk.clear();
    }
  }
  return (*file)->Commit();
}

}  // namespace sparseflash
