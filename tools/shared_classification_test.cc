#include "tools/shared_classification.h"

#include "gtest/gtest.h"

namespace sparseflash::cli {
namespace {

SweepJob Job(int threads, std::vector<std::string> options, double ffn_resident = 0.5) {
  SweepJob j;
  j.device = "oneplus12";
  j.model = "turbosparse-mistral-7b";
  j.strategy = "powerinfer2";
  j.ffn_resident = ffn_resident;
  j.threads = threads;
  j.options = std::move(options);
  return j;
}

TEST(ClassificationKey, IgnoresOnlyScheduling) {
  const std::string key = ClassificationKey(Job(0, {}));
  EXPECT_EQ(ClassificationKey(Job(3, {"pipeline=none", "io_depth=4", "cluster_neurons=8"})), key);
  EXPECT_EQ(ClassificationKey(Job(0, {"threads=2"})), key);
  EXPECT_EQ(ClassificationKey(Job(0, {"io_threads=8"})), key);
  EXPECT_NE(ClassificationKey(Job(0, {"hot_share=0.25"})), key);
  EXPECT_NE(ClassificationKey(Job(0, {"layout=bundle"})), key);
  EXPECT_NE(ClassificationKey(Job(0, {}, 0.25)), key);
  SweepJob policy = Job(0, {});
  policy.policy = "lfu";
  EXPECT_NE(ClassificationKey(policy), key);
  SweepJob ace2 = Job(0, {});
  ace2.device = "oneplus-ace2";
  EXPECT_NE(ClassificationKey(ace2), key);
}

// The first run of a key records; a later one replays (and counts as replayed
// once it has replayed the whole tape); a job alone on its key, and the key's
// last job when no tape was kept, neither.
TEST(SharedClassifications, RecordsOnceAndReplaysForTheKeysOtherJobs) {
  const std::vector<SweepJob> jobs = {Job(1, {}), Job(2, {}), Job(3, {}), Job(1, {}, 0.25),
                                      Job(4, {})};
  SharedClassifications shared(jobs);
  {
    SharedClassifications::Use alone(&shared, 3);
    const ClassificationSharing s = alone.Start();
    EXPECT_EQ(s.record, nullptr);
    EXPECT_EQ(s.replay, nullptr);
  }
  {
    SharedClassifications::Use first(&shared, 0);
    const ClassificationSharing s = first.Start();
    ASSERT_NE(s.record, nullptr);
    // A second job of the key starting meanwhile runs on its own.
    SharedClassifications::Use beside(&shared, 1);
    EXPECT_EQ(beside.Start().record, nullptr);
    s.record->Append(0, 0, {.counts = {.resident_active = 1}, .after = {.hits = 1, .accesses = 1}});
    EXPECT_TRUE(first.Succeeded());
    EXPECT_TRUE(beside.Succeeded());
  }
  {
    SharedClassifications::Use early(&shared, 4);
    ASSERT_NE(early.Start().replay, nullptr);
    EXPECT_FALSE(early.Succeeded());  // nothing replayed: the tape is not finished
    EXPECT_EQ(shared.replayed(), 0);  // and its run is not counted
  }
  SharedClassifications::Use last(&shared, 2);
  const ClassificationSharing s = last.Start();
  ASSERT_NE(s.replay, nullptr);
  ClassifiedSet set;
  EXPECT_TRUE(s.replay->Next(0, 0, &set));
  EXPECT_EQ(set.counts.resident_active, 1);
  EXPECT_TRUE(last.Succeeded());
  EXPECT_EQ(shared.replayed(), 1);
}

// A strategy that records nothing marks its key as unshareable.
TEST(SharedClassifications, AnEmptyRecordingIsNotReplayed) {
  const std::vector<SweepJob> jobs = {Job(1, {}), Job(2, {}), Job(3, {})};
  SharedClassifications shared(jobs);
  {
    SharedClassifications::Use first(&shared, 0);
    ASSERT_NE(first.Start().record, nullptr);
    EXPECT_TRUE(first.Succeeded());
  }
  SharedClassifications::Use second(&shared, 1);
  const ClassificationSharing s = second.Start();
  EXPECT_EQ(s.record, nullptr);
  EXPECT_EQ(s.replay, nullptr);
}

}  // namespace
}  // namespace sparseflash::cli
