// The catalog of models sparseflash knows: shapes, quantization, predictor and
// generator profiles, compiled into the binary from traces/models/*.textproto.
// A user may also load a model file of their own. Immutable after construction;
// thread-safe for reading.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/named_catalog.h"
#include "traces/model_spec.h"

namespace sparseflash {

class ModelCatalog {
 public:
  // The built-in catalog (parsed once, on first use).
  static const ModelCatalog& Builtin();

  // The model named `name`, or an error listing the known names.
  absl::StatusOr<ModelSpec> Find(const std::string& name) const { return models_.Find(name); }
  const std::vector<ModelSpec>& models() const { return models_.items(); }
  std::vector<std::string> Names() const { return models_.Names(); }

  // Parses one ModelSpec text proto (as in traces/models/); `source` names it in errors.
  static absl::StatusOr<ModelSpec> Parse(const std::string& text, const std::string& source);

 private:
  NamedCatalog<ModelSpec> models_{"model"};
};

// A catalog name or a path to a .textproto model file.
absl::StatusOr<ModelSpec> LoadModel(const std::string& name_or_path);

}  // namespace sparseflash
