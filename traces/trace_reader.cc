#include "traces/trace_reader.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "google/protobuf/io/coded_stream.h"
#include "traces/shape_limits.h"
#include "traces/trace_format.h"
#include "zstd.h"

namespace sparseflash {
namespace {

bool ReadExact(FILE* file, void* data, size_t n) { return std::fread(data, 1, n, file) == n; }

bool ReadU32(FILE* file, uint32_t* v) { return ReadExact(file, v, 4); }

}  // namespace

TraceReader::TraceReader(std::string path, FILE* file)
    : path_(std::move(path)), file_(file), dctx_(ZSTD_createDCtx()) {}

TraceReader::~TraceReader() {
  if (file_ != nullptr) std::fclose(file_);
  ZSTD_freeDCtx(dctx_);
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  if (IsDirectory(path)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory; expected a trace"));
  }
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open trace: ", std::strerror(errno)));
  }
  return FromStream(file, path);
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::FromStream(FILE* file, std::string name) {
  std::unique_ptr<TraceReader> reader(new TraceReader(std::move(name), file));
  if (absl::Status s = reader->ReadHeader(); !s.ok()) return s;
  return reader;
}

absl::Status TraceReader::Error(const std::string& what) const {
  return absl::DataLossError(absl::StrCat(path_, ": token ", tokens_read_, ": ", what));
}

absl::Status TraceReader::LayerError(uint32_t layer, const std::string& what) const {
  return absl::DataLossError(
      absl::StrCat(path_, ": token ", tokens_read_, ", layer ", layer, ": ", what));
}

absl::Status TraceReader::ReadHeader() {
  char magic[8];
  uint32_t version = 0, length = 0;
  if (!ReadExact(file_, magic, 8) || std::memcmp(magic, trace_format::kMagic, 8) != 0) {
    return absl::DataLossError(
        absl::StrCat(path_, ": not a sparseflash trace (bad magic; expected SFTRACE1)"));
  }
  if (!ReadU32(file_, &version) || version != trace_format::kVersion) {
    return absl::DataLossError(absl::StrCat(path_, ": unsupported trace format version ", version,
                                            " (this build reads version ", trace_format::kVersion,
                                            ")"));
  }
  if (!ReadU32(file_, &length) || length > trace_format::kMaxHeaderBytes) {
    return absl::DataLossError(absl::StrCat(path_, ": header truncated or too large"));
  }
  std::string bytes(length, '\0');
  proto::TraceHeader header;
  if (!ReadExact(file_, bytes.data(), length) || !header.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat(path_, ": header truncated or corrupt"));
  }
  trace_format::HeaderFromProto(header, &header_);
  const TraceModelShape& m = header_.model;
  if (header_.tokens == trace_format::kUnfinishedTokens) {
    return absl::DataLossError(absl::StrCat(
        path_, ": trace was never finished (its writer was interrupted); regenerate it"));
  }
  if (std::string e = ShapeLimitError(m.layers, m.d_ffn, m.experts, m.top_k); !e.empty()) {
    return absl::DataLossError(absl::StrCat(path_, ": header has an invalid model shape: ", e));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> TraceReader::LoadFrame() {
  uint32_t sizes[2];
  size_t got = std::fread(sizes, 1, 8, file_);
  if (got == 0 && std::feof(file_)) return false;
  if (got != 8) return Error(absl::StrCat("truncated frame header (frame ", frames_read_, ")"));
  if (sizes[0] > trace_format::kMaxFrameBytes || sizes[1] > trace_format::kMaxFrameBytes) {
    return Error(absl::StrCat("frame ", frames_read_, " claims ", sizes[0], "/", sizes[1],
                              " bytes, over the 64 MiB limit: corrupt frame header"));
  }
  compressed_.resize(sizes[0]);
  if (!ReadExact(file_, compressed_.data(), sizes[0])) {
    return Error(absl::StrCat("file truncated inside frame ", frames_read_));
  }
  raw_.resize(sizes[1]);
  size_t n =
      ZSTD_decompressDCtx(dctx_, raw_.data(), raw_.size(), compressed_.data(), compressed_.size());
  if (ZSTD_isError(n) || n != sizes[1]) {
    return Error(absl::StrCat("corrupt zstd frame ", frames_read_, ": ",
                              ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch"));
  }
  raw_pos_ = 0;
  ++frames_read_;
  return true;
}

absl::StatusOr<bool> TraceReader::Next(TokenActivations* token) {
  while (raw_pos_ >= raw_.size()) {
    absl::StatusOr<bool> loaded = LoadFrame();
    if (!loaded.ok()) return loaded.status();
    if (!*loaded) {
      if (tokens_read_ != header_.tokens) {
        return Error(absl::StrCat("file truncated: header says ", header_.tokens,
                                  " tokens, file ends after ", tokens_read_));
      }
      return false;
    }
  }
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(raw_.data() + raw_pos_),
      static_cast<int>(raw_.size() - raw_pos_));
  uint32_t length = 0;
  if (!in.ReadVarint32(&length) || length > raw_.size() - raw_pos_) {
    return Error("corrupt record length");
  }
  raw_pos_ += in.CurrentPosition();
  if (!record_.ParseFromArray(raw_.data() + raw_pos_, static_cast<int>(length))) {
    return Error("corrupt record");
  }
  raw_pos_ += length;
  if (tokens_read_ >= header_.tokens) {
    return Error(absl::StrCat("more tokens than the header's ", header_.tokens));
  }
  if (absl::Status s = Decode(token); !s.ok()) return s;
  ++tokens_read_;
  return true;
}

absl::Status TraceReader::DecodeIds(const google::protobuf::RepeatedField<uint32_t>& deltas,
                                    uint32_t layer, const char* what, std::vector<uint32_t>* out) {
  out->resize(deltas.size());
  uint64_t id = 0;
  const uint32_t limit = static_cast<uint32_t>(header_.model.d_ffn);
  for (int i = 0; i < deltas.size(); ++i) {
    uint32_t d = deltas.Get(i);
    if (i > 0 && d == 0) return LayerError(layer, absl::StrCat(what, " ids repeat"));
    id += d;
    if (id >= limit) {
      return LayerError(layer, absl::StrCat(what, " neuron id ", id, " out of range (layer has ",
                                            limit, " neurons)"));
    }
    (*out)[i] = static_cast<uint32_t>(id);
  }
  return absl::OkStatus();
}

absl::Status TraceReader::Decode(TokenActivations* token) {
  const TraceModelShape& m = header_.model;
  if (record_.token() != tokens_read_) {
    return Error(absl::StrCat("record numbered ", record_.token(), " out of order"));
  }
  token->token = record_.token();
  // A token lists every layer of the model, in order (a layer may be empty).
  if (record_.layers_size() != m.layers) {
    return Error(absl::StrCat(record_.layers_size(), " layers, the model '", m.name, "' has ",
                              m.layers, " (a token lists every layer, in order)"));
  }
  token->layers.resize(record_.layers_size());
  for (int li = 0; li < record_.layers_size(); ++li) {
    const proto::LayerActivation& l = record_.layers(li);
    if (l.layer() != static_cast<uint32_t>(li)) {
      return LayerError(l.layer(), absl::StrCat("where layer ", li,
                                                " was expected (a token lists every layer, "
                                                "in order)"));
    }
    if (l.experts_size() > m.top_k) {
      return LayerError(l.layer(),
                        absl::StrCat(l.experts_size(), " experts, the model routes to ", m.top_k));
    }
    LayerActivations& out = token->layers[li];
    out.layer = l.layer();
    out.experts.resize(l.experts_size());
    for (int ei = 0; ei < l.experts_size(); ++ei) {
      const proto::ExpertActivation& e = l.experts(ei);
      if (e.expert() >= static_cast<uint32_t>(m.experts)) {
        return LayerError(l.layer(), absl::StrCat("expert ", e.expert(), " out of range"));
      }
      for (int prev = 0; prev < ei; ++prev) {  // at most top_k experts
        if (l.experts(prev).expert() == e.expert()) {
          return LayerError(l.layer(), absl::StrCat("expert ", e.expert(), " appears twice"));
        }
      }
      NeuronSet& set = out.experts[ei];
      set.expert = e.expert();
      set.bits.present = false;  // a reused token's bitsets are of another token
      if (absl::Status s = DecodeIds(e.active_delta(), l.layer(), "active", &set.active); !s.ok()) {
        return s;
      }
      if (absl::Status s = DecodeIds(e.predicted_delta(), l.layer(), "predicted", &set.predicted);
          !s.ok()) {
        return s;
      }
      if (absl::Status s = DecodeIds(e.gate_only_delta(), l.layer(), "gate-only", &set.gate_only);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sparseflash
