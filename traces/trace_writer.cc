#include "traces/trace_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "traces/shape_limits.h"
#include "traces/trace_format.h"
#include "zstd.h"

namespace sparseflash {
namespace {

void AppendDeltas(const std::vector<uint32_t>& ids,
                  google::protobuf::RepeatedField<uint32_t>* out) {
  out->Reserve(static_cast<int>(ids.size()));
  uint32_t prev = 0;
  for (uint32_t id : ids) {
    out->AddAlreadyReserved(id - prev);
    prev = id;
  }
}

void AppendVarint32(uint32_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendU32(uint32_t v, std::string* out) { out->append(reinterpret_cast<char*>(&v), 4); }

void ToRecord(const TokenActivations& token, proto::TokenRecord* record) {
  record->Clear();
  record->set_token(token.token);
  for (const LayerActivations& layer : token.layers) {
    proto::LayerActivation* l = record->add_layers();
    l->set_layer(layer.layer);
    for (const NeuronSet& set : layer.experts) {
      proto::ExpertActivation* e = l->add_experts();
      e->set_expert(set.expert);
      AppendDeltas(set.active, e->mutable_active_delta());
      AppendDeltas(set.predicted, e->mutable_predicted_delta());
      AppendDeltas(set.gate_only, e->mutable_gate_only_delta());
    }
  }
}

}  // namespace

TraceWriter::TraceWriter(std::unique_ptr<AtomicFile> file, TraceHeader header,
                         TraceWriterOptions options)
    : path_(file->path()),
      file_(std::move(file)),
      header_(std::move(header)),
      options_(options),
      cctx_(ZSTD_createCCtx()) {
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, options_.zstd_level);
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
}

TraceWriter::~TraceWriter() { ZSTD_freeCCtx(cctx_); }

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(
    const std::string& path, const TraceHeader& header, const TraceWriterOptions& options) {
  const TraceModelShape& m = header.model;
  if (std::string e = ShapeLimitError(m.layers, m.d_ffn, m.experts, m.top_k); !e.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot write a trace: ", e));
  }
  absl::StatusOr<std::unique_ptr<AtomicFile>> file =
      AtomicFile::Create(path, {.overwrite = options.overwrite, .sync = options.sync});
  if (!file.ok()) return file.status();
  std::unique_ptr<TraceWriter> writer(new TraceWriter(*std::move(file), header, options));
  writer->header_.tokens = trace_format::kUnfinishedTokens;
  if (absl::Status s = writer->WriteHeader(); !s.ok()) return s;
  return writer;
}

absl::Status TraceWriter::IoError(const std::string& what) const {
  return file_ ? file_->WriteError(what)
               : absl::FailedPreconditionError(absl::StrCat(path_, ": already finished"));
}

absl::Status TraceWriter::WriteHeader() {
  proto::TraceHeader header;
  trace_format::HeaderToProto(header_, &header);
  std::string bytes(trace_format::kMagic, sizeof(trace_format::kMagic));
  AppendU32(trace_format::kVersion, &bytes);
  std::string body;
  {
    // Deterministic: the provenance map must serialize the same way every time.
    google::protobuf::io::StringOutputStream stream(&body);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    header.SerializeToCodedStream(&coded);
  }
  AppendU32(static_cast<uint32_t>(body.size()), &bytes);
  bytes += body;
  if (std::fseek(file_->stream(), 0, SEEK_SET) != 0 ||
      std::fwrite(bytes.data(), 1, bytes.size(), file_->stream()) != bytes.size()) {
    return IoError("writing the header");
  }
  return absl::OkStatus();
}

absl::Status TraceWriter::Append(const TokenActivations& token) {
  if (!file_) return IoError("appending");
  if (absl::Status s = CheckLayers(token); !s.ok()) return s;
  if (token.token != tokens_) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": token ", token.token, " appended where token ", tokens_, " was expected"));
  }
  ToRecord(token, &record_);
  // The sizes once: AppendToString would compute every packed field's size again.
  const size_t size = record_.ByteSizeLong();
  AppendVarint32(static_cast<uint32_t>(size), &raw_);
  const size_t at = raw_.size();
  raw_.resize(at + size);
  record_.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&raw_[at]));
  ++tokens_;
  if (raw_.size() >= trace_format::kTargetFrameBytes) return FlushFrame();
  return absl::OkStatus();
}

absl::Status TraceWriter::CheckLayers(const TokenActivations& token) const {
  const TraceModelShape& m = header_.model;
  if (static_cast<int>(token.layers.size()) != m.layers) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": token ", token.token, " has ",
                                                   token.layers.size(), " layers, the model ",
                                                   m.layers, " (a token lists every layer)"));
  }
  for (size_t l = 0; l < token.layers.size(); ++l) {
    const LayerActivations& layer = token.layers[l];
    if (layer.layer != l || static_cast<int>(layer.experts.size()) > m.top_k) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": token ", token.token, ", layer ", layer.layer, " at position ", l, " with ",
          layer.experts.size(), " experts (want layer ", l, " and at most ", m.top_k, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status TraceWriter::FlushFrame() {
  if (raw_.empty()) return absl::OkStatus();
  compressed_.resize(ZSTD_compressBound(raw_.size()));
  size_t n =
      ZSTD_compress2(cctx_, compressed_.data(), compressed_.size(), raw_.data(), raw_.size());
  if (ZSTD_isError(n)) {
    return absl::InternalError(absl::StrCat(path_, ": zstd: ", ZSTD_getErrorName(n)));
  }
  std::string frame_header;
  AppendU32(static_cast<uint32_t>(n), &frame_header);
  AppendU32(static_cast<uint32_t>(raw_.size()), &frame_header);
  if (absl::Status s = file_->Write(frame_header); !s.ok()) return s;
  if (absl::Status s = file_->Write({compressed_.data(), n}); !s.ok()) return s;
  raw_.clear();
  return absl::OkStatus();
}

absl::Status TraceWriter::Finish() {
  if (absl::Status s = FlushFrame(); !s.ok()) return s;
  header_.tokens = tokens_;
  if (absl::Status s = WriteHeader(); !s.ok()) return s;
  absl::Status s = file_->Commit();
  file_.reset();
  return s;
}

}  // namespace sparseflash
