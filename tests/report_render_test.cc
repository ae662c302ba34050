// The report as a person sees it: a small sweep through the command line, its
// report rendered by headless Chromium (Debian's `chromium`, installed by the
// test command). The page must render to a screenshot, parse with every chart,
// log no console error and reference nothing outside itself.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"

namespace sparseflash {
namespace {

using testing::Shell;

std::string Browser() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    if (Shell(absl::StrCat("command -v ", name, " >/dev/null 2>&1")).code == 0) return name;
  }
  return "";
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(ReportRender, HeadlessChromiumRendersTheReport) {
  const std::string browser = Browser();
  ASSERT_FALSE(browser.empty())
      << "chromium is not installed; scripts/test.sh installs it (apt-get install chromium)";
  const std::string dir = ::testing::TempDir() + "/render";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/sweep.textproto") << R"pb(
    tokens: 8
    grid {
      device: "oneplus12" model: "turbosparse-mistral-7b"
      strategy: [ "powerinfer2", "llmflash", "llamacpp" ]
      memory_fraction: [ 0.5, 0.75 ]
    }
    grid {
      device: "oneplus12" model: "turbosparse-mistral-7b" strategy: "powerinfer2"
      policy: [ "lru", "belady" ] memory_fraction: [ 0.5, 0.75 ]
    })pb";
  ASSERT_EQ(Shell(testing::CliCommandLine(absl::StrCat("sweep --config ", dir,
                                                      "/sweep.textproto --db ", dir,
                                                      "/r.db --jobs 2 2>&1")))
                .code,
            0);
  ASSERT_EQ(Shell(testing::CliCommandLine(
                      absl::StrCat("report --db ", dir, "/r.db --out ", dir, "/out")))
                .code,
            0);
  const std::string page = absl::StrCat("file://", dir, "/out/report.html");
  const std::string flags = "--headless --no-sandbox --disable-gpu --hide-scrollbars";

  testing::CliOutcome shot = Shell(absl::StrCat(browser, " ", flags, " --window-size=1400,2400 --screenshot=", dir,
                                 "/shot.png ", page, " 2>&1"));
  ASSERT_TRUE(std::filesystem::exists(dir + "/shot.png")) << shot.out;
  std::ifstream png(dir + "/shot.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(dir + "/shot.png"), 20'000u);  // not a blank page

  testing::CliOutcome dom = Shell(absl::StrCat(browser, " ", flags, " --enable-logging=stderr --v=0 --dump-dom ",
                                page, " 2>", dir, "/console.txt"));
  EXPECT_EQ(dom.code, 0);
  // tokens/s, 2 speedups, policies, time split, latency CDF.
  EXPECT_EQ(Count(dom.out, "<svg"), 6u) << dom.out.substr(0, 2000);
  EXPECT_NE(dom.out.find("is fastest"), std::string::npos);
  std::ifstream console_file(dir + "/console.txt");
  std::stringstream console;
  console << console_file.rdbuf();
  EXPECT_EQ(console.str().find(":CONSOLE"), std::string::npos) << console.str();

  // Self-contained: no scripts, no external resources.
  std::ifstream html_file(dir + "/out/report.html");
  std::stringstream html;
  html << html_file.rdbuf();
  EXPECT_EQ(html.str().find("<script"), std::string::npos);
  EXPECT_EQ(html.str().find("src="), std::string::npos);
  EXPECT_EQ(Count(html.str(), "http"), Count(html.str(), "http://www.w3.org/2000/svg"));
}

}  // namespace
}  // namespace sparseflash
