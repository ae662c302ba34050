// How tests run the sparseflash binary: as a child process, prefixed by the
// emulator named in SF_TEST_EMULATOR (e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu"
// for the arm64 cross build, whose CTest sets it), with its exit code and output.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sparseflash::testing {

// The argument vector of `sparseflash args...` (emulator first where set).
std::vector<std::string> CliArgv(const std::vector<std::string>& args);
// The same as one shell command line (arguments are not quoted: no spaces).
std::string CliCommandLine(const std::string& args);

// Starts the binary with stdout to /dev/null and stderr to `stderr_path`.
pid_t SpawnCli(const std::vector<std::string>& args, const std::string& stderr_path = "/dev/null");
// Waits for a child: its exit code, or 128 + the signal that ended it.
int WaitCli(pid_t pid);

struct CliOutcome {
  int code = -1;
  std::string out;  // standard output (Shell only)
  std::string err;
};
// Runs the binary to the end with stderr captured in `scratch_dir`.
CliOutcome RunCli(const std::vector<std::string>& args, const std::string& scratch_dir);
// Runs a shell command; its standard output and exit code.
CliOutcome Shell(const std::string& command);

}  // namespace sparseflash::testing
