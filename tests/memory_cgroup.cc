#include "tests/memory_cgroup.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sparseflash::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

// The value of `key` in a "key value" per line file (memory.events, memory.oom_control).
int64_t KeyedValue(const std::string& path, const std::string& key) {
  for (absl::string_view line : absl::StrSplit(ReadFile(path), '\n')) {
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() == 2 && parts[0] == key) return std::stoll(parts[1]);
  }
  return 0;
}

// This process's cgroup path in the hierarchy whose /proc/self/cgroup line
// names `controllers` ("memory" for v1, "" for v2).
std::string OwnPath(const std::string& controllers) {
  for (absl::string_view line : absl::StrSplit(ReadFile("/proc/self/cgroup"), '\n')) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    for (absl::string_view c : absl::StrSplit(parts[1], ',')) {
      if (c == controllers) return parts[2];
    }
    if (controllers.empty() && parts[1].empty()) return parts[2];
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<MemoryCgroup>> MemoryCgroup::Create(int64_t limit_bytes) {
  const std::string name = absl::StrCat("sparseflash-test-", getpid());
  std::error_code ec;
  const std::string v1_root = "/sys/fs/cgroup/memory";
  if (std::filesystem::exists(v1_root + "/memory.limit_in_bytes", ec)) {
    const std::string dir = absl::StrCat(v1_root, OwnPath("memory"), "/", name);
    if (!std::filesystem::create_directory(dir, ec) && ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot create the cgroup ", dir, ": ", ec.message()));
    }
    std::unique_ptr<MemoryCgroup> g(new MemoryCgroup(dir, false));
    if (!WriteFile(dir + "/memory.limit_in_bytes", absl::StrCat(limit_bytes))) {
      return absl::UnavailableError("cannot set memory.limit_in_bytes in " + dir);
    }
    // Swap may not stand in for memory (only where swap accounting exists).
    if (std::filesystem::exists(dir + "/memory.memsw.limit_in_bytes", ec)) {
      WriteFile(dir + "/memory.memsw.limit_in_bytes", absl::StrCat(limit_bytes));
    }
    WriteFile(dir + "/memory.swappiness", "0");
    return g;
  }
  const std::string v2_root = "/sys/fs/cgroup";
  if (ReadFile(v2_root + "/cgroup.controllers").find("memory") == std::string::npos) {
    return absl::UnavailableError(
        "no memory cgroup controller (neither v1 nor v2) on this machine");
  }
  const std::string parent = v2_root + OwnPath("");
  if (ReadFile(parent + "/cgroup.subtree_control").find("memory") == std::string::npos &&
      !WriteFile(parent + "/cgroup.subtree_control", "+memory")) {
    return absl::UnavailableError("cannot enable the memory controller below " + parent);
  }
  const std::string dir = parent + "/" + name;
  if (!std::filesystem::create_directory(dir, ec) && ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create the cgroup ", dir, ": ", ec.message()));
  }
  std::unique_ptr<MemoryCgroup> g(new MemoryCgroup(dir, true));
  if (!WriteFile(dir + "/memory.max", absl::StrCat(limit_bytes))) {
    return absl::UnavailableError("cannot set memory.max in " + dir);
  }
  WriteFile(dir + "/memory.swap.max", "0");
  return g;
}

MemoryCgroup::~MemoryCgroup() { rmdir(dir_.c_str()); }

absl::Status MemoryCgroup::Add(pid_t pid) const {
  if (!WriteFile(dir_ + "/cgroup.procs", absl::StrCat(pid))) {
    return absl::UnavailableError("cannot move a process into " + dir_);
  }
  return absl::OkStatus();
}

int64_t MemoryCgroup::PeakBytes() const {
  const std::string text = ReadFile(dir_ + (v2_ ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  return text.empty() ? -1 : std::stoll(text);
}

int64_t MemoryCgroup::OomKills() const {
  return v2_ ? KeyedValue(dir_ + "/memory.events", "oom_kill")
             : KeyedValue(dir_ + "/memory.oom_control", "oom_kill");
}

}  // namespace sparseflash::testing
