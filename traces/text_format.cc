#include "traces/text_format.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "traces/trace_writer.h"

namespace sparseflash {
namespace {

class TextImporter {
 public:
  TextImporter(std::string path, const TraceModelShape& shape)
      : path_(std::move(path)), shape_(shape) {}

  absl::Status Line(const std::string& line, const TokenSink& emit);
  absl::Status Flush(const TokenSink& emit);

  int line_no = 0;

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", line_no, ": ", what));
  }
  NeuronSet* SetFor(uint32_t layer, uint32_t expert);

  std::string path_;
  TraceModelShape shape_;
  TokenActivations token_;
  int64_t current_ = -1;
};

NeuronSet* TextImporter::SetFor(uint32_t layer, uint32_t expert) {
  for (LayerActivations& l : token_.layers) {
    if (l.layer != layer) continue;
    for (NeuronSet& s : l.experts) {
      if (s.expert == expert) return &s;
    }
    l.experts.push_back({expert, {}, {}, {}});
    return &l.experts.back();
  }
  token_.layers.push_back({layer, {{expert, {}, {}, {}}}});
  return &token_.layers.back().experts.back();
}

absl::Status TextImporter::Flush(const TokenSink& emit) {
  if (current_ < 0) return absl::OkStatus();
  // A layer without lines had no active neurons: it is listed, empty.
  for (int l = 0; l < shape_.layers; ++l) {
    const bool listed = std::any_of(token_.layers.begin(), token_.layers.end(),
                                    [&](const LayerActivations& a) { return a.layer == uint32_t(l); });
    if (listed) continue;
    token_.layers.push_back({static_cast<uint32_t>(l), {}});
    if (shape_.experts == 1) token_.layers.back().experts.push_back({0, {}, {}, {}});
  }
  std::sort(token_.layers.begin(), token_.layers.end(),
            [](const auto& a, const auto& b) { return a.layer < b.layer; });
  for (LayerActivations& l : token_.layers) {
    std::sort(l.experts.begin(), l.experts.end(),
              [](const auto& a, const auto& b) { return a.expert < b.expert; });
  }
  for (const LayerActivations& l : token_.layers) {
    if (static_cast<int>(l.experts.size()) > shape_.top_k) {
      return Error(absl::StrCat("token ", current_, ", layer ", l.layer, ": ", l.experts.size(),
                                " experts, the model routes to ", shape_.top_k));
    }
  }
  absl::Status s = emit(token_);
  token_.layers.clear();
  return s;
}

absl::Status TextImporter::Line(const std::string& line, const TokenSink& emit) {
  std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipWhitespace());
  if (f.empty() || f[0][0] == '#' || f[0] == "T") return absl::OkStatus();
  if (f[0] != "A" && f[0] != "P" && f[0] != "G") {
    return Error(absl::StrCat("unknown record '", f[0], "' (expected A, P, G or T)"));
  }
  if (f.size() < 3) return Error("expected '<kind> <token> <layer> ids...'");
  int64_t token = 0;
  uint32_t layer = 0, expert = 0;
  std::vector<absl::string_view> le = absl::StrSplit(f[2], ':');
  if (!absl::SimpleAtoi(f[1], &token) || !absl::SimpleAtoi(le[0], &layer) ||
      (le.size() == 2 && !absl::SimpleAtoi(le[1], &expert)) || le.size() > 2) {
    return Error("bad token or layer number");
  }
  if (layer >= static_cast<uint32_t>(shape_.layers)) {
    return Error(absl::StrCat("layer ", layer, " out of range (model has ", shape_.layers, ")"));
  }
  if (expert >= static_cast<uint32_t>(shape_.experts)) {
    return Error(absl::StrCat("expert ", expert, " out of range"));
  }
  if (token != current_) {
    if (token != current_ + 1) {
      return Error(absl::StrCat("token ", token, " follows token ", current_,
                                "; tokens must be contiguous and in order"));
    }
    if (absl::Status s = Flush(emit); !s.ok()) return s;
    current_ = token;
    token_.token = static_cast<uint64_t>(token);
  }
  NeuronSet* set = SetFor(layer, expert);
  std::vector<uint32_t>& ids =
      f[0] == "A" ? set->active : (f[0] == "P" ? set->predicted : set->gate_only);
  for (size_t i = 3; i < f.size(); ++i) {
    uint32_t id = 0;
    if (!absl::SimpleAtoi(f[i], &id) || id >= static_cast<uint32_t>(shape_.d_ffn)) {
      return Error(absl::StrCat("neuron id '", f[i], "' is not in [0, ", shape_.d_ffn, ")"));
    }
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return absl::OkStatus();
}

void WriteIds(std::string& out, char kind, uint64_t token, const LayerActivations& l,
              const NeuronSet& s, const std::vector<uint32_t>& ids, bool moe) {
  absl::StrAppend(&out, std::string(1, kind), " ", token, " ", l.layer);
  if (moe) absl::StrAppend(&out, ":", s.expert);
  for (uint32_t id : ids) absl::StrAppend(&out, " ", id);
  out += '\n';
}

}  // namespace

absl::Status ParseTextTrace(std::istream& in, const std::string& origin,
                            const TraceModelShape& shape, const TokenSink& emit) {
  TextImporter importer(origin, shape);
  for (std::string line; std::getline(in, line);) {
    ++importer.line_no;
    if (absl::Status s = importer.Line(line, emit); !s.ok()) return s;
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(origin, ": read error"));
  return importer.Flush(emit);
}

absl::Status ImportTextTrace(const std::string& in_path, const TraceModelShape& shape,
                             const TraceProvenance& provenance, const std::string& out_path,
                             const TraceWriterOptions& options) {
  if (IsDirectory(in_path)) {
    return absl::InvalidArgumentError(absl::StrCat(in_path, ": is a directory; expected a text trace"));
  }
  std::ifstream in(in_path);
  if (!in) return absl::NotFoundError(absl::StrCat(in_path, ": cannot open"));
  TraceHeader header{shape, provenance, 0, false, false};
  // Scan once for the optional record kinds so the header can announce them.
  for (std::string line; std::getline(in, line);) {
    header.has_predicted |= line.starts_with("P ");
    header.has_gate_only |= line.starts_with("G ");
  }
  in.clear();
  in.seekg(0);
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer =
      TraceWriter::Create(out_path, header, options);
  if (!writer.ok()) return writer.status();
  absl::Status s = ParseTextTrace(in, in_path, shape, [&](const TokenActivations& t) {
    return (*writer)->Append(t);
  });
  if (!s.ok()) return s;
  return (*writer)->Finish();
}

absl::Status ExportTextTrace(TraceReader& reader, const TextSink& sink) {
  const TraceHeader& h = reader.header();
  const bool moe = h.model.experts > 1;
  std::string out = absl::StrCat("# sparseflash trace: model ", h.model.name, ", ",
                                 h.model.layers, " layers, ", h.model.d_ffn, " neurons",
                                 moe ? " per expert" : "", ", ", h.tokens, " tokens\n");
  if (absl::Status s = sink(out); !s.ok()) return s;
  TokenActivations t;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&t);
    if (!more.ok() || !*more) return more.status();
    out.clear();
    for (const LayerActivations& l : t.layers) {
      for (const NeuronSet& s : l.experts) {
        WriteIds(out, 'A', t.token, l, s, s.active, moe);
        if (h.has_predicted) WriteIds(out, 'P', t.token, l, s, s.predicted, moe);
        if (h.has_gate_only) WriteIds(out, 'G', t.token, l, s, s.gate_only, moe);
      }
    }
    if (absl::Status s = sink(out); !s.ok()) return s;
  }
}

}  // namespace sparseflash
