#include "traces/shape_limits.h"

#include "absl/strings/str_cat.h"

namespace sparseflash {

std::string ShapeLimitError(int64_t layers, int64_t d_ffn, int64_t experts, int64_t top_k) {
  if (layers < 1 || layers > kMaxLayers) {
    return absl::StrCat("layers ", layers, " not in [1, ", kMaxLayers, "]");
  }
  if (d_ffn < 1 || d_ffn > kMaxNeuronsPerExpert) {
    return absl::StrCat("d_ffn ", d_ffn, " not in [1, ", kMaxNeuronsPerExpert, "]");
  }
  if (experts < 1 || experts > kMaxExperts) {
    return absl::StrCat("experts ", experts, " not in [1, ", kMaxExperts, "]");
  }
  if (top_k < 1 || top_k > experts) {
    return absl::StrCat("top_k ", top_k, " not in [1, experts = ", experts, "]");
  }
  if (layers * experts * d_ffn > kMaxNeuronKeys) {
    return absl::StrCat("layers x experts x d_ffn = ", layers * experts * d_ffn,
                        " neurons, over the limit of ", kMaxNeuronKeys);
  }
  return "";
}

}  // namespace sparseflash
