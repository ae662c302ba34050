// A strategy's settings as "key=value" pairs (from --option on the command line
// or a sweep config). Each strategy reads the keys it knows with a default from
// the reference; a key nobody read is an error, so a typo never passes silently.
// All values actually used are kept for the run record. Value type.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace sparseflash {

class StrategyOptions {
 public:
  StrategyOptions() = default;
  // Parses "key=value" items; an item without '=' is an error.
  static absl::Status Parse(const std::vector<std::string>& items, StrategyOptions* out);
  void Set(const std::string& key, const std::string& value) { given_[key] = value; }

  // Typed lookups with defaults; a value that does not parse, or lies outside
  // [lo, hi] (NaN never lies inside), records an error naming the key and range.
  int Int(const std::string& key, int fallback, int lo, int hi);
  double Double(const std::string& key, double fallback, double lo, double hi);
  bool Bool(const std::string& key, bool fallback);
  std::string String(const std::string& key, const std::string& fallback);
  // The value of `key` (else `fallback`) as `parse` reads it; a value it
  // refuses records its message under the key (Check reports it with the
  // others) and gives T{}.
  template <typename T>
  T Parsed(const std::string& key, const std::string& fallback,
           absl::StatusOr<T> (*parse)(const std::string&)) {
    absl::StatusOr<T> value = parse(String(key, fallback));
    if (value.ok()) return *value;
    errors_.push_back(absl::StrCat(key, ": ", value.status().message()));
    return T{};
  }

  // Errors from bad values or keys no lookup asked for, naming `strategy`;
  // several errors come one per line.
  absl::Status Check(const std::string& strategy) const;
  // Every key the strategy used with its effective value.
  const std::map<std::string, std::string>& used() const { return used_; }

 private:
  const std::string* Given(const std::string& key);

  std::map<std::string, std::string> given_;
  std::map<std::string, std::string> used_;
  std::vector<std::string> errors_;
};

}  // namespace sparseflash
