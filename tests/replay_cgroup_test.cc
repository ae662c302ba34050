// A real replay lives inside a hard memory limit equal to its --memory budget,
// as a phone's app does: the sparseflash binary runs in a memory cgroup whose
// limit is the budget and must finish without being OOM-killed, having read
// from flash. A control run under a limit below what it needs is killed, so
// the limit is really enforced here. Skipped where no cgroup can be made. And
// the text replay prints, part by part.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "engine/model_bytes.h"
#include "engine/weight_file.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli_runner.h"
#include "tests/memory_cgroup.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

using testing::MemoryCgroup;

// 4 layers of d_model 1024 and 8192 INT4 neurons (a 55 MB FFN) with the tiny
// model's statistics: big enough that the budget, not the code, dominates.
std::string WriteMidModel(const std::string& dir) {
  std::string text =
      ReadWholeFile("traces/models/tinystories-relu-260k.textproto", "model file").value_or("");
  for (auto [from, to] : {std::pair{"name: \"tinystories-relu-260k\"", "name: \"cgroup-check\""},
                          {"d_model: 64", "d_model: 1024"},
                          {"d_ffn: 192", "d_ffn: 8192"},
                          {"head_dim: 16", "head_dim: 256"},
                          {"quantization { kind: INT8 group_size: 64 }",
                           "quantization { kind: INT4 group_size: 32 }"}}) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, std::string(from).size(), to);
  }
  const std::string path = dir + "/cgroup-check.textproto";
  std::ofstream(path) << text;
  return path;
}

struct Outcome {
  int code = -1;  // exit code, or 128 + the signal that ended it
  std::string out;
};

// The exit code of a child that could not join the cgroup.
constexpr int kCannotJoin = 120;

// Runs `sparseflash args...` as a child that joins `group` before it execs.
Outcome RunIn(const MemoryCgroup& group, const std::vector<std::string>& args,
              const std::string& dir) {
  const std::string out_path = dir + "/cgroup-run.out";
  std::vector<std::string> argv_strings = testing::CliArgv(args);
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!group.Add(getpid()).ok()) _exit(kCannotJoin);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || dup2(out, 1) < 0) _exit(121);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  Outcome o;
  o.code = testing::WaitCli(pid);
  std::ifstream in(out_path);
  std::stringstream s;
  s << in.rdbuf();
  o.out = s.str();
  return o;
}

class CgroupReplay : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef SF_SANITIZED
    GTEST_SKIP() << "a sanitizer's shadow memory is charged to the cgroup too";
#endif
    if (std::getenv("SF_TEST_EMULATOR") != nullptr) {
      GTEST_SKIP() << "an emulator's own memory is charged to the cgroup too";
    }
    dir_ = ::testing::TempDir();
    model_ = WriteMidModel(dir_);
    weights_ = dir_ + "/cgroup-check.sfw";
    absl::StatusOr<ModelSpec> model = LoadModel(model_);
    ASSERT_TRUE(model.ok()) << model.status();
    std::error_code ec;
    if (!std::filesystem::exists(weights_, ec)) {  // once for the suite
      ASSERT_TRUE(WriteWeightFile(*model, LayoutKind::kBundle, weights_, true, nullptr).ok());
    }
  }
  std::vector<std::string> Replay(const std::string& strategy, int64_t budget_mb) const {
    return {"replay",
            "--device",
            "oneplus12",
            "--model",
            model_,
            "--weights",
            weights_,
            "--strategy",
            strategy,
            "--memory",
            absl::StrCat(budget_mb, "MB"),
            "--tokens",
            "16",
            "--json"};
  }
  // Runs `args` (a --json replay) as a child in a fresh cgroup limited to
  // `limit` and checks that it finished, was not killed and stayed under the
  // limit; *out gets its JSON. Skips the test where no cgroup can be made.
  void FinishUnderLimit(const std::vector<std::string>& args, int64_t limit, nlohmann::json* out) {
    absl::StatusOr<std::unique_ptr<MemoryCgroup>> group = MemoryCgroup::Create(limit);
    if (!group.ok()) GTEST_SKIP() << group.status();
    const Outcome o = RunIn(**group, args, dir_);
    if (o.code == kCannotJoin) GTEST_SKIP() << "a child cannot join the cgroup here";
    ASSERT_EQ(o.code, 0) << "killed or failed under a limit equal to its budget:\n" << o.out;
    EXPECT_EQ((*group)->OomKills(), 0);
    const int64_t peak = (*group)->PeakBytes();
    if (peak >= 0) {
      EXPECT_LE(peak, limit);
    }
    *out = nlohmann::json::parse(o.out);
  }
  std::string dir_, model_, weights_;
};

// Outside a cgroup, the text a user reads: predicted beside measured for each
// part of a token's critical path, so a total that agrees cannot hide parts
// that do not.
TEST_F(CgroupReplay, TextShowsEachPartOfATokenMeasuredAndPredicted) {
  std::vector<std::string> args = Replay("powerinfer2", 64);
  args.pop_back();  // the text, not --json
  const testing::CliOutcome o = testing::Shell(testing::CliCommandLine(absl::StrJoin(args, " ")));
  ASSERT_EQ(o.code, 0) << o.out;
  const size_t path = o.out.find("critical path per token");
  ASSERT_NE(path, std::string::npos) << o.out;
  for (const char* part : {"attention", "ffn_compute", "io_wait"}) {
    const size_t at = o.out.find(part, path);
    ASSERT_NE(at, std::string::npos) << part << " missing:\n" << o.out;
    const std::string line = o.out.substr(at, o.out.find('\n', at) - at);
    EXPECT_NE(line.find(" ms"), std::string::npos) << line;
    EXPECT_NE(line.find('%'), std::string::npos) << "no error column: " << line;
  }
}

// By default the weight file is read once before the run, as calibrate reads
// the file it measures; --cold-storage skips it.
TEST_F(CgroupReplay, ReadsTheWeightFileOnceBeforeTheRunUnlessToldNot) {
  const std::vector<std::string> args = Replay("powerinfer2", 64);
  const testing::CliOutcome warm =
      testing::Shell(testing::CliCommandLine(absl::StrJoin(args, " ")));
  ASSERT_EQ(warm.code, 0) << warm.out;
  const nlohmann::json w = nlohmann::json::parse(warm.out);
  // The run's own wall time, and the machine's steal time within it (seconds,
  // not clock ticks: at most every core's whole time).
  const double run = w["run_seconds"].get<double>();
  EXPECT_GT(run, 0);
  const double steal = w["steal_seconds"].get<double>();
  if (steal >= 0) {
    EXPECT_LE(steal, run * std::max(1u, std::thread::hardware_concurrency()));
  }
  const int64_t read = w["weights_read_first"]["bytes"].get<int64_t>();
  if (read == 0) GTEST_SKIP() << dir_ << " refuses O_DIRECT: nothing is read first";
  EXPECT_EQ(read, static_cast<int64_t>(std::filesystem::file_size(weights_)));
  EXPECT_GT(w["weights_read_first"]["bytes_per_s"].get<double>(), 0);
  // The run's count of the kernel's reads excludes that pass.
  const int64_t kernel = w["kernel_read_bytes"].get<int64_t>();
  if (kernel >= 0) {
    EXPECT_LT(kernel - w["engine_read_bytes"].get<int64_t>(), read / 2);
  }
  const testing::CliOutcome cold =
      testing::Shell(testing::CliCommandLine(absl::StrJoin(args, " ") + " --cold-storage"));
  ASSERT_EQ(cold.code, 0) << cold.out;
  EXPECT_EQ(nlohmann::json::parse(cold.out)["weights_read_first"]["bytes"].get<int64_t>(), 0);
}

class ReplayInACgroup : public CgroupReplay, public ::testing::WithParamInterface<const char*> {};

TEST_P(ReplayInACgroup, FinishesUnderALimitEqualToItsBudget) {
  constexpr int64_t kBudget = 64'000'000;
  nlohmann::json j;
  FinishUnderLimit(Replay(GetParam(), kBudget / 1'000'000), kBudget, &j);
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_GT(j["process_bytes"].get<int64_t>(), 0);
  EXPECT_LE(j["peak_rss_bytes"].get<int64_t>(), kBudget);
  EXPECT_GT(j["engine_read_bytes"].get<int64_t>(), 0) << "the model was not offloaded";
}

// The control: the same run under a limit well below what it needs is killed,
// so a pass above means the limit held, not that it was ignored.
TEST_P(ReplayInACgroup, IsKilledUnderALimitBelowWhatItNeeds) {
  absl::StatusOr<std::unique_ptr<MemoryCgroup>> group = MemoryCgroup::Create(20'000'000);
  if (!group.ok()) GTEST_SKIP() << group.status();
  const Outcome o = RunIn(**group, Replay(GetParam(), 64), dir_);
  if (o.code == kCannotJoin) GTEST_SKIP() << "a child cannot join the cgroup here";
  EXPECT_NE(o.code, 0);
  EXPECT_GE((*group)->OomKills(), 1);
}

// Attention's weights read from flash a layer ahead (a budget below the
// resident set): the read buffers are the plan's, so the run stays within a
// limit equal to its budget while reading every layer's attention every token.
TEST_P(ReplayInACgroup, AttentionFromFlashIsReadEveryTokenWithinTheLimit) {
  constexpr int64_t kBudget = 64'000'000;
  std::vector<std::string> args = Replay(GetParam(), kBudget / 1'000'000);
  args.insert(args.end(), {"--option", "attention=flash"});
  nlohmann::json j;
  FinishUnderLimit(args, kBudget, &j);
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_EQ(j["options"]["attention"], "flash");
  const ModelSpec model = *LoadModel(model_);
  const int64_t attention = ComputeModelBytes(model).attention_bytes;
  EXPECT_EQ(j["memory"]["read_buffer_bytes"].get<int64_t>(), 2 * attention / model.layers);
  EXPECT_LT(j["memory"]["resident_bytes"].get<int64_t>(), attention)
      << "attention's weights are not resident";
  EXPECT_GE(j["engine_read_bytes"].get<int64_t>(), 16 * attention);
  const int64_t kernel = j["kernel_read_bytes"].get<int64_t>();
  if (kernel >= 0) {
    EXPECT_GE(kernel, 16 * attention) << "reads served from the page cache, not the device";
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ReplayInACgroup, ::testing::Values("powerinfer2", "llmflash"));

// llamacpp reading its windows itself (O_DIRECT, mmap=false): a window's bytes
// land in its window cache, as the kernel's land in its page cache, not in
// read buffers beside it, so with windows of 16 MiB (reads in flight of 32-48
// MiB, which beside the cache would pass the limit) the run stays within a
// limit equal to its budget.
TEST_F(CgroupReplay, LlamaCppReadsIntoItsWindowCacheWithinTheLimit) {
  constexpr int64_t kBudget = 96'000'000;
  std::vector<std::string> args = Replay("llamacpp", kBudget / 1'000'000);
  args.insert(args.end(), {"--option", "read_ahead_kb=8192", "--option", "mmap=false"});
  nlohmann::json j;
  FinishUnderLimit(args, kBudget, &j);
  if (IsSkipped() || HasFatalFailure()) return;
  EXPECT_LE(j["peak_rss_bytes"].get<int64_t>(), kBudget);
  EXPECT_GT(j["engine_read_bytes"].get<int64_t>(), 16 * (int64_t{16} << 20))
      << "the file does not fit: windows are read again every token";
}

// llama.cpp's way (llamacpp, mmap=true) under a limit smaller than its weight
// file: the kernel pages the mapped file in, evicts its own pages to stay within
// the limit, and so reads the file again every token. The run is not killed.
TEST_F(CgroupReplay, MappedLlamaCppRereadsTheFileEveryTokenWithinTheLimit) {
  constexpr int64_t kBudget = 64'000'000;
  // The strategy scans the model's bytes of the file in order every token.
  const int64_t scanned = std::min(ComputeModelBytes(*LoadModel(model_)).model_bytes(),
                                   static_cast<int64_t>(std::filesystem::file_size(weights_)));
  ASSERT_GT(scanned, kBudget * 3 / 4) << "the scan must not fit beside the process";
  {
    const int fd = open(weights_.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // cold, and charged to no one
    close(fd);
  }
  absl::StatusOr<std::unique_ptr<MemoryCgroup>> group = MemoryCgroup::Create(kBudget);
  if (!group.ok()) GTEST_SKIP() << group.status();
  std::vector<std::string> args = Replay("llamacpp", kBudget / 1'000'000);  // mmap by default
  const Outcome o = RunIn(**group, args, dir_);
  if (o.code == kCannotJoin) GTEST_SKIP() << "a child cannot join the cgroup here";
  ASSERT_EQ(o.code, 0) << "killed or failed under a limit equal to its budget:\n" << o.out;
  EXPECT_EQ((*group)->OomKills(), 0);
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_TRUE(j["page_faults"].get<bool>());
  EXPECT_EQ(j["engine_read_bytes"].get<int64_t>(), 0);
  // The page cache's hits and the device's busy time happen inside compute,
  // unseen: null, where the prediction has numbers.
  for (const char* unseen : {"hit_rate", "miss_rate_p99", "io_stall_share"}) {
    EXPECT_TRUE(j["measured"][unseen].is_null()) << unseen;
    EXPECT_TRUE(j["predicted"][unseen].is_number()) << unseen;
  }
  const int64_t kernel = j["kernel_read_bytes"].get<int64_t>();
  if (kernel >= 0) {
    EXPECT_GT(kernel, 8 * scanned)
        << "16 tokens under a limit below the scan read it " << kernel / scanned << " times";
  }
}

}  // namespace
}  // namespace sparseflash
