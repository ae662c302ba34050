// A small ordered collection of named entries (models, devices) with lookup
// errors that list every known name. Immutable once built; thread-safe to read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sparseflash {

template <typename T>  // T has a std::string `name`
class NamedCatalog {
 public:
  explicit NamedCatalog(std::string kind) : kind_(std::move(kind)) {}

  void Add(T item) { items_.push_back(std::move(item)); }
  const std::vector<T>& items() const { return items_; }

  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const T& item : items_) names.push_back(item.name);
    return names;
  }

  absl::StatusOr<T> Find(std::string_view name) const {
    for (const T& item : items_) {
      if (item.name == name) return item;
    }
    return absl::NotFoundError(absl::StrCat(
        "unknown ", kind_, " '", std::string(name), "'; known ", kind_,
        "s: ", absl::StrJoin(Names(), ", "), "; or give the path of a ", kind_,
        " .textproto file (`", kind_, " show NAME > my.textproto` writes one to edit)"));
  }

 private:
  std::string kind_;
  std::vector<T> items_;
};

}  // namespace sparseflash
