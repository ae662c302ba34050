#include "traces/npy_import.h"

#include <cstring>
#include <fstream>
#include <memory>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "traces/trace_writer.h"

namespace sparseflash {
namespace {

struct NpyFile {
  std::string path;
  std::ifstream in;
  int64_t rows = 0, cols = 0;
  int item = 1;          // bytes per element
  bool is_float = false;
  std::vector<char> row;
};

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

absl::Status OpenNpy(NpyFile* f) {
  f->in.open(f->path, std::ios::binary);
  if (!f->in) return absl::NotFoundError(absl::StrCat(f->path, ": cannot open"));
  char magic[8];
  if (!f->in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return Bad(f->path, "not a .npy file (bad magic)");
  }
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t len16 = 0;
    f->in.read(reinterpret_cast<char*>(&len16), 2);
    header_len = len16;
  } else {
    f->in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  if (!f->in || header_len > 65536) return Bad(f->path, "corrupt .npy header length");
  std::string header(header_len, '\0');
  if (!f->in.read(header.data(), header_len)) return Bad(f->path, "truncated .npy header");
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'"))) {
    return Bad(f->path, "no 'descr' in .npy header");
  }
  const std::string descr = m[1];
  if (descr == "|b1" || descr == "|u1" || descr == "|i1") {
    f->item = 1;
  } else if (descr == "<f4") {
    f->item = 4;
    f->is_float = true;
  } else {
    return Bad(f->path, absl::StrCat("dtype '", descr, "' not supported (bool, uint8, int8, float32)"));
  }
  if (header.find("'fortran_order': True") != std::string::npos) {
    return Bad(f->path, "Fortran-order arrays are not supported; save with C order");
  }
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\((\\d+),\\s*(\\d+),?\\s*\\)")) ||
      !absl::SimpleAtoi(m[1].str(), &f->rows) || !absl::SimpleAtoi(m[2].str(), &f->cols)) {
    return Bad(f->path, "expected a 2-D array of shape (tokens, neurons)");
  }
  f->row.resize(f->cols * f->item);
  return absl::OkStatus();
}

void RowToIds(const NpyFile& f, std::vector<uint32_t>* ids) {
  ids->clear();
  for (int64_t i = 0; i < f.cols; ++i) {
    bool on;
    if (f.is_float) {
      float v;
      std::memcpy(&v, &f.row[i * 4], 4);
      on = v != 0;
    } else {
      on = f.row[i] != 0;
    }
    if (on) ids->push_back(static_cast<uint32_t>(i));
  }
}

}  // namespace

absl::Status ImportNpyMasks(const std::vector<std::string>& layer_files,
                            const TraceModelShape& shape, const TraceProvenance& provenance,
                            const std::string& out_path) {
  if (shape.experts > 1) {
    return absl::InvalidArgumentError("npy import supports dense models only");
  }
  if (static_cast<int>(layer_files.size()) != shape.layers) {
    return absl::InvalidArgumentError(absl::StrCat("model '", shape.name, "' has ", shape.layers,
                                                   " layers but ", layer_files.size(),
                                                   " .npy files were given (one per layer)"));
  }
  std::vector<std::unique_ptr<NpyFile>> files;
  for (const std::string& p : layer_files) {
    auto f = std::make_unique<NpyFile>();
    f->path = p;
    if (absl::Status s = OpenNpy(f.get()); !s.ok()) return s;
    if (f->cols != shape.d_ffn) {
      return Bad(p, absl::StrCat("has ", f->cols, " neurons per row, model has ", shape.d_ffn));
    }
    if (!files.empty() && f->rows != files[0]->rows) {
      return Bad(p, absl::StrCat("has ", f->rows, " tokens, ", files[0]->path, " has ",
                                 files[0]->rows));
    }
    files.push_back(std::move(f));
  }
  TraceHeader header{shape, provenance, 0, false, false};
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(out_path, header);
  if (!writer.ok()) return writer.status();
  TokenActivations token;
  token.layers.resize(shape.layers);
  for (int64_t t = 0; t < files[0]->rows; ++t) {
    token.token = t;
    for (int l = 0; l < shape.layers; ++l) {
      NpyFile& f = *files[l];
      if (!f.in.read(f.row.data(), f.row.size())) {
        return Bad(f.path, absl::StrCat("truncated at token ", t));
      }
      token.layers[l].layer = l;
      token.layers[l].experts.resize(1);
      RowToIds(f, &token.layers[l].experts[0].active);
    }
    if (absl::Status s = (*writer)->Append(token); !s.ok()) return s;
  }
  return (*writer)->Finish();
}

}  // namespace sparseflash
