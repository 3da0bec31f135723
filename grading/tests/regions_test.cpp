// Skeleton and solution of every lab are the same file outside the student region, the
// skeleton's region is the placeholder, and the solution's is not: nbgrader's one source of truth.
// Likewise a docs page's code snippet is cut from the file that is built and tested.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kBegin = "// ==== BEGIN STUDENT CODE ====";
const std::string kEnd = "// ==== END STUDENT CODE ====";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Split {
  std::string before, region, after;
  bool ok = false;
};

Split split_regions(const std::string& text) {
  Split s;
  const auto begin = text.find(kBegin);
  const auto end = text.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) return s;
  if (text.find(kBegin, begin + 1) != std::string::npos || text.find(kEnd, end + 1) != std::string::npos) return s;
  s.before = text.substr(0, begin);
  s.region = text.substr(begin, end - begin);
  s.after = text.substr(end);
  s.ok = true;
  return s;
}

std::vector<std::string> lab_files() {
  std::vector<std::string> files;
  std::stringstream list(REDUCTION_LAB_FILES);
  for (std::string item; std::getline(list, item, ',');) files.push_back(item);
  return files;
}

TEST(SkeletonRegions, EveryLabHasExactlyOneStudentRegion) {
  for (const auto& file : lab_files()) {
    const std::string path = std::string(REDUCTION_SOURCE_DIR) + "/labs/" + file;
    EXPECT_TRUE(split_regions(read_file(path)).ok) << path << " needs exactly one BEGIN/END STUDENT CODE pair";
  }
}

#if REDUCTION_HAS_SOLUTIONS  // the instructor's tree: a student fills the regions in
TEST(SkeletonRegions, FreshSkeletonRegionIsThePlaceholder) {
  for (const auto& file : lab_files()) {
    const Split s = split_regions(read_file(std::string(REDUCTION_SOURCE_DIR) + "/labs/" + file));
    EXPECT_NE(s.region.find("reduction::not_implemented("), std::string::npos) << file;
    EXPECT_NE(s.region.find("TODO"), std::string::npos) << file << ": the region must say what to do";
  }
}

TEST(SkeletonRegions, SkeletonAndSolutionAreIdenticalOutsideTheRegion) {
  for (const auto& file : lab_files()) {
    const Split skeleton = split_regions(read_file(std::string(REDUCTION_SOURCE_DIR) + "/labs/" + file));
    const Split solution = split_regions(read_file(std::string(REDUCTION_SOURCE_DIR) + "/solutions/" + file));
    ASSERT_TRUE(skeleton.ok && solution.ok) << file;
    EXPECT_EQ(skeleton.before, solution.before) << file << ": the text before the student region differs";
    EXPECT_EQ(skeleton.after, solution.after) << file << ": the text after the student region differs";
  }
}

TEST(SkeletonRegions, SolutionRegionImplementsTheLab) {
  for (const auto& file : lab_files()) {
    const Split skeleton = split_regions(read_file(std::string(REDUCTION_SOURCE_DIR) + "/labs/" + file));
    const Split solution = split_regions(read_file(std::string(REDUCTION_SOURCE_DIR) + "/solutions/" + file));
    EXPECT_EQ(solution.region.find("not_implemented"), std::string::npos) << file;
    EXPECT_NE(solution.region, skeleton.region) << file;
  }
}
#endif

TEST(DocSnippets, TheDynamicParallelismPageQuotesTheBuiltFileVerbatim) {
  const std::string page = read_file(std::string(REDUCTION_SOURCE_DIR) + "/docs/dynamic-parallelism.md");
  const std::string code = read_file(std::string(REDUCTION_SOURCE_DIR) + "/docs/code/recursive_reduce.cu");
  ASSERT_FALSE(page.empty() || code.empty()) << "docs/dynamic-parallelism.md or docs/code/recursive_reduce.cu is missing";
  int snippets = 0;
  for (auto at = page.find("```cpp\n"); at != std::string::npos; at = page.find("```cpp\n", at)) {
    at += 7;
    const auto end = page.find("```", at);
    ASSERT_NE(end, std::string::npos);
    ++snippets;
    EXPECT_NE(code.find(page.substr(at, end - at)), std::string::npos)
        << "a C++ snippet of docs/dynamic-parallelism.md is not in docs/code/recursive_reduce.cu:\n"
        << page.substr(at, end - at);
    at = end + 3;
  }
  EXPECT_GE(snippets, 1);
}

TEST(SkeletonRegions, EveryLabHasAReadme) {
  for (const auto& file : lab_files()) {
    const std::string folder = file.substr(0, file.find('/'));
    EXPECT_FALSE(read_file(std::string(REDUCTION_SOURCE_DIR) + "/labs/" + folder + "/README.md").empty())
        << folder << " has no README.md";
  }
}

}  // namespace
