// Name -> factory table of eviction policies: a new policy is one file and one line here.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

struct Registration {
  const char* name;
  std::unique_ptr<EvictionPolicy> (*make)(const PolicyOptions&);
};

constexpr Registration kPolicies[] = {
    {"lru", MakeLru},          {"fifo", MakeFifo},     {"lfu", MakeLfu},
    {"s3fifo", MakeS3Fifo},    {"sieve", MakeSieve},   {"window", MakeSlidingWindow},
    {"static", MakeStaticSet}, {"belady", MakeBelady},  {"workingset", MakeWorkingSet},
};

}  // namespace

std::vector<std::string> EvictionPolicyNames() {
  std::vector<std::string> names;
  for (const Registration& r : kPolicies) names.push_back(r.name);
  return names;
}

absl::StatusOr<std::unique_ptr<EvictionPolicy>> MakeEvictionPolicy(const std::string& name,
                                                                   const PolicyOptions& options) {
  if (name == "belady" && options.oracle == nullptr) {
    return absl::FailedPreconditionError(
        "policy 'belady' needs the future of the trace (an access oracle); only the "
        "simulator provides one");
  }
  for (const Registration& r : kPolicies) {
    if (name == r.name) return r.make(options);
  }
  return absl::NotFoundError(absl::StrCat("unknown cache policy '", name, "'; known policies: ",
                                          absl::StrJoin(EvictionPolicyNames(), ", ")));
}

}  // namespace sparseflash
