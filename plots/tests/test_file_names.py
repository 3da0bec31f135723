"""Tests of plotting/file_names.py: the one file name of a student, and the figures named by it."""

import contextlib
import io
import os
import sys
import tempfile
import unittest
import urllib.parse

PLOTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PLOTS_DIR)

import reduction_plots as rp  # noqa: E402
from plotting.file_names import student_file_name  # noqa: E402
from plotting.timings import COLUMNS  # noqa: E402

# Names that a character-replacing or case-folding scheme would merge, and the grader's folder
# names at their most hostile (STUDENT_NAME allows [A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}).
ADVERSARIAL = ["a+b", "a_b", "a%2Bb", "a%2bb", "a@b", "a-b", "a.b", "a b", "a/b", "a\\b", "a%b", "a%25b",
               "ab", "AB", "Ab", "aB", "a+b+", "a++b", "a_+b", "é", "e\u0301", "\udce9", ".a", "..", ".", "a.", "a..b",
               "_", "-", "x" * 64, "+" * 64, "a\nb", "a\x00b"]


class StudentFileNameTest(unittest.TestCase):
    def test_adversarial_names_get_distinct_file_names_that_give_the_name_back(self):
        names = {name: student_file_name(name) for name in ADVERSARIAL}
        self.assertEqual(len(set(names.values())), len(ADVERSARIAL), names)
        for name, file_name in names.items():
            self.assertEqual(urllib.parse.unquote(file_name, errors="surrogatepass"), name, file_name)

    def test_a_file_name_is_one_plain_path_component(self):
        for name in ADVERSARIAL:
            file_name = student_file_name(name)
            self.assertRegex(file_name, r"^[A-Za-z0-9_%-][A-Za-z0-9._%-]*$", name)
            self.assertNotIn(file_name, (".", ".."))

    def test_plain_names_stay_as_they_are_and_the_rest_is_percent_encoded(self):
        for name in ("aaron", "s007", "Zoe_2", "first.last", "a-b"):
            self.assertEqual(student_file_name(name), name)
        self.assertEqual(student_file_name("a+b"), "a%2Bb")
        self.assertEqual(student_file_name("a%2Bb"), "a%252Bb")
        self.assertEqual(student_file_name("a@b"), "a%40b")
        self.assertEqual(student_file_name(".hidden"), "%2Ehidden")
        self.assertRaises(ValueError, student_file_name, "")


class PerStudentFiguresTest(unittest.TestCase):
    def test_students_whose_names_differ_only_in_odd_characters_get_one_figure_each(self):
        students = ["a+b", "a_b", "a%2Bb", "a@b", "A+B"]
        rows = ["reference,02_atomic,float,16777216,385.0,373.0,7.7,10.9,0.3,,,ok,GPU,2026-11-21"]
        rows += [f"{name},02_atomic,float,16777216,{400.0 + 50 * k},{390.0 + 50 * k},7.0,10.0,0.3,385.0,"
                 f"{(400.0 + 50 * k) / 385:.3f},ok,GPU,2026-11-21" for k, name in enumerate(students)]
        with tempfile.TemporaryDirectory() as folder:
            csv_path = os.path.join(folder, "timings.csv")
            with open(csv_path, "w", encoding="utf-8") as handle:
                handle.write(",".join(COLUMNS) + "\n" + "\n".join(rows) + "\n")
            out = os.path.join(folder, "plots")
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                status = rp.main([csv_path, "--out", out, "--figures", "per-student", "--formats", "svg"])
            self.assertEqual(status, 0, err.getvalue())
            self.assertEqual(sorted(os.listdir(out)), sorted(f"student_{student_file_name(s)}.svg" for s in students))
            for name in students:  # each file is that student's figure, none overwritten by another's
                with open(os.path.join(out, f"student_{student_file_name(name)}.svg"), encoding="utf-8") as handle:
                    self.assertIn(f"{name} vs reference", handle.read())


if __name__ == "__main__":
    unittest.main()
