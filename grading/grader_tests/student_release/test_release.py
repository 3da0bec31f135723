"""The student release: the leak check on small fake trees, the presets, and a release of the real
repository (without the compiled reference modules) that must come out clean."""

import json
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader_tests.markdown_links import broken_links
from student_release.checkout import checkout_problem
from student_release.build import (GRADER_CMAKE_MARKER, INSTRUCTOR_DOCS, make_release, rebase_links, release_leaks,
                                   student_grading_cmake, student_presets)

SKELETON = """#include <reduction/lab.hpp>
namespace {
constexpr int kBlockThreads = 256;  // threads per block of every launch
// ==== BEGIN STUDENT CODE ====
// TODO(lab 05): write the kernel
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out) { reduction::not_implemented(5); }
// ==== END STUDENT CODE ====
}  // namespace
"""
REGION = """// Fixes: lab 04's modulo; whole warps drop out of the tree.
template <typename T>
__global__ void reduce_sequential(const T* __restrict__ d_in, std::size_t num_items, T* d_partials) {
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();  // this step's sums are written before the next step reads them
  }
}
"""


class FakeRepo:
    """labs/05_sequential/sequential.cu and solutions/05_sequential/sequential.cu, plus a release dir."""

    def __init__(self, root: Path):
        self.root = root
        for folder, region in (("labs", None), ("solutions", REGION)):
            path = root / "repo" / folder / "05_sequential" / "sequential.cu"
            path.parent.mkdir(parents=True)
            text = SKELETON if region is None else SKELETON.replace(
                "// TODO(lab 05): write the kernel\ntemplate <typename T>\n"
                "void reduce_sum(const T* d_in, std::size_t num_items, T* d_out) { reduction::not_implemented(5); }\n",
                region)
            path.write_text(text, encoding="utf-8")
        # release_leaks reads the committed skeletons: the fake repository is a git repository.
        git = ["git", "-C", str(root / "repo"), "-c", "user.name=test", "-c", "user.email=test@example.com"]
        for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "fake"]):
            subprocess.run(git + command, check=True, capture_output=True)
        self.release = root / "release"
        (self.release / "labs" / "05_sequential").mkdir(parents=True)
        (self.release / "labs" / "05_sequential" / "sequential.cu").write_text(SKELETON, encoding="utf-8")
        (self.release / "README.md").write_text("Use `s >>= 1`, not `s >> 1`.\n", encoding="utf-8")

    def leaks(self):
        return release_leaks(self.release, repo=self.root / "repo")

    def add(self, relative, text):
        path = self.release / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


# The leak check reads the committed skeletons of a (fake) repository, and a release of this one
# takes labs/ as committed: without git, or outside a checkout, these cannot run.
NO_GIT = "git is not installed: the leak check reads a fake repository's committed skeletons"
NO_CHECKOUT = checkout_problem(REPO)


@unittest.skipIf(shutil.which("git") is None, NO_GIT)
class TestLeakCheck(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = FakeRepo(Path(self.tmp.name))

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_clean_release_passes(self):
        self.assertEqual(self.repo.leaks(), [])

    def test_a_region_copied_with_other_whitespace_is_found(self):
        self.repo.add("docs/notes.md", "Here is how:\n" + "\n\n".join("    " + line for line in REGION.splitlines()))
        problems = self.repo.leaks()
        self.assertEqual(len(problems), 1)
        self.assertIn("docs/notes.md: contains the student region of solutions/05_sequential/sequential.cu", problems[0])

    def test_a_few_distinctive_lines_are_enough(self):
        self.repo.add("labs/05_sequential/README.md",
                      "for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {\n"
                      "if (tid < s) partial[tid] += partial[tid + s];\n"
                      "// Fixes: lab 04's modulo; whole warps drop out of the tree.\n")
        problems = "\n".join(self.repo.leaks())
        self.assertIn("labs/05_sequential/README.md: contains 3 distinctive line(s) of "
                      "solutions/05_sequential/sequential.cu", problems)
        self.assertNotIn("partial[tid]", problems, "a leak report must name the file, never quote the solution")

    def test_one_line_in_a_text_is_not_a_leak(self):
        self.repo.add("labs/05_sequential/README.md", "The loop: `for (unsigned s = blockDim.x / 2; s > 0; s >>= 1)`\n")
        self.assertEqual(self.repo.leaks(), [])

    def test_solutions_and_examples_paths_are_leaks(self):
        self.repo.add("solutions/README.md", "nothing secret\n")
        self.repo.add("examples/submissions/alice/labs/05_sequential/sequential.cu", SKELETON)
        problems = "\n".join(self.repo.leaks())
        self.assertIn("solutions/README.md: a solutions/ path", problems)
        self.assertIn("examples/submissions/alice/labs/05_sequential/sequential.cu: a examples/ path", problems)

    def test_binary_modules_are_not_read(self):
        self.repo.add("reference/lab05_sequential.so", b"\x7fELF\0\0" + REGION.encode())
        self.assertEqual(self.repo.leaks(), [])


class TestMarkdownLinks(unittest.TestCase):
    """The link walk the release test relies on finds what it must, and only that."""

    def test_missing_files_and_headings_are_found_urls_and_code_are_not_followed(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "docs").mkdir()
            (root / "docs" / "a.md").write_text("# Lab 11 — One pass\n## The idea\n", encoding="utf-8")
            (root / "README.md").write_text(
                "[ok](docs/a.md) [ok](docs/a.md#the-idea) [ok](#top) ![img](docs)\n"
                "[gone](../examples/README.md) [bad anchor](docs/a.md#no-such-part)\n"
                "[web](https://example.com/x.md) `[code](nowhere.md)`\n"
                "```\n[fenced](nowhere.md)\n```\n# Top\n[ref]: docs/missing.md\n", encoding="utf-8")
            self.assertEqual(broken_links(root), [
                "README.md: ../examples/README.md (no such file in " + root.name + ")",
                "README.md: docs/a.md#no-such-part (no heading #no-such-part in a.md)",
                "README.md: docs/missing.md (no such file in " + root.name + ")",
            ])


class TestReleaseParts(unittest.TestCase):
    def test_only_the_student_presets_remain_with_the_release_references(self):
        presets = json.loads((REPO / "CMakePresets.json").read_text(encoding="utf-8"))
        result = student_presets(presets)
        names = {p["name"] for kind in ("configurePresets", "buildPresets", "testPresets", "workflowPresets")
                 for p in result.get(kind, [])}
        self.assertIn("student", names)
        self.assertFalse([name for name in names if "solution" in name or name == "ci"], names)
        student = next(p for p in result["configurePresets"] if p["name"] == "student")
        self.assertEqual(student["cacheVariables"]["REDUCTION_REFERENCE_DIR"], "${sourceDir}/reference")
        self.assertEqual(student["cacheVariables"]["REDUCTION_BUILD_SOLUTIONS"], "OFF")

    def test_links_are_rebased_when_a_text_moves_up_and_code_is_left_alone(self):
        text = ("Start with [lab 01](../../labs/01_host_sum/README.md#your-task), see [the harness](../harness.md)\n"
                "and [the site](https://example.com/x.md); ![a figure](img/a.png)\n"
                "```\n[not a link](../../labs/x.md)\n```\n")
        self.assertEqual(rebase_links(text, "docs/student", ""),
                         "Start with [lab 01](labs/01_host_sum/README.md#your-task), see [the harness](docs/harness.md)\n"
                         "and [the site](https://example.com/x.md); ![a figure](docs/student/img/a.png)\n"
                         "```\n[not a link](../../labs/x.md)\n```\n")

    def test_the_students_readme_links_work_in_this_repository_too(self):
        # Written in docs/student/, it is read there by instructors; the release moves it to the top.
        self.assertEqual(broken_links(REPO / "docs" / "student"), [])

    def test_the_grader_block_is_cut_from_the_grading_cmake(self):
        text = "add_test(NAME harness.cpu COMMAND x)\n\n" + GRADER_CMAKE_MARKER + "\nadd_test(NAME grader.unit)\n"
        self.assertEqual(student_grading_cmake(text), "add_test(NAME harness.cpu COMMAND x)\n")


@unittest.skipIf(NO_CHECKOUT, f"a release takes labs/ as committed in git, and {NO_CHECKOUT}")
class TestRealRelease(unittest.TestCase):
    def test_a_release_of_this_repository_leaks_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "release"
            files = make_release(None, out, with_modules=False, log=lambda text: None)
            self.assertEqual(release_leaks(out), [])
            self.assertIn("grading/grade.py", files)
            self.assertIn("grading/skeletons/01_host_sum/host_sum.cpp", files)
            self.assertIn("grading/class_files/names.py", files)   # the grader's (a copy of the plots' package)
            self.assertIn("CMakePresets.json", files)
            self.assertFalse([f for f in files if f.startswith(("solutions/", "examples/", "grading/grader_tests/"))
                              or f == "grading/release.py" or f.startswith("grading/student_release/")])
            self.assertNotIn(GRADER_CMAKE_MARKER, (out / "grading" / "CMakeLists.txt").read_text(encoding="utf-8"))
            self.assertEqual((out / "README.md").read_text(encoding="utf-8"),
                             rebase_links((REPO / "docs" / "student" / "README.md").read_text(encoding="utf-8"),
                                          "docs/student", ""))
            self.assertFalse([f for f in files if f.startswith("docs/student/") or f == "tools/grade-example.sh"])

    def test_every_relative_link_of_the_release_leads_somewhere_in_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "release"
            files = make_release(None, out, with_modules=False, log=lambda text: None)
            self.assertIn("labs/11_single_pass/README.md", files, "the walk must see the lab texts")
            self.assertEqual(broken_links(out), [])
            shipped = [f for f in files for doc in INSTRUCTOR_DOCS if f == doc or f.startswith(doc + "/")]
            self.assertEqual(shipped, [], "instructor documents stay out of the release")

    def test_the_release_takes_the_committed_skeletons_not_a_solved_working_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            clone = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True)
            lab = Path("labs") / "01_host_sum" / "host_sum.cpp"
            committed = (clone / lab).read_text(encoding="utf-8")
            (clone / lab).write_text(committed.replace("TODO", "SOLVED BY THE INSTRUCTOR"), encoding="utf-8")
            notes = []
            make_release(None, Path(tmp) / "release", with_modules=False, repo=clone, log=notes.append)
            self.assertEqual((Path(tmp) / "release" / lab).read_text(encoding="utf-8"), committed)
            self.assertEqual((Path(tmp) / "release" / "grading" / "skeletons" / "01_host_sum" / "host_sum.cpp")
                             .read_text(encoding="utf-8"), committed)
            self.assertIn("labs/ has uncommitted changes", "\n".join(notes))


if __name__ == "__main__":
    unittest.main()
