"""What a report quotes of a compile (diagnostics.py), on canned nvcc and gcc output: errors in the
student's file and in public headers are shown, everything located elsewhere is counted, not quoted."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from grader_tests import helpers  # noqa: F401  (puts grading/ on sys.path)
from grader.report.diagnostics import first_error, public_folders, student_diagnostics

SOURCE = "/out/work/s/src/09_shuffle/shuffle.cu"
SHOWN = "labs/09_shuffle/shuffle.cu"


class DiagnosticsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name).resolve()
        self.include = root / "cuda-13.0" / "targets" / "x86_64-linux" / "include"
        self.include.mkdir(parents=True)
        (root / "cuda").symlink_to(root / "cuda-13.0")          # /usr/local/cuda -> cuda-13.0, as NVIDIA installs it
        self.spelled = f"{root}/cuda/bin/../targets/x86_64-linux/include"  # how nvcc spells its own include folder
        self.harness = root / "common" / "include"
        self.folders = (self.include, self.harness)

    def tearDown(self):
        self.tmp.cleanup()

    def shown(self, output: str) -> str:
        return student_diagnostics(output, SOURCE, SHOWN, self.folders)

    def test_a_missing_header_inside_a_toolkit_header_is_the_first_error(self):
        output = (f"In file included from {self.spelled}/cooperative_groups.h:55,\n"
                  f"                 from {SOURCE}:23:\n"
                  f"{self.spelled}/cooperative_groups/details/info.h:167:12: fatal error: cuda/std/type_traits: "
                  "No such file or directory\n"
                  "  167 | #  include <cuda/std/type_traits>\n"
                  "      |            ^~~~~~~~~~~~~~~~~~~~~~\n"
                  "compilation terminated.\n")
        shown = self.shown(output)
        self.assertIn(f"from {SHOWN}:23:", shown)
        self.assertIn("In file included from", shown)
        self.assertIn("#  include <cuda/std/type_traits>", shown)
        self.assertEqual(first_error(shown), f"{self.spelled}/cooperative_groups/details/info.h:167:12: fatal error: "
                                             "cuda/std/type_traits: No such file or directory")
        self.assertNotIn("not shown", shown)

    def test_an_edg_error_in_a_toolkit_header_keeps_its_instantiation_lines(self):
        output = (f"{self.spelled}/cooperative_groups.h(1182): error: static assertion failed with \"Size must be "
                  "one of 64/128/256/512\"\n"
                  "      static_assert(details::_is_valid_multi_warp_tile<Size>::value, \"...\");\n"
                  "      ^\n"
                  "          detected during:\n"
                  f"            instantiation of class \"cg::thread_block_tile<33U>\" at line 28 of {SOURCE}\n\n"
                  f"1 error detected in the compilation of \"{SOURCE}\".\n")
        shown = self.shown(output)
        self.assertIn("static assertion failed", first_error(shown))
        self.assertIn(f"at line 28 of {SHOWN}", shown)
        self.assertIn(f'1 error detected in the compilation of "{SHOWN}".', shown)
        self.assertNotIn(SOURCE, shown)

    def test_other_files_are_counted_and_not_quoted(self):
        output = (f"{SOURCE}(12): error: identifier \"x\" is undefined\n"
                  "    x = 1;\n    ^\n\n"
                  "/etc/passwd(1): error: this declaration has no storage class or type specifier\n"
                  "  root:x:0:0:root:/root:/bin/bash\n  ^\n\n"
                  f"{self.spelled}/../../../../../../../etc/passwd(1): error: expected a \";\"\n"   # .. out of the toolkit
                  "  daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n  ^\n\n"
                  "In file included from /proc/self/environ:1,\n"
                  f"                 from {SOURCE}:3:\n"
                  f"{self.spelled}/cuda_runtime.h:10:1: error: a public header reached through a private one\n"
                  "relative/header.h:4:2: error: a relative path is never public\n"
                  "  secret text\n"
                  f"3 errors detected in the compilation of \"{SOURCE}\".\n")
        shown = self.shown(output)
        self.assertIn(f"{SHOWN}(12): error: identifier \"x\" is undefined", shown)
        self.assertIn("a public header reached through a private one", shown)
        for secret in ("root:", "daemon:", "/etc/passwd", "/proc/self/environ", "secret text", "relative/header.h"):
            self.assertNotIn(secret, shown)
        self.assertIn("(10 diagnostic line(s) located in other files are not shown)", shown)
        self.assertEqual(first_error(shown), f"{SHOWN}(12): error: identifier \"x\" is undefined")

    def test_the_harness_headers_are_public_and_a_quoted_error_is_not_the_first_error(self):
        output = (f"{self.harness}/reduction/lab.hpp(40): warning: something about\n"
                  "    REDUCTION_CHECK(cudaGetLastError());\n"
                  f"{SOURCE}(50): error: expected a \";\"\n")
        shown = self.shown(output)
        self.assertIn("reduction/lab.hpp(40): warning", shown)
        self.assertEqual(first_error(shown), f"{SHOWN}(50): error: expected a \";\"")

    def test_public_folders_are_resolved(self):
        nvcc = Path(self.tmp.name) / "cuda" / "bin" / "nvcc"
        nvcc.parent.mkdir(parents=True)
        nvcc.touch()
        (Path(self.tmp.name) / "cuda-13.0" / "include").symlink_to(self.include)
        folders = public_folders(str(nvcc), [str(self.harness)])
        self.assertIn(self.include, folders)
        self.assertIn(Path("/usr/include").resolve(), folders)
        self.assertNotIn(Path(self.tmp.name) / "cuda" / "include", folders)


if __name__ == "__main__":
    unittest.main()
