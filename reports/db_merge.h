// Merges results databases (for example the shards of one sweep) into one.
// A run whose configuration and mode are not yet stored is copied; one stored
// with the same figures is skipped; one stored with different figures is a
// conflict: the merge fails and writes nothing, unless `keep_both` is set, in
// which case the second result is kept under the name of the file it came from.
// Links from a measured run to its prediction are carried over.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reports/results_db.h"

namespace sparseflash {

struct MergeStats {
  int64_t copied = 0, identical = 0, kept_both = 0;
};

absl::StatusOr<MergeStats> MergeDatabases(ResultsDb& out, const std::vector<std::string>& inputs,
                                          bool keep_both);

// Every input is an existing results database (opened read-only, never
// changed) and none is the output file itself.
absl::Status CheckMergeInputs(const std::string& out_path, const std::vector<std::string>& inputs);

}  // namespace sparseflash
