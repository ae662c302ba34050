#include "engine/real/tiny_record.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "traces/trace_writer.h"

namespace sparseflash {

absl::Status WriteTinyTrace(const TinyModel& model, const TinyGenerateResult& run,
                            const std::string& prompt, const std::string& path, bool overwrite) {
  if (!overwrite && std::filesystem::exists(path)) {
    return absl::AlreadyExistsError(absl::StrCat(path, " exists; use --force to replace it"));
  }
  const TinyConfig& c = model.config();
  TraceHeader h;
  h.model = {"tinystories-relu-260k", c.layers, c.hidden, 1, 1, true};
  h.provenance.recorded_from = "tinystories-relu-260k (real model, greedy decoding)";
  h.provenance.inputs = prompt.empty() ? "(BOS only)" : prompt;
  h.provenance.tool = "sparseflash trace record";
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, h);
  if (!writer.ok()) return writer.status();
  for (size_t pos = 0; pos < run.output.active.size(); ++pos) {
    TokenActivations t;
    t.token = pos;
    for (int l = 0; l < c.layers; ++l) {
      LayerActivations layer;
      layer.layer = l;
      layer.experts.push_back(NeuronSet{.expert = 0, .active = run.output.active[pos][l]});
      t.layers.push_back(std::move(layer));
    }
    if (absl::Status s = (*writer)->Append(t); !s.ok()) return s;
  }
  return (*writer)->Finish();
}

}  // namespace sparseflash
