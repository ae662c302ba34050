#include "reports/db_merge.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace sparseflash {
namespace {

using RowKey = std::tuple<std::string, std::string, std::string>;  // key, mode, origin

RowKey KeyOf(const RunRow& r) { return {r.config.Key(), r.mode, r.origin}; }

bool SameResult(const RunRow& a, const RunRow& b) {
  return a.figures_json == b.figures_json && a.token_latency_ms == b.token_latency_ms;
}

class Merger {
 public:
  Merger(ResultsDb& out, bool keep_both) : out_(out), keep_both_(keep_both) {}

  absl::Status LoadExisting() {
    absl::StatusOr<std::vector<RunRow>> rows = out_.ReadRuns();
    if (!rows.ok()) return rows.status();
    for (RunRow& r : *rows) stored_.emplace(KeyOf(r), std::move(r));
    return absl::OkStatus();
  }

  absl::Status MergeFile(const std::string& path) {
    absl::StatusOr<std::unique_ptr<ResultsDb>> in = ResultsDb::OpenForReading(path);
    if (!in.ok()) return in.status();
    absl::StatusOr<std::vector<RunRow>> rows = (*in)->ReadRuns();
    if (!rows.ok()) return rows.status();
    std::map<int64_t, int64_t> new_id;  // id in `path` -> id in the output
    for (RunRow& r : *rows) {           // ids ascend, so a prediction precedes its measurement
      const int64_t old_id = r.id;
      r.linked_run = r.linked_run > 0 && new_id.count(r.linked_run) ? new_id[r.linked_run] : 0;
      absl::StatusOr<int64_t> id = MergeRow(path, r);
      if (!id.ok()) return id.status();
      new_id[old_id] = *id;
    }
    return absl::OkStatus();
  }

  const MergeStats& stats() const { return stats_; }

 private:
  absl::StatusOr<int64_t> MergeRow(const std::string& path, RunRow& r) {
    auto it = stored_.find(KeyOf(r));
    if (it != stored_.end()) {
      if (SameResult(it->second, r)) {
        ++stats_.identical;
        return it->second.id;
      }
      if (!keep_both_) {
        return absl::AlreadyExistsError(
            absl::StrCat(path, ": run ", r.id, " (", r.config.strategy, " on ", r.config.device,
                         ", ", r.config.model, ", ", r.mode, ", key ", r.config.Key(),
                         ") has different figures from ", out_.path(), " run ", it->second.id,
                         "; nothing was merged (pass --keep-both to keep both results)"));
      }
      r.origin = std::filesystem::path(path).filename().string();
      if (stored_.count(KeyOf(r))) {
        return absl::AlreadyExistsError(
            absl::StrCat(path, ": run ", r.id, " was already merged from a file of this name"));
      }
      ++stats_.kept_both;
    } else {
      ++stats_.copied;
    }
    absl::StatusOr<int64_t> id = out_.Insert(r);
    if (!id.ok()) return id.status();
    r.id = *id;
    stored_.emplace(KeyOf(r), r);
    return *id;
  }

  ResultsDb& out_;
  bool keep_both_;
  std::map<RowKey, RunRow> stored_;
  MergeStats stats_;
};

// Whether two paths name one file (same device and inode).
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

absl::Status CheckMergeInputs(const std::string& out_path, const std::vector<std::string>& inputs) {
  for (const std::string& path : inputs) {
    if (SameFile(path, out_path)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": is the output database itself; merge other files into it"));
    }
    absl::StatusOr<std::unique_ptr<ResultsDb>> in = ResultsDb::OpenForReading(path);
    if (!in.ok()) return in.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<MergeStats> MergeDatabases(ResultsDb& out, const std::vector<std::string>& inputs,
                                          bool keep_both) {
  if (absl::Status s = CheckMergeInputs(out.path(), inputs); !s.ok()) return s;
  Merger merger(out, keep_both);
  absl::Status s = out.InTransaction([&]() -> absl::Status {
    if (absl::Status loaded = merger.LoadExisting(); !loaded.ok()) return loaded;
    for (const std::string& path : inputs) {
      if (absl::Status m = merger.MergeFile(path); !m.ok()) return m;
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return merger.stats();
}

}  // namespace sparseflash
