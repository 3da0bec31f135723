"""The compile's view (compile_view.py) on made-up folders: which files a compiler's messages name as
missing, and which of those lie outside the view (test_compile.py compiles for real)."""

import shutil
import tempfile
import unittest
from pathlib import Path

from grader.judge.compile_view import (COMPILE_SYSTEM_FOLDERS, DOC, MAX_NAME_CHARS, RULE, Seen, compile_view,
                                       missing_files, outside_view, printable, rule_sentence)
from grader.sandbox.minimal_etc import MinimalEtc
from grader.sandbox.bubblewrap import Sandbox

# Each as nvcc 13, gcc 12 and binutils 2.40 printed it here (Debian 12), but clang's (its documented wording).
SAID = """\
/w/src/host_sum.cpp:3:10: fatal error: /etc/hostname: No such file or directory
/tmp/ccA.s: Assembler messages:
/tmp/ccA.s:5: Error: file not found: /etc/passwd
/tmp/ccB.s:4: Error: can't open /root/notes.s for reading: No such file or directory
cc1plus: fatal error: /srv/dependency: No such file or directory
raw.cu(1): catastrophic error: cannot open source file "/opt/x.h"
/w/src/a.cu:1:10: fatal error: 'clang.h' file not found
/w/src/a.cu:2:10: fatal error: /usr/local/cuda-13.0/lib64/libcublas.so.13: Permission denied
/w/src/a.cu:9:1: error: 'x' was not declared in this scope
/tmp/ccA.s:6: Error: file not found: /etc/passwd
"""


class TestMissingFiles(unittest.TestCase):
    def test_each_tool_s_words_for_a_file_it_could_not_read(self):
        self.assertEqual(missing_files(SAID), ["/etc/hostname", "/etc/passwd", "/root/notes.s", "/srv/dependency",
                                               "/opt/x.h", "clang.h", "/usr/local/cuda-13.0/lib64/libcublas.so.13"])

    def test_a_name_is_quoted_printable_and_bounded(self):
        self.assertEqual(printable("/etc/\x1b[2Jpass\twd"), "/etc/?[2Jpass?wd")
        long = printable("/" + "a" * 1000)
        self.assertEqual(len(long), MAX_NAME_CHARS)
        self.assertTrue(long.endswith("..."))
        self.assertEqual(rule_sentence(("/etc/passwd",)), f'{RULE}: "/etc/passwd" is outside it ({DOC})')
        self.assertIn('"/a", "/b" are outside it', rule_sentence(("/a", "/b")))


class TestOutsideTheView(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="compile-view-test-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.toolkit = self.folder("cuda-13.0/include")
        self.include = self.folder("repo/common/include")
        self.solution = self.file("repo/solutions/01_host_sum/host_sum.cpp")
        self.source = self.file("out/work/src/01_host_sum/host_sum.cpp")
        self.scratch = self.folder("out/work/modules/.build")
        self.cub = self.folder("cuda-13.0/include/cub")
        self.file("cuda-13.0/include/cub/version.cuh")
        self.file("cuda-13.0/include/cuda_fp16.h")
        self.file("cuda-13.0/lib64/libcublas.so.13")
        cache = self.file("etc/ld.so.cache")
        self.file("etc/passwd")
        self.sandbox = Sandbox(True, hidden=(self.tmp / "repo",), denied=(self.tmp / "cuda-13.0/lib64/libcublas.so.13",),
                               etc=MinimalEtc(((cache, Path("/etc/ld.so.cache")), (self.tmp / "etc/passwd", Path("/etc/passwd")))))
        self.view = compile_view(self.tmp / "cuda-13.0", self.source, [str(self.include)], self.scratch, (self.cub,))
        self.bases = (self.source.parent, self.include, self.toolkit, self.scratch)

    def folder(self, relative: str) -> Path:
        path = self.tmp / relative
        path.mkdir(parents=True, exist_ok=True)
        return path

    def file(self, relative: str) -> Path:
        path = self.tmp / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
        return path

    def outside(self, *names: str) -> tuple[str, ...]:
        return outside_view(names, Seen(self.view, self.sandbox), self.bases)

    def test_the_view_is_a_compile_s(self):
        self.assertEqual(self.view.etc, "loader")
        self.assertEqual(self.view.system, COMPILE_SYSTEM_FOLDERS)
        self.assertFalse({"/usr", "/etc", "/opt", "/sys", "/usr/local", "/usr/share"} & set(self.view.system))

    def test_the_machine_s_etc_and_folders_out_of_view_are_outside(self):
        self.assertEqual(self.outside("/etc/passwd", "/etc/hostname", "/root/.bashrc", "/opt/x", "/sys/kernel/notes",
                                      "/usr/local/include/x.h", "/usr/share/dict/words", "/home/a/b", "/tmp/x"),
                         ("/etc/passwd", "/etc/hostname", "/root/.bashrc", "/opt/x", "/sys/kernel/notes"))
        self.assertEqual(self.outside("/usr/local/include/x.h", "/usr/share/dict/words", "/home/a/b", "/tmp/x"),
                         ("/usr/local/include/x.h", "/usr/share/dict/words", "/home/a/b", "/tmp/x"))
        self.assertEqual(self.outside("/etc/ld.so.cache"), (), "the loader's cache is in the view")

    def test_the_repository_a_hidden_library_and_a_denied_library_are_outside(self):
        self.assertEqual(self.outside(str(self.solution), str(self.cub / "version.cuh"),
                                      str(self.tmp / "cuda-13.0/lib64/libcublas.so.13")),
                         (str(self.solution), str(self.cub / "version.cuh"),
                          str(self.tmp / "cuda-13.0/lib64/libcublas.so.13")))

    def test_a_path_that_climbs_out_or_names_a_file_the_view_lacks_is_outside(self):
        self.assertEqual(self.outside("../../solutions/01_host_sum/host_sum.cpp", "cub/version.cuh",
                                      str(self.toolkit / ".." / ".." / "repo/solutions/01_host_sum/host_sum.cpp")),
                         ("../../solutions/01_host_sum/host_sum.cpp", "cub/version.cuh",
                          str(self.toolkit / ".." / ".." / "repo/solutions/01_host_sum/host_sum.cpp")))

    def test_a_link_in_the_view_to_a_file_outside_is_outside(self):
        (self.include / "passwd.h").symlink_to(self.tmp / "etc/passwd")
        self.assertEqual(self.outside(str(self.include / "passwd.h"), "passwd.h"),
                         (str(self.include / "passwd.h"), "passwd.h"))

    def test_a_plain_missing_file_is_not_outside(self):
        self.assertEqual(self.outside("nothere.h", "cuda/std/atomics", str(self.toolkit / "nothere.h"),
                                      str(self.include / "nothere.h"), "/usr/include/nothere.h", str(self.source)), ())
