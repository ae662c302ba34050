#include "engine/weight_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/atomic_file.h"
#include "common/files.h"
#include "common/random.h"
#include "common/units.h"

namespace sparseflash {
namespace {

constexpr int64_t kHeaderBytes = 4096;
constexpr char kMagic[] = "SFWEIGHT1";

std::string HeaderText(const WeightFileInfo& w) {
  return absl::StrCat(kMagic, "\nmodel ", w.model, "\nquantization ", w.quantization, "\nlayout ",
                      w.layout, "\nneurons ", w.neurons, "\nneuron_stride ", w.neuron_stride,
                      "\nffn_offset ", w.ffn_offset, "\nnon_ffn_offset ", w.non_ffn_offset,
                      "\nnon_ffn_bytes ", w.non_ffn_bytes, "\nfile_bytes ", w.file_bytes, "\n");
}

}  // namespace

WeightFileInfo PlanWeightFile(const ModelSpec& model, LayoutKind layout) {
  const ModelBytes b = ComputeModelBytes(model);
  WeightFileInfo w;
  w.model = model.name;
  w.quantization = model.quantization.Name();
  w.layout = LayoutName(layout);
  w.neurons = b.neurons;
  w.neuron_stride = layout == LayoutKind::kMatrix
                        ? model.ffn_matrices() * AlignUp(b.matrix_row_bytes, 4096)
                        : AlignUp(b.bundle_flash_bytes, 4096);
  w.ffn_offset = kHeaderBytes;
  w.non_ffn_offset = w.ffn_offset + w.neurons * w.neuron_stride;
  w.non_ffn_bytes = AlignUp(b.non_ffn_bytes() + b.ffn_scale_bytes, 4096);
  w.file_bytes = w.non_ffn_offset + w.non_ffn_bytes;
  return w;
}

absl::Status WriteWeightFile(const ModelSpec& model, LayoutKind layout, const std::string& path,
                             bool overwrite,
                             const std::function<void(int64_t, int64_t)>& progress) {
  const WeightFileInfo w = PlanWeightFile(model, layout);
  absl::StatusOr<std::unique_ptr<AtomicFile>> file =
      AtomicFile::Create(path, {.overwrite = overwrite});
  if (!file.ok()) return file.status();
  std::vector<char> header(kHeaderBytes, 0);
  const std::string text = HeaderText(w);
  std::memcpy(header.data(), text.data(), std::min<size_t>(text.size(), kHeaderBytes));
  if (absl::Status s = (*file)->Write({header.data(), header.size()}); !s.ok()) return s;
  std::vector<uint64_t> chunk((4 << 20) / 8);
  Random rng(MixSeed(1, w.neurons));
  int64_t done = kHeaderBytes;
  while (done < w.file_bytes) {
    for (uint64_t& v : chunk) v = rng.Next();
    const int64_t n = std::min<int64_t>(chunk.size() * 8, w.file_bytes - done);
    absl::Status s =
        (*file)->Write({reinterpret_cast<const char*>(chunk.data()), static_cast<size_t>(n)});
    if (!s.ok()) return s;
    done += n;
    if (progress) progress(done, w.file_bytes);
  }
  return (*file)->Commit();
}

absl::StatusOr<WeightFileInfo> ParseWeightFileHeader(absl::string_view bytes,
                                                     const std::string& origin) {
  const std::string text(bytes.data(), strnlen(bytes.data(), bytes.size()));
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.empty() || lines[0] != kMagic) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a sparseflash weight file (header magic missing)"));
  }
  WeightFileInfo w;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> kv = absl::StrSplit(lines[i], absl::MaxSplits(' ', 1));
    if (kv.size() != 2) continue;
    int64_t* num = kv[0] == "neurons"          ? &w.neurons
                   : kv[0] == "neuron_stride"  ? &w.neuron_stride
                   : kv[0] == "ffn_offset"     ? &w.ffn_offset
                   : kv[0] == "non_ffn_offset" ? &w.non_ffn_offset
                   : kv[0] == "non_ffn_bytes"  ? &w.non_ffn_bytes
                   : kv[0] == "file_bytes"     ? &w.file_bytes
                                               : nullptr;
    if (num != nullptr && (!absl::SimpleAtoi(kv[1], num) || *num < 0 || *num > kMaxByteSize)) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": header field ", kv[0], " '", kv[1], "' is not a size"));
    }
    if (kv[0] == "model") w.model = kv[1];
    if (kv[0] == "quantization") w.quantization = kv[1];
    if (kv[0] == "layout") w.layout = kv[1];
  }
  if (w.neuron_stride <= 0 || w.neuron_stride % 4096 != 0 || w.ffn_offset < kHeaderBytes ||
      w.neurons > kMaxByteSize / w.neuron_stride ||
      w.non_ffn_offset != w.ffn_offset + w.neurons * w.neuron_stride ||
      w.file_bytes != w.non_ffn_offset + w.non_ffn_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": header sizes are inconsistent (neurons x neuron_stride, offsets, file_bytes)"));
  }
  return w;
}

absl::StatusOr<WeightFileInfo> ReadWeightFileInfo(const std::string& path) {
  if (IsDirectory(path)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory; expected a weight file"));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open weight file"));
  std::vector<char> header(kHeaderBytes, 0);
  const size_t got = std::fread(header.data(), 1, header.size(), f);
  std::fclose(f);
  return ParseWeightFileHeader({header.data(), got}, path);
}

absl::Status MatchModelToWeightFile(const std::string& path, const std::string& quant_flag,
                                    ModelSpec* model) {
  absl::StatusOr<WeightFileInfo> w = ReadWeightFileInfo(path);
  if (!w.ok()) return w.status();
  if (w->model != model->name) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header.model is ", w->model, ", not ",
                                                   model->name,
                                                   " (--model names the file's model)"));
  }
  if (!quant_flag.empty() && quant_flag != w->quantization) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": header.quantization is ", w->quantization, ", not ", quant_flag,
        " as --quant says: drop --quant or make the file with weights make --quant ", quant_flag));
  }
  if (absl::Status s = ParseQuantization(w->quantization, &model->quantization); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header.quantization: ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<WeightFileInfo> ReadWeightFileHeader(const std::string& path,
                                                    const ModelSpec& model) {
  absl::StatusOr<WeightFileInfo> parsed = ReadWeightFileInfo(path);
  if (!parsed.ok()) return parsed.status();
  const WeightFileInfo& w = *parsed;
  absl::StatusOr<LayoutKind> layout = ParseLayout(w.layout);
  if (!layout.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header.layout: ", layout.status().message()));
  const WeightFileInfo want = PlanWeightFile(model, *layout);
  if (w.model != want.model || w.quantization != want.quantization) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header.model is ", w.model, " (",
                                                   w.quantization, "), not ", want.model, " (",
                                                   want.quantization, ")"));
  }
  if (w.neurons != want.neurons || w.neuron_stride != want.neuron_stride ||
      w.file_bytes != want.file_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": header sizes do not match ", model.name, " (neurons ", w.neurons, " vs ",
        want.neurons, ", stride ", w.neuron_stride, " vs ", want.neuron_stride, ")"));
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || static_cast<int64_t>(size) != w.file_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file is ", ec ? 0 : size,
                                                   " bytes; its header says ", w.file_bytes,
                                                   " (truncated or damaged)"));
  }
  return w;
}

}  // namespace sparseflash
