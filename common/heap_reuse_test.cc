#include "common/heap_reuse.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sparseflash {
namespace {

// Whether a mapping of this process is marked for transparent huge pages
// ("hg" among its VmFlags in /proc/self/smaps).
bool SomeMappingAdvisedHuge() {
  std::ifstream smaps("/proc/self/smaps");
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind("VmFlags:", 0) == 0 && line.find(" hg") != std::string::npos) return true;
  }
  return false;
}

TEST(TuneHeapForSimulation, LargeBlocksComeFromTheHeapWhichKeepsThemAndIsAdvisedHuge) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc's malloc only";
#else
  if (!HeapTuningApplies()) GTEST_SKIP() << "glibc's own malloc only (a sanitizer replaces it)";
  TuneHeapForSimulation(1);
  const struct mallinfo2 before = mallinfo2();
  constexpr size_t kBlock = size_t{48} << 20;  // above glibc's largest mmap threshold
  void* block = std::malloc(kBlock);
  ASSERT_NE(block, nullptr);
  const struct mallinfo2 during = mallinfo2();
  EXPECT_EQ(during.hblks, before.hblks) << "the block got its own mapping";
  std::free(block);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, kBlock) << "the freed block left the heap";
  EXPECT_GE(after.arena, size_t{2} << 30) << "the heap does not hold the 2 GiB reserve";
  if (std::getenv("SF_TEST_EMULATOR") != nullptr) {
    GTEST_SKIP() << "an emulator takes MADV_HUGEPAGE as a hint it ignores";
  }
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(thp, modes) || modes.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "this kernel has no transparent huge pages to ask for";
  }
  EXPECT_TRUE(SomeMappingAdvisedHuge()) << "no mapping is marked MADV_HUGEPAGE";
#endif
}

}  // namespace
}  // namespace sparseflash
