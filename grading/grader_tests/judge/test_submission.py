"""Splicing the STUDENT CODE region into the official skeleton, and what a submission holds."""

import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader.manifest import Lab
from grader.judge.submission import RegionError, collect, read_text, split_regions, splice

SKELETON = """// header
#include <reduction/lab.hpp>
constexpr int kBlockThreads = 256;
// ==== BEGIN STUDENT CODE ====
// TODO(lab 02)
void f() { reduction::not_implemented(2); }
// ==== END STUDENT CODE ====
REDUCTION_DEFINE_LAB(2, ...)
"""
LABS = [Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum"), Lab("02_atomic", "atomic.cu", "lab02_atomic")]


class TestSplice(unittest.TestCase):
    def test_the_region_goes_into_the_skeleton(self):
        submitted = SKELETON.replace("// TODO(lab 02)\nvoid f() { reduction::not_implemented(2); }", "void f() { go(); }")
        text, notes = splice(SKELETON, submitted, "atomic.cu")
        self.assertEqual(text, submitted)
        self.assertEqual(notes, [])

    def test_changes_outside_the_region_are_ignored_and_reported(self):
        submitted = SKELETON.replace("256", "1024").replace("void f() { reduction::not_implemented(2); }", "void f() {}")
        text, notes = splice(SKELETON, submitted, "atomic.cu")
        self.assertIn("kBlockThreads = 256", text)
        self.assertIn("void f() {}", text)
        self.assertEqual(len(notes), 1)
        self.assertIn("outside the STUDENT CODE region were ignored", notes[0])
        self.assertIn("+constexpr int kBlockThreads = 1024;", notes[0])

    def test_windows_line_endings_are_not_a_change(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "atomic.cu"
            path.write_bytes(SKELETON.replace("\n", "\r\n").encode())
            self.assertEqual(splice(SKELETON, read_text(path), "atomic.cu"), (SKELETON, []))

    def test_missing_markers_are_an_error_naming_them(self):
        with self.assertRaisesRegex(RegionError, "BEGIN STUDENT CODE"):
            splice(SKELETON, SKELETON.replace("// ==== BEGIN STUDENT CODE ====\n", ""), "atomic.cu")

    def test_repeated_or_reversed_markers_are_an_error(self):
        with self.assertRaises(RegionError):
            split_regions(SKELETON + "// ==== END STUDENT CODE ====\n")
        with self.assertRaises(RegionError):
            split_regions("// ==== END STUDENT CODE ====\nx\n// ==== BEGIN STUDENT CODE ====\n")

    def test_a_real_solution_spliced_into_its_skeleton_is_the_solution(self):
        skeleton = (REPO / "labs" / "01_host_sum" / "host_sum.cpp").read_text(encoding="utf-8")
        solution = (REPO / "solutions" / "01_host_sum" / "host_sum.cpp").read_text(encoding="utf-8")
        self.assertEqual(splice(skeleton, solution, "host_sum.cpp"), (solution, []))


class TestCollect(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name) / "student"
        self.root.mkdir()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, relative, text="x\n"):
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def test_only_the_manifest_files_are_taken_the_rest_is_ignored(self):
        self.write("labs/01_host_sum/host_sum.cpp")
        self.write("labs/02_atomic/atomic.cu")
        self.write("labs/02_atomic/my_test.cu")
        self.write("common/include/reduction/lab.hpp")
        self.write("grading/tests/lab_suite.cpp")
        self.write("CMakeLists.txt")
        self.write(".git/objects/ab/cdef")
        self.write("build/lab02_atomic.so")
        submission = collect("s", self.root, LABS)
        self.assertEqual(set(submission.files), {"01_host_sum", "02_atomic"})
        self.assertEqual(submission.ignored, [".git/", "CMakeLists.txt", "build/", "common/include/reduction/lab.hpp",
                                              "grading/tests/lab_suite.cpp", "labs/02_atomic/my_test.cu"])

    def test_the_flat_layout_is_accepted_and_labs_wins_when_both_exist(self):
        self.write("01_host_sum/host_sum.cpp")
        self.write("02_atomic/atomic.cu")
        self.write("labs/02_atomic/atomic.cu")
        submission = collect("s", self.root, LABS)
        self.assertEqual(submission.files["01_host_sum"], self.root / "01_host_sum" / "host_sum.cpp")
        self.assertEqual(submission.files["02_atomic"], self.root / "labs" / "02_atomic" / "atomic.cu")
        self.assertEqual(submission.ignored, ["02_atomic/atomic.cu"])

    def test_a_linked_lab_file_is_not_read(self):
        outside = self.root.parent / "secret.txt"
        outside.write_text("secret\n", encoding="utf-8")
        (self.root / "labs" / "02_atomic").mkdir(parents=True)
        (self.root / "labs" / "02_atomic" / "atomic.cu").symlink_to(outside)
        submission = collect("s", self.root, LABS)
        self.assertEqual(submission.files, {})
        self.assertEqual(submission.ignored, ["labs/02_atomic/atomic.cu (symbolic link)"])

    def test_a_misnamed_file_leaves_the_lab_missing_and_is_named(self):
        self.write("labs/02_atomic/Atomic.cu")
        submission = collect("s", self.root, LABS)
        self.assertEqual(submission.files, {})
        self.assertEqual(submission.near_misses["02_atomic"], ["labs/02_atomic/Atomic.cu"])


class TestHostileFolders(unittest.TestCase):
    def test_an_oversized_lab_file_is_not_read_and_a_huge_folder_is_listed_in_part(self):
        from grader.judge import submission
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "labs" / "01_host_sum").mkdir(parents=True)
            (root / "labs" / "01_host_sum" / "host_sum.cpp").write_bytes(b"x" * (submission.MAX_LAB_FILE_BYTES + 1))
            junk = root / "junk"
            junk.mkdir()
            for i in range(submission.MAX_WALKED + 10):
                (junk / f"f{i}").touch()
            found = collect("eve", root, LABS)
            self.assertEqual(found.files, {})
            self.assertIn("01_host_sum", found.too_large)
            self.assertTrue(found.ignored[-1].startswith("... and"))
            self.assertLessEqual(len(found.ignored), submission.MAX_IGNORED + 1)


if __name__ == "__main__":
    unittest.main()
