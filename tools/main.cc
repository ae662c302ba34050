// sparseflash: how fast will a sparse LLM decode when its FFN neurons are read
// from flash, and which cache, policy, layout and pipeline make it fastest.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"

#include "reports/results_db.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{
      "sparseflash: simulate and measure LLM inference with FFN neurons offloaded to flash.\n"
      "Run 'sparseflash demo' for the built-in example, or 'sparseflash <command> --help'.",
      "sparseflash"};  // not argv[0]: usage lines name the command, not its path
  app.require_subcommand(1);
  app.set_version_flag("--version", "sparseflash " + sparseflash::SparseflashVersion());
  sparseflash::cli::Dispatch dispatch;
  sparseflash::cli::AddDemoCommand(app, dispatch);
  sparseflash::cli::AddTraceCommands(app, dispatch);
  sparseflash::cli::AddModelCommands(app, dispatch);
  sparseflash::cli::AddDeviceCommands(app, dispatch);
  sparseflash::cli::AddSimulateCommand(app, dispatch);
  sparseflash::cli::AddWeightsCommands(app, dispatch);
  sparseflash::cli::AddReplayCommand(app, dispatch);
  sparseflash::cli::AddSweepCommand(app, dispatch);
  sparseflash::cli::AddValidateCommand(app, dispatch);
  sparseflash::cli::AddDbCommands(app, dispatch);
  sparseflash::cli::AddReportCommand(app, dispatch);
  sparseflash::cli::AddGenerateCommands(app, *app.get_subcommand("trace"), dispatch);
  // An unknown command is named (CLI11 would only say that one is required).
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::fprintf(stderr, "sparseflash: unknown command '%s'; commands: %s\n", argv[1],
                 absl::StrJoin(names, ", ").c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help and --version exit 0; bad usage 2
  }
  return dispatch.action ? dispatch.action() : 0;
}
