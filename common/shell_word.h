// A string as one POSIX shell word, for the command lines the tool prints for
// a user to paste (a profile path with spaces or quotes stays one argument).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace sparseflash {

// `word` as it is when every character is one the shell takes literally, else
// in single quotes (a quote inside closed, escaped and reopened).
inline std::string ShellWord(std::string_view word) {
  auto literal = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           std::string_view("@%+=:,./-_").find(ch) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), literal)) return std::string(word);
  std::string quoted = "'";
  for (char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

}  // namespace sparseflash
