// Real llama.cpp as a measured baseline: the JSON array `llama-bench -o json`
// prints becomes runs of the `llamacpp` strategy in mode "real", one per
// text-generation test (n_gen > 0), with the memory limit and device it ran
// under given by the caller. Prompt-only tests (n_gen = 0) are not decode runs
// and are skipped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reports/results_db.h"

namespace sparseflash {

struct LlamaBenchContext {
  std::string device;         // profile name of the machine it ran on
  std::string model;          // the catalog model the GGUF file stands for
  int64_t memory_bytes = -1;  // the memory limit it ran under; -1 = none
};

// Parses `json_text` (from `origin`, named in errors with the entry index and
// field) into runs; an entry without a needed field, or not an array, is an error.
absl::StatusOr<std::vector<RunRow>> ParseLlamaBench(const std::string& json_text,
                                                    const std::string& origin,
                                                    const LlamaBenchContext& context);

struct ImportCounts {
  int64_t stored = 0, already_stored = 0, skipped_prompt_only = 0;
};

// Reads `path` and stores its runs in `db` in one transaction (all or nothing).
absl::StatusOr<ImportCounts> ImportLlamaBench(ResultsDb& db, const std::string& path,
                                              const LlamaBenchContext& context);

}  // namespace sparseflash
