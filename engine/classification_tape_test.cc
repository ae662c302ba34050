#include "engine/classification_tape.h"

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(ClassificationTape, ReplaysItsSetsInOrderThenIsFinished) {
  ClassificationTape tape;
  tape.Append(0, 1,
              {.counts = {.resident_active = 5, .missing_gate_zero = 2},
               .fetched = 2,
               .after = {.hits = 5, .accesses = 7}});
  tape.Append(1, 0,
              {.counts = {.resident_gate_zero = 3, .missing_active = 4},
               .fetched = 4,
               .after = {.hits = 8, .accesses = 14}});
  TapeReplay replay(&tape);
  ClassifiedSet c;
  ASSERT_TRUE(replay.Next(0, 1, &c));
  EXPECT_EQ(c.counts.resident_active, 5);
  EXPECT_EQ(c.counts.missing_gate_zero, 2);
  EXPECT_EQ(c.fetched, 2);
  EXPECT_EQ(c.after.accesses, 7u);
  EXPECT_FALSE(replay.finished());
  ASSERT_TRUE(replay.Next(1, 0, &c));
  EXPECT_EQ(c.counts.resident_gate_zero, 3);
  EXPECT_EQ(c.counts.missing_active, 4);
  EXPECT_EQ(c.fetched, 4);
  EXPECT_EQ(c.after.hits, 8u);
  EXPECT_TRUE(replay.finished());
}

TEST(ClassificationTape, AnotherSetOrOneTooManyFailsTheReplay) {
  ClassificationTape tape;
  tape.Append(0, 0, {.counts = {.resident_active = 1}, .after = {.hits = 1, .accesses = 1}});
  ClassifiedSet c;
  TapeReplay other_expert(&tape);
  EXPECT_FALSE(other_expert.Next(0, 1, &c));
  EXPECT_EQ(c.counts.resident_active, 0);
  EXPECT_FALSE(other_expert.finished());
  TapeReplay too_many(&tape);
  EXPECT_TRUE(too_many.Next(0, 0, &c));
  EXPECT_FALSE(too_many.Next(1, 0, &c));
  EXPECT_FALSE(too_many.finished());
}

}  // namespace
}  // namespace sparseflash
