#include "common/shell_word.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

// What `sh -c 'printf %s WORD'` prints: the word as the shell reads it.
std::string AsTheShellReadsIt(const std::string& word) {
  const std::string command = "printf %s " + word;
  std::FILE* p = popen(("sh -c " + ShellWord(command)).c_str(), "r");
  std::string out;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(ShellWord, LeavesPlainWordsAndQuotesTheRest) {
  EXPECT_EQ(ShellWord("oneplus12"), "oneplus12");
  EXPECT_EQ(ShellWord("devices/catalog/m1-max_2.textproto"), "devices/catalog/m1-max_2.textproto");
  EXPECT_EQ(ShellWord("pipeline=none"), "pipeline=none");
  EXPECT_EQ(ShellWord("my phone.textproto"), "'my phone.textproto'");
  EXPECT_EQ(ShellWord(""), "''");
  for (const std::string word : {"my phone's profile (copy).textproto", "$HOME/a;b", "*", "a\"b"}) {
    EXPECT_EQ(AsTheShellReadsIt(ShellWord(word)), word) << ShellWord(word);
  }
}

}  // namespace
}  // namespace sparseflash
