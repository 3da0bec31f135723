// reduction_bench's line about labs timed without a reference (common/bench/reference_note.hpp):
// it names the labs, says why there is no reference, and where the references come from.
#include "reference_note.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using reduction::bench::missing_references_note;

bool starts_with(const std::string& text, const std::string& start) { return text.rfind(start, 0) == 0; }
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MissingReferencesNote, IsEmptyWhenEveryLabHasAReference) { EXPECT_EQ(missing_references_note({}, ""), ""); }

TEST(MissingReferencesNote, InAStudentBuildSaysItHasNoneAndWhereTheyAre) {
  // A build with no reference folder at all (--reference-dir "", as bench.says_where_the_references_are runs it).
  const std::string note = missing_references_note({1}, "");
  EXPECT_TRUE(starts_with(note, "no reference time for lab 01: this build has no reference modules")) << note;
  EXPECT_TRUE(has(note, "build the solutions preset once") && has(note, "build/solutions/solutions")) << note;
  // Never the advice to build the solutions into a student's tree: that makes it the instructor build.
  EXPECT_FALSE(has(note, "REDUCTION_BUILD_SOLUTIONS")) << note;
  EXPECT_TRUE(has(note, "student release's student preset takes them from its reference/")) << note;
  EXPECT_TRUE(has(note, "--reference-dir DIR")) << note;
  EXPECT_FALSE(has(note, "\n")) << "one line: " << note;
}

TEST(MissingReferencesNote, NamesAReferenceFolderThatIsNotThere) {
  const std::string note = missing_references_note({2, 12}, "/no/such/reference/folder");
  EXPECT_TRUE(starts_with(note, "no reference time for labs 02, 12: the reference folder /no/such/reference/folder "
                                "is not there")) << note;
}

TEST(MissingReferencesNote, NamesAFolderWithoutTheLabsModule) {
  const std::string folder = ::testing::TempDir();
  const std::string note = missing_references_note({11}, folder);
  EXPECT_TRUE(starts_with(note, "no reference time for lab 11: " + folder + " has no module for it")) << note;
}

}  // namespace
