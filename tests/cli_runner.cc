#include "tests/cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sparseflash::testing {

std::vector<std::string> CliArgv(const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (const char* emulator = std::getenv("SF_TEST_EMULATOR")) {
    for (absl::string_view part : absl::StrSplit(emulator, ' ', absl::SkipEmpty())) {
      argv.emplace_back(part);
    }
  }
  argv.push_back(SF_CLI);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string CliCommandLine(const std::string& args) {
  const char* emulator = std::getenv("SF_TEST_EMULATOR");
  return absl::StrCat(emulator ? emulator : "", emulator ? " " : "", SF_CLI, " ", args);
}

pid_t SpawnCli(const std::vector<std::string>& args, const std::string& stderr_path) {
  const std::vector<std::string> full = CliArgv(args);
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const std::string& a : full) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (!freopen("/dev/null", "w", stdout) || !freopen(stderr_path.c_str(), "w", stderr)) {
      _exit(126);
    }
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int WaitCli(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

CliOutcome RunCli(const std::vector<std::string>& args, const std::string& scratch_dir) {
  const std::string err_path = scratch_dir + "/stderr.txt";
  CliOutcome o;
  o.code = WaitCli(SpawnCli(args, err_path));
  std::ifstream in(err_path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  o.err = s.str();
  return o;
}

CliOutcome Shell(const std::string& command) {
  CliOutcome o;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  const int st = pclose(p);
  o.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return o;
}

}  // namespace sparseflash::testing
