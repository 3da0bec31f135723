"""Student names (student_names.py) and the class folder (class_folder.py): any valid UTF-8 name is
graded under its real name; links and the names no output can hold are refused, listed with the
reason (console, refused-folders.json, class report) and end a class grading with EXIT_REFUSED."""

import contextlib
import csv
import io
import json
import os
import shutil
import tempfile
import unicodedata
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from grader.contract import ExitStatus
from grader_tests.helpers import FakeToolchain, fake_manifest, write_example_class
from grader import cli
from grader.outputs.student_paths import REFUSED_FILE
from grader.run.class_folder import find_students, scan
from grader.manifest import GraderError
from grader.outputs.student_names import RESERVED_NAMES, name_problem, padded, shown, width
from grader.outputs.student_paths import gradescope_folder, record_path

CLASS_DIR = tempfile.TemporaryDirectory()
SUBMISSIONS = write_example_class(Path(CLASS_DIR.name) / "example")
ALICE = SUBMISSIONS / "alice"

GRADED = ["José María", "王小明", "ana.lópez@uni.example", "=HYPERLINK(\"x\",\"190\")", "+cmd", "-x", "@me",
          "'quoted", "<script>alert(1)<\\script><img src=x onerror=alert(2)>", "Doe, Jane", "a$b$c", "_under", "e\u0301", "é", "Ω ∑", "😀",
          "王" * 80, "a\\b", "x" * 200]
REFUSED = {"bell\x07": "U+0007", "line\nbreak": "U+000A", "esc\x1b[2J": "U+001B", "del\x7f": "U+007F",
           "c1\x85": "U+0085", "rlo\u202eexe.txt": "U+202E", "zw\u200bsp": "U+200B", "bom\ufeff": "U+FEFF",
           "ls\u2028": "U+2028", "nc\ufffe": "U+FFFE", " alice": "white space", "alice ": "white space",
           "\u3000wide": "white space", "bad\udcffutf8": "\\xff", "reference": "reserved", "cub": "reserved"}


def tearDownModule():
    CLASS_DIR.cleanup()


class TestNameRule(unittest.TestCase):
    def test_names_of_any_script_and_shape_are_students(self):
        for name in GRADED:
            self.assertIsNone(name_problem(name), name)
            self.assertEqual(shown(name), name, "a valid name is shown as it is")

    def test_the_hazards_are_refused_and_the_reason_names_the_character(self):
        for name, reason in REFUSED.items():
            why = name_problem(name)
            self.assertIsNotNone(why, repr(name))
            self.assertIn(reason, why, repr(name))
        for name in ("", ".", "..", "a/b", *RESERVED_NAMES):
            self.assertIsNotNone(name_problem(name), repr(name))

    def test_shown_writes_no_control_invisible_or_undecodable_character(self):
        for name in REFUSED:
            text = shown(name)
            self.assertEqual([c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")], [], text)
            text.encode("utf-8")   # a lone surrogate would not encode
        self.assertEqual(shown("bell\x07"), "bell\\x07")
        self.assertEqual(shown("rlo\u202eexe"), "rlo\\u202eexe")
        self.assertEqual(shown("bad\udcffutf8"), "bad\\xffutf8")

    def test_terminal_widths(self):
        self.assertEqual(width("王小明"), 6)
        self.assertEqual(width("e\u0301"), 1)
        self.assertEqual(padded("王", 4), "王  ")


class TestClassFolder(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.class_dir = self.root / "class"
        self.class_dir.mkdir()

    def tearDown(self):
        self.tmp.cleanup()

    def student(self, name: str) -> None:
        # bytes: a name that is not UTF-8 is made as the file system holds it
        shutil.copytree(ALICE, self.class_dir / name)   # a lone surrogate: the byte that is not UTF-8

    def test_students_refused_and_ignored_entries_each_with_the_reason(self):
        for name in ("alice", "王小明", "bell\x07", "bad\udcffutf8", "reference"):
            self.student(name)
        (self.class_dir / "copycat").symlink_to(self.class_dir / "alice")
        (self.class_dir / ".git").mkdir()
        (self.class_dir / "notes.txt").write_text("hi\n", encoding="utf-8")
        folder = scan(self.class_dir)
        self.assertEqual([name for name, _ in folder.students], ["alice", "王小明"])
        refused = {entry.name: entry.why for entry in folder.refused}
        self.assertEqual(set(refused), {"bell\\x07", "bad\\xffutf8", "reference", "copycat"})
        self.assertIn("symbolic link", refused["copycat"])
        self.assertIn("U+0007", refused["bell\\x07"])
        self.assertIn("UTF-8", refused["bad\\xffutf8"])
        ignored = {entry.name for entry in folder.not_graded if not entry.refused}
        self.assertEqual(ignored, {".git", "notes.txt"})
        log = []
        self.assertEqual([name for name, _ in find_students(self.class_dir, None, log.append)], ["alice", "王小明"])
        self.assertEqual(len(log), 4, log)
        self.assertTrue(all("\x07" not in line and "\udcff" not in line for line in log), log)

    def test_student_selects_whole_names_with_commas_and_says_why_a_refused_one_is_not_there(self):
        for name in ("Doe, Jane", "Doe", "ann", "bell\x07"):
            self.student(name)
        self.assertEqual([n for n, _ in find_students(self.class_dir, ["Doe, Jane"], [].append)], ["Doe, Jane"])
        self.assertEqual([n for n, _ in find_students(self.class_dir, ["Doe,ann"], [].append)], ["Doe", "ann"])
        with contextlib.redirect_stdout(io.StringIO()):
            with self.assertRaisesRegex(GraderError, r"bell\\x07.* is refused: .*U\+0007"):
                find_students(self.class_dir, ["bell\x07"], print)
            with self.assertRaisesRegex(GraderError, "no submission folder \"bob\""):
                find_students(self.class_dir, ["bob"], print)


class TestClassGrading(unittest.TestCase):
    """The command line over a class with every kind of name: real names everywhere, the hazards
    refused, and the exit status saying so."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.class_dir = self.root / "class"
        self.out = self.root / "out"
        self.class_dir.mkdir()
        self.build = self.root / "build"

    def tearDown(self):
        self.tmp.cleanup()

    def run_cli(self, *extra: str, out: Path | None = None) -> tuple[int, str]:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            status = cli.main([str(self.class_dir), "--build-dir", str(self.build), "--out", str(out or self.out),
                               "--labs", "01", "--no-plots", *extra],
                              toolchain=FakeToolchain({}), manifest=fake_manifest(self.build))
        return status, buffer.getvalue()

    def make(self, names) -> None:
        for name in names:
            shutil.copytree(ALICE, self.class_dir / name)

    def test_any_name_is_graded_under_its_real_name_everywhere(self):
        self.make(GRADED)
        status, output = self.run_cli()
        self.assertEqual(status, ExitStatus.OK, output)
        for name in GRADED:
            record = json.loads(record_path(self.out, name).read_text(encoding="utf-8"))
            self.assertEqual((record["student"], record["labs"]["01_host_sum"]["verdict"]), (name, "PASSED"))
            results = json.loads((gradescope_folder(self.out, name) / "results.json").read_text(encoding="utf-8"))
            self.assertEqual((results["extra_data"]["student"], results["score"]), (name, 10))
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))[1:]
        first = {row[0]: row for row in rows}
        self.assertEqual(set(first), {("'" + n if n[0] in "=+-@'" else n) for n in GRADED})
        self.assertTrue(all(row[-1] == "10" for row in rows), rows)
        suites = {suite.get("name") for suite in ET.parse(self.out / "junit.xml").getroot().iter("testsuite")}
        self.assertEqual(suites, set(GRADED))
        self.assertEqual(json.loads((self.out / REFUSED_FILE).read_text(encoding="utf-8")), [])
        for name in ("José María", "王小明"):   # the summary table: the name, padded to the columns it takes
            self.assertTrue(any(line.startswith(padded(name, width("王" * 80)) + "  ") for line in output.splitlines()),
                            name)

    def test_a_refused_folder_is_listed_and_ends_the_grading_with_its_own_status(self):
        self.make(["alice", "bell\x07", "rlo\u202eexe", "bad\udcffutf8"])   # \udcff: the byte 0xff, not UTF-8
        (self.class_dir / "copycat").symlink_to(self.class_dir / "alice")
        (self.class_dir / ".git").mkdir()
        status, output = self.run_cli()
        self.assertEqual(status, ExitStatus.REFUSED, output)
        self.assertNotIn("\x07", output)
        self.assertNotIn("\u202e", output)
        tail = output[output.rindex("not graded: 4 folder(s)"):]
        for shown_name in ('"bell\\x07"', '"rlo\\u202eexe"', '"copycat"', '".git"', '"bad\\xffutf8"'):
            self.assertIn(shown_name, tail)
        self.assertIn(f"exit status {ExitStatus.REFUSED}", tail)
        listed = json.loads((self.out / REFUSED_FILE).read_text(encoding="utf-8"))
        self.assertEqual([(item["name"], item["refused"]) for item in listed],
                         [(".git", False), ("bad\\xffutf8", True), ("bell\\x07", True), ("copycat", True),
                          ("rlo\\u202eexe", True)])
        self.assertEqual(sorted(p.name for p in (self.out / "students").iterdir()), ["alice.json"])
        page = (self.out / "report" / "index.html").read_text(encoding="utf-8")
        self.assertIn("rlo\\u202eexe", page)
        self.assertNotIn("\u202e", page)
        # --merge ends the same way; a shard leaves the status to the merge
        self.assertEqual(self.run_cli("--merge")[0], ExitStatus.REFUSED)
        status, output = self.run_cli("--shard", "0/1", "--force")
        self.assertEqual(status, ExitStatus.OK, output)
        self.assertIn("not graded: 4 folder(s)", output)

    def test_an_unfinished_class_says_so_before_its_refused_folders(self):
        self.make(["alice", "bob", "bell\x07"])
        self.assertEqual(self.run_cli("--shard", "0/2")[0], ExitStatus.OK)
        status, output = self.run_cli("--merge")
        self.assertEqual(status, ExitStatus.UNFINISHED, output)
        self.assertIn('"bell\\x07"', output)
        self.assertEqual(self.run_cli("--shard", "1/2")[0], ExitStatus.OK)
        self.assertEqual(self.run_cli("--merge")[0], ExitStatus.REFUSED)


if __name__ == "__main__":
    unittest.main()
