// Shared plumbing of the sparseflash command line: every command registers its
// options on a CLI11 subcommand and sets the action to run after parsing. An
// action returns the process exit code; errors are printed by ReportError.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace sparseflash::cli {

using Action = std::function<int()>;

// Where the parsed subcommand stores what to run.
struct Dispatch {
  Action action;
};

// Prints "sparseflash: <message>" to stderr and returns exit code 1 (2 for bad usage).
int ReportError(const absl::Status& status);

// Progress line on stderr ("\r" on a terminal, periodic lines otherwise).
void Progress(const std::string& what, uint64_t done, uint64_t total);

// The path of RELATIVE inside the repository's data/ folder: under the current
// directory when it is there, else beside the binary (build/bin/../../data), else
// the current directory's path (so an error names where it was looked for).
std::string ShippedData(const std::string& relative);

// A CLI11 check that an option's value is a number in [lo, hi]; NaN, infinities
// and negative numbers given to unsigned options fail before conversion, with a
// message naming the option and the range.
CLI::Validator InRange(double lo, double hi);

// Upper bounds of counts given on the command line or in a sweep.
inline constexpr double kMaxTokensOption = 1'000'000;  // engine/run_setup.h kMaxRunTokens
inline constexpr double kMaxJobs = 256;

// "42s", "3m05s", "1h20m".
std::string FormatDuration(double seconds);

// Progress of many runs on stderr: a bar with done/total, rate and time left,
// redrawn in place on a terminal; a plain line every 5 s otherwise.
class ProgressBar {
 public:
  explicit ProgressBar(std::string what);
  void operator()(int64_t done, int64_t total, double elapsed_s);

 private:
  std::string what_;
  bool tty_;
  std::chrono::steady_clock::time_point last_;
};

void AddTraceCommands(CLI::App& app, Dispatch& dispatch);
void AddModelCommands(CLI::App& app, Dispatch& dispatch);
void AddDeviceCommands(CLI::App& app, Dispatch& dispatch);
void AddDemoCommand(CLI::App& app, Dispatch& dispatch);
void AddSimulateCommand(CLI::App& app, Dispatch& dispatch);
void AddWeightsCommands(CLI::App& app, Dispatch& dispatch);
void AddReplayCommand(CLI::App& app, Dispatch& dispatch);
void AddSweepCommand(CLI::App& app, Dispatch& dispatch);
void AddValidateCommand(CLI::App& app, Dispatch& dispatch);
void AddDbCommands(CLI::App& app, Dispatch& dispatch);
void AddReportCommand(CLI::App& app, Dispatch& dispatch);
// trace cachesim (added under `trace`).
void AddTraceCacheCommands(CLI::App& trace, Dispatch& dispatch);
// trace export --format oracle-general: the trace's `set` accesses as a
// libCacheSim stream of `object_bytes` objects written to `out`.
int RunExportRequests(const std::string& trace, const std::string& out, const std::string& set,
                      int64_t object_bytes);
// generate, and trace record (added under `trace`).
void AddGenerateCommands(CLI::App& app, CLI::App& trace, Dispatch& dispatch);

}  // namespace sparseflash::cli
