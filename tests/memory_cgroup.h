// A memory cgroup for tests that must run a process under a hard memory limit,
// as a phone's app limit is: created under this process's own cgroup (v1's
// memory hierarchy or v2's unified one), with swap barred, and removed when
// destroyed. Creating one needs the right to write there (root in most
// containers); Create says why when it cannot.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace sparseflash::testing {

class MemoryCgroup {
 public:
  static absl::StatusOr<std::unique_ptr<MemoryCgroup>> Create(int64_t limit_bytes);
  ~MemoryCgroup();

  // Moves process `pid` into the group (a child, before it execs).
  absl::Status Add(pid_t pid) const;
  // Highest usage charged to the group so far; -1 where the kernel keeps none.
  int64_t PeakBytes() const;
  // Processes of the group the OOM killer has killed.
  int64_t OomKills() const;

 private:
  MemoryCgroup(std::string dir, bool v2) : dir_(std::move(dir)), v2_(v2) {}
  std::string dir_;
  bool v2_;
};

}  // namespace sparseflash::testing
