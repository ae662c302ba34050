#include "engine/strategy_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sparseflash {

absl::Status StrategyOptions::Parse(const std::vector<std::string>& items, StrategyOptions* out) {
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("strategy option '", item, "' is not of the form key=value"));
    }
    out->Set(item.substr(0, eq), item.substr(eq + 1));
  }
  return absl::OkStatus();
}

const std::string* StrategyOptions::Given(const std::string& key) {
  auto it = given_.find(key);
  return it == given_.end() ? nullptr : &it->second;
}

int StrategyOptions::Int(const std::string& key, int fallback, int lo, int hi) {
  int value = fallback;
  if (const std::string* v = Given(key); v && !absl::SimpleAtoi(*v, &value)) {
    errors_.push_back(absl::StrCat(key, "='", *v, "' is not an integer"));
  } else if (value < lo || value > hi) {
    errors_.push_back(absl::StrCat(key, "=", value, " is out of range [", lo, ", ", hi, "]"));
  }
  used_[key] = absl::StrCat(value);
  return value;
}

double StrategyOptions::Double(const std::string& key, double fallback, double lo, double hi) {
  double value = fallback;
  if (const std::string* v = Given(key); v && !absl::SimpleAtod(*v, &value)) {
    errors_.push_back(absl::StrCat(key, "='", *v, "' is not a number"));
  } else if (!(value >= lo && value <= hi)) {
    errors_.push_back(absl::StrCat(key, "=", value, " is out of range [", lo, ", ", hi, "]"));
  }
  used_[key] = absl::StrCat(value);
  return value;
}

bool StrategyOptions::Bool(const std::string& key, bool fallback) {
  bool value = fallback;
  if (const std::string* v = Given(key); v && !absl::SimpleAtob(*v, &value)) {
    errors_.push_back(absl::StrCat(key, "='", *v, "' is not true/false"));
  }
  used_[key] = value ? "true" : "false";
  return value;
}

std::string StrategyOptions::String(const std::string& key, const std::string& fallback) {
  const std::string* v = Given(key);
  std::string value = v ? *v : fallback;
  used_[key] = value;
  return value;
}

absl::Status StrategyOptions::Check(const std::string& strategy) const {
  std::vector<std::string> errors = errors_;
  for (const auto& [key, value] : given_) {
    if (!used_.count(key)) {
      std::vector<std::string> known;
      for (const auto& [k, v] : used_) known.push_back(k);
      errors.push_back(absl::StrCat("unknown option '", key, "' (", strategy,
                                    " options: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  if (errors.empty()) return absl::OkStatus();
  if (errors.size() == 1) {
    return absl::InvalidArgumentError(absl::StrCat("strategy ", strategy, ": ", errors[0]));
  }
  // One line each: a message may itself hold a semicolon ("...; known: ...").
  return absl::InvalidArgumentError(absl::StrCat("strategy ", strategy, ", ", errors.size(),
                                                 " bad options:\n  ",
                                                 absl::StrJoin(errors, "\n  ")));
}

}  // namespace sparseflash
