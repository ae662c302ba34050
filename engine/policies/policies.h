// Factories of the built-in eviction policies, one per file in this folder;
// registered by name in registry.cc.
#pragma once

#include <memory>

#include "engine/eviction_policy.h"

namespace sparseflash {

std::unique_ptr<EvictionPolicy> MakeLru(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeFifo(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeLfu(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeSieve(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeS3Fifo(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeSlidingWindow(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeStaticSet(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeBelady(const PolicyOptions& options);
std::unique_ptr<EvictionPolicy> MakeWorkingSet(const PolicyOptions& options);

}  // namespace sparseflash
