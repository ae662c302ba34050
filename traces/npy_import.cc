#include "traces/npy_import.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/files.h"

namespace sparseflash {
namespace {

enum class Kind { kMask, kFloat };

struct Dtype {
  const char* descr;
  int item;
  Kind kind;
};

constexpr Dtype kDtypes[] = {
    {"|b1", 1, Kind::kMask}, {"|u1", 1, Kind::kMask}, {"|i1", 1, Kind::kMask},
    {"<u2", 2, Kind::kMask}, {"<i2", 2, Kind::kMask}, {"<u4", 4, Kind::kMask},
    {"<i4", 4, Kind::kMask}, {"<u8", 8, Kind::kMask}, {"<i8", 8, Kind::kMask},
    {"<f2", 2, Kind::kFloat}, {"<f4", 4, Kind::kFloat}, {"<f8", 8, Kind::kFloat},
};
constexpr char kKnownDtypes[] =
    "bool, int8/16/32/64, uint8/16/32/64 (masks), float16/32/64 (with --threshold)";

struct NpyFile {
  std::string path;
  std::unique_ptr<std::istream> owned;  // the file, when opened by path
  std::istream* in = nullptr;
  int64_t rows = 0, cols = 0;
  Dtype dtype{};
  std::vector<char> row;
};

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

// The text between the quotes after `key` ("'descr': '<f4'" gives <f4).
bool QuotedValue(const std::string& header, const std::string& key, std::string* out) {
  size_t at = header.find(key);
  if (at == std::string::npos) return false;
  const size_t open = header.find('\'', at + key.size());
  const size_t close = open == std::string::npos ? open : header.find('\'', open + 1);
  if (close == std::string::npos) return false;
  *out = header.substr(open + 1, close - open - 1);
  return true;
}

// "'shape': (rows, cols)" with an optional trailing comma; false for other ranks.
bool Shape2D(const std::string& header, int64_t* rows, int64_t* cols) {
  const size_t at = header.find("'shape':");
  if (at == std::string::npos) return false;
  const size_t open = header.find('(', at), close = header.find(')', at);
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  std::vector<std::string> parts =
      absl::StrSplit(header.substr(open + 1, close - open - 1), ',', absl::SkipWhitespace());
  return parts.size() == 2 && absl::SimpleAtoi(parts[0], rows) &&
         absl::SimpleAtoi(parts[1], cols) && *rows >= 0 && *cols >= 0;
}

absl::StatusOr<std::string> ReadHeader(NpyFile* f) {
  char magic[8];
  if (!f->in->read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return Bad(f->path, "not a .npy file (bad magic)");
  }
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t len16 = 0;
    f->in->read(reinterpret_cast<char*>(&len16), 2);
    header_len = len16;
  } else {
    f->in->read(reinterpret_cast<char*>(&header_len), 4);
  }
  if (!*f->in || header_len > 65536) return Bad(f->path, "corrupt .npy header length");
  std::string header(header_len, '\0');
  if (!f->in->read(header.data(), header_len)) return Bad(f->path, "truncated .npy header");
  return header;
}

// Parses the header of f->in and checks it against the model before allocating a row.
absl::Status ParseNpyHeader(NpyFile* f, int64_t want_cols) {
  absl::StatusOr<std::string> header = ReadHeader(f);
  if (!header.ok()) return header.status();
  std::string descr;
  if (!QuotedValue(*header, "'descr':", &descr)) {
    return Bad(f->path, "no 'descr' in .npy header");
  }
  const Dtype* dtype = nullptr;
  for (const Dtype& d : kDtypes) {
    if (descr == d.descr) dtype = &d;
  }
  if (dtype == nullptr) {
    return Bad(f->path, absl::StrCat("dtype '", descr, "' not supported; known: ", kKnownDtypes));
  }
  f->dtype = *dtype;
  if (header->find("'fortran_order': True") != std::string::npos) {
    return Bad(f->path, "Fortran-order arrays are not supported; save with C order");
  }
  if (!Shape2D(*header, &f->rows, &f->cols)) {
    return Bad(f->path, "expected a 2-D array of shape (tokens, neurons)");
  }
  if (f->cols != want_cols) {
    return Bad(f->path, absl::StrCat("has ", f->cols, " neurons per row, the model has ",
                                     want_cols));
  }
  f->row.resize(f->cols * f->dtype.item);
  return absl::OkStatus();
}

double FloatAt(const NpyFile& f, int64_t i) {
  const char* p = &f.row[i * f.dtype.item];
  if (f.dtype.item == 8) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (f.dtype.item == 4) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  uint16_t h;  // IEEE half
  std::memcpy(&h, p, 2);
  const int exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  const double mag = exp == 0    ? std::ldexp(frac, -24)
                     : exp == 31 ? (frac ? NAN : INFINITY)
                                 : std::ldexp(1024 + frac, exp - 25);
  return (h & 0x8000) ? -mag : mag;
}

bool NonZero(const NpyFile& f, int64_t i) {
  const char* p = &f.row[i * f.dtype.item];
  for (int b = 0; b < f.dtype.item; ++b) {
    if (p[b] != 0) return true;
  }
  return false;
}

void RowToIds(const NpyFile& f, double threshold, std::vector<uint32_t>* ids) {
  ids->clear();
  for (int64_t i = 0; i < f.cols; ++i) {
    const bool on =
        f.dtype.kind == Kind::kFloat ? std::fabs(FloatAt(f, i)) > threshold : NonZero(f, i);
    if (on) ids->push_back(static_cast<uint32_t>(i));
  }
}

absl::Status CheckFloatThreshold(const NpyFile& f, double threshold) {
  if (f.dtype.kind != Kind::kFloat) return absl::OkStatus();
  if (!(threshold >= 0) || !std::isfinite(threshold)) {
    return Bad(f.path, absl::StrCat("holds ", f.dtype.descr,
                                    " activation values, not a mask: give --threshold T (a "
                                    "neuron is active when |value| > T; 0 keeps every non-zero)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::unique_ptr<NpyFile>>> OpenAll(
    const std::vector<std::string>& layer_files, const TraceModelShape& shape, double threshold) {
  std::vector<std::unique_ptr<NpyFile>> files;
  for (const std::string& p : layer_files) {
    auto f = std::make_unique<NpyFile>();
    f->path = p;
    if (IsDirectory(p)) return Bad(p, "is a directory; expected a .npy file");
    f->owned = std::make_unique<std::ifstream>(p, std::ios::binary);
    f->in = f->owned.get();
    if (!*f->in) return absl::NotFoundError(absl::StrCat(p, ": cannot open"));
    if (absl::Status s = ParseNpyHeader(f.get(), shape.d_ffn); !s.ok()) return s;
    if (absl::Status s = CheckFloatThreshold(*f, threshold); !s.ok()) return s;
    if (!files.empty() && f->rows != files[0]->rows) {
      return Bad(p, absl::StrCat("has ", f->rows, " tokens, ", files[0]->path, " has ",
                                 files[0]->rows));
    }
    files.push_back(std::move(f));
  }
  return files;
}

}  // namespace

absl::Status ForEachNpyRow(std::istream& in, const std::string& origin, int64_t neurons,
                           double threshold,
                           const std::function<void(const std::vector<uint32_t>&)>& row) {
  NpyFile f;
  f.path = origin;
  f.in = &in;
  if (absl::Status s = ParseNpyHeader(&f, neurons); !s.ok()) return s;
  if (absl::Status s = CheckFloatThreshold(f, threshold); !s.ok()) return s;
  std::vector<uint32_t> ids;
  for (int64_t t = 0; t < f.rows; ++t) {
    if (!in.read(f.row.data(), f.row.size())) {
      return Bad(origin, absl::StrCat("truncated at token ", t, " of ", f.rows));
    }
    RowToIds(f, threshold, &ids);
    row(ids);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ImportNpyMasks(const std::vector<std::string>& layer_files,
                                        const TraceModelShape& shape,
                                        const TraceProvenance& provenance,
                                        const std::string& out_path,
                                        const NpyImportOptions& options) {
  if (shape.experts > 1) {
    return absl::InvalidArgumentError("npy import supports dense models only");
  }
  if (static_cast<int>(layer_files.size()) != shape.layers) {
    return absl::InvalidArgumentError(absl::StrCat("model '", shape.name, "' has ", shape.layers,
                                                   " layers but ", layer_files.size(),
                                                   " .npy files were given (one per layer)"));
  }
  absl::StatusOr<std::vector<std::unique_ptr<NpyFile>>> files =
      OpenAll(layer_files, shape, options.threshold);
  if (!files.ok()) return files.status();
  TraceHeader header{shape, provenance, 0, false, false};
  if (options.threshold >= 0) {
    header.provenance.parameters["threshold"] = absl::StrCat(options.threshold);
  }
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer =
      TraceWriter::Create(out_path, header, options.writer);
  if (!writer.ok()) return writer.status();
  TokenActivations token;
  token.layers.resize(shape.layers);
  const int64_t rows = (*files)[0]->rows;
  for (int64_t t = 0; t < rows; ++t) {
    token.token = t;
    for (int l = 0; l < shape.layers; ++l) {
      NpyFile& f = *(*files)[l];
      if (!f.in->read(f.row.data(), f.row.size())) {
        return Bad(f.path, absl::StrCat("truncated at token ", t, " of ", rows));
      }
      token.layers[l].layer = l;
      token.layers[l].experts.resize(1);
      RowToIds(f, options.threshold, &token.layers[l].experts[0].active);
    }
    if (absl::Status s = (*writer)->Append(token); !s.ok()) return s;
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) return s;
  return static_cast<uint64_t>(rows);
}

}  // namespace sparseflash
