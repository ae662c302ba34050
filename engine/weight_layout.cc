#include "engine/weight_layout.h"

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace sparseflash {

absl::StatusOr<LayoutKind> ParseLayout(const std::string& name) {
  if (name == "bundle") return LayoutKind::kBundle;
  if (name == "split-bundle") return LayoutKind::kSplitBundle;
  if (name == "matrix") return LayoutKind::kMatrix;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown layout '", name, "'; known layouts: bundle, split-bundle, matrix"));
}

const char* LayoutName(LayoutKind kind) {
  switch (kind) {
    case LayoutKind::kBundle:
      return "bundle";
    case LayoutKind::kSplitBundle:
      return "split-bundle";
    case LayoutKind::kMatrix:
      return "matrix";
  }
  return "?";
}

absl::StatusOr<NeuronReads> PlanNeuronReads(const ModelSpec& model, const ModelBytes& bytes,
                                            LayoutKind layout, int64_t page_bytes) {
  NeuronReads r;
  const bool gated = model.ffn_type == FfnType::kGated;
  switch (layout) {
    case LayoutKind::kBundle:  // whole pages: the smallest read a block device does
      r.first_bytes = AlignUp(bytes.bundle_flash_bytes, page_bytes);
      r.first_reads = 1;
      return r;
    case LayoutKind::kSplitBundle:
      if (bytes.bundle_flash_bytes != 2 * page_bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("layout split-bundle needs a bundle padded to ", 2 * page_bytes,
                         " bytes; ", model.name, " (", model.quantization.Name(), ") has ",
                         bytes.bundle_flash_bytes, "; use layout=bundle"));
      }
      r.first_bytes = page_bytes;
      r.first_reads = 1;
      r.second_bytes = page_bytes;
      r.second_reads = 1;
      r.second_conditional = true;
      return r;
    case LayoutKind::kMatrix: {
      const int64_t row = AlignUp(bytes.matrix_row_bytes, page_bytes);
      r.first_bytes = row;
      r.first_reads = gated ? 1 : 2;
      if (gated) {
        r.second_bytes = row;
        r.second_reads = 2;
        r.second_conditional = true;
      }
      return r;
    }
  }
  return absl::InternalError("bad layout");
}

}  // namespace sparseflash
