#include "reports/llama_bench_import.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace sparseflash {
namespace {

using nlohmann::json;

absl::Status Missing(const std::string& origin, size_t index, const char* field) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": entry ", index, ": field ", field,
                                                 " is missing or of the wrong type"));
}

// The fields a run needs, checked: numbers where numbers are expected.
absl::StatusOr<RunRow> ToRun(const json& e, size_t index, const std::string& origin,
                             const LlamaBenchContext& c) {
  for (const char* f : {"n_gen", "n_prompt", "n_threads", "avg_ts"}) {
    if (!e.contains(f) || !e[f].is_number()) return Missing(origin, index, f);
  }
  if (!e.contains("model_filename") || !e["model_filename"].is_string()) {
    return Missing(origin, index, "model_filename");
  }
  const double tps = e["avg_ts"].get<double>();
  if (!(tps > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": entry ", index, ": avg_ts must be positive"));
  }
  RunRow r;
  r.mode = "real";
  r.config.device = c.device;
  r.config.model = c.model;
  r.config.strategy = "llamacpp";
  r.config.memory_bytes = c.memory_bytes;
  r.config.threads = e["n_threads"].get<int>();
  r.config.prompt_tokens = e["n_prompt"].get<int>();
  r.config.tokens = e["n_gen"].get<uint64_t>();
  json options = {{"source", "llama-bench"}, {"model_file", e["model_filename"]}};
  for (const char* f : {"model_type", "model_size", "build_commit", "use_mmap", "test_time"}) {
    if (e.contains(f)) options[f] = e[f];
  }
  r.config.options_json = options.dump();
  json figures = {{"decode_tokens_per_s", tps},
                  {"strategy", "llamacpp"},
                  {"device", c.device},
                  {"model", c.model},
                  {"measured_by", "llama-bench"}};
  if (e.contains("stddev_ts") && e["stddev_ts"].is_number()) {
    figures["decode_tokens_per_s_stddev"] = e["stddev_ts"];
  }
  r.figures_json = figures.dump();
  r.decode_tokens_per_s = tps;
  return r;
}

}  // namespace

absl::StatusOr<std::vector<RunRow>> ParseLlamaBench(const std::string& json_text,
                                                    const std::string& origin,
                                                    const LlamaBenchContext& context) {
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a JSON array (expected the output of llama-bench -o json)"));
  }
  std::vector<RunRow> runs;
  for (size_t i = 0; i < doc.size(); ++i) {
    if (!doc[i].is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": entry ", i, " is not an object"));
    }
    absl::StatusOr<RunRow> r = ToRun(doc[i], i, origin, context);
    if (!r.ok()) return r.status();
    runs.push_back(*std::move(r));
  }
  return runs;
}

absl::StatusOr<ImportCounts> ImportLlamaBench(ResultsDb& db, const std::string& path,
                                              const LlamaBenchContext& context) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<RunRow>> runs = ParseLlamaBench(text.str(), path, context);
  if (!runs.ok()) return runs.status();
  ImportCounts counts;
  absl::Status s = db.InTransaction([&]() -> absl::Status {
    for (const RunRow& r : *runs) {
      if (r.config.tokens == 0) {
        ++counts.skipped_prompt_only;
        continue;
      }
      absl::StatusOr<int64_t> id = db.InsertMeasurement(r);
      if (absl::IsAlreadyExists(id.status())) {
        ++counts.already_stored;
      } else if (!id.ok()) {
        return id.status();
      } else {
        ++counts.stored;
      }
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return counts;
}

}  // namespace sparseflash
