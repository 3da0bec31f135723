"""Tests of class_files/names.py: the one file name of a student, and the figures named by it."""

import contextlib
import hashlib
import io
import os
import random
import sys
import tempfile
import unittest
import urllib.parse
import warnings

PLOTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PLOTS_DIR)

import reduction_plots as rp  # noqa: E402
from class_files.csv_cells import csv_cell, csv_text  # noqa: E402
from class_files.names import HASHED, MAX_LENGTH, student_file_name  # noqa: E402
from plotting.timings import COLUMNS  # noqa: E402

# Names that a character-replacing or case-folding scheme would merge, and folder names at their
# most hostile (the grader takes any valid UTF-8 name but for a few hazards: grader/outputs/student_names.py).
ADVERSARIAL = ["a+b", "a_b", "a%2Bb", "a%2bb", "a@b", "a-b", "a.b", "a b", "a/b", "a\\b", "a%b", "a%25b",
               "ab", "AB", "Ab", "aB", "a+b+", "a++b", "a_+b", "é", "e\u0301", "\udce9", ".a", "..", ".", "a.", "a..b",
               "_", "-", "x" * 64, "+" * 64, "a\nb", "a\x00b", "a~b", "~", "王小明", "José María", "王" * 64,
               "王" * 65, "x" * MAX_LENGTH, "x" * (MAX_LENGTH + 1), "%" * 43, "%" * 42]
ALPHABET = "aA_.-+%~ é\u0301王😀/\udcff"


class StudentFileNameTest(unittest.TestCase):
    def test_adversarial_names_get_distinct_file_names_that_give_the_name_back(self):
        names = {name: student_file_name(name) for name in ADVERSARIAL}
        self.assertEqual(len(set(names.values())), len(ADVERSARIAL), names)
        for name, file_name in names.items():   # a name that fits is its file name's unquote()
            if HASHED not in file_name:
                self.assertEqual(urllib.parse.unquote(file_name, errors="surrogatepass"), name, file_name)

    def test_a_file_name_is_one_plain_path_component(self):
        for name in ADVERSARIAL:
            file_name = student_file_name(name)
            self.assertRegex(file_name, r"^[A-Za-z0-9_%-][A-Za-z0-9._%~-]*$", name)
            self.assertNotIn(file_name, (".", ".."))
            self.assertLessEqual(len(file_name), MAX_LENGTH, name)

    def test_a_long_name_is_a_readable_prefix_and_the_hash_of_the_whole_name(self):
        name = "王" * 64   # 192 bytes of UTF-8, 576 characters %XX-encoded
        file_name = student_file_name(name)
        prefix, digest = file_name.split(HASHED)
        self.assertEqual(digest, hashlib.sha256(name.encode("utf-8")).hexdigest())
        self.assertTrue(prefix and name.startswith(urllib.parse.unquote(prefix)), prefix)
        self.assertEqual(len(prefix), (MAX_LENGTH - len(HASHED) - 64) // 9 * 9, "whole characters, as many as fit")
        self.assertEqual(student_file_name("x" * MAX_LENGTH), "x" * MAX_LENGTH, "what fits stays as it is")
        self.assertIn(HASHED, student_file_name("x" * (MAX_LENGTH + 1)))

    def test_injective_bounded_and_stable_on_many_random_names(self):
        generator = random.Random(2026)
        names = {"".join(generator.choice(ALPHABET) for _ in range(generator.randint(1, 90))) for _ in range(20000)}
        names |= {"王" * k for k in range(1, 90)} | {"x" * k for k in range(1, 200)}
        files = {name: student_file_name(name) for name in names}
        self.assertEqual(len(set(files.values())), len(names), "two names, one file")
        self.assertGreater(sum(HASHED in f for f in files.values()), 1000, "the sample holds many long names")
        for name, file_name in files.items():
            self.assertLessEqual(len(file_name), MAX_LENGTH)
            self.assertNotIn("/", file_name)
            self.assertFalse(file_name.startswith("."), name)
            self.assertEqual(student_file_name(name), file_name, "the same name, the same file")

    def test_plain_names_stay_as_they_are_and_the_rest_is_percent_encoded(self):
        for name in ("aaron", "s007", "Zoe_2", "first.last", "a-b"):
            self.assertEqual(student_file_name(name), name)
        self.assertEqual(student_file_name("a+b"), "a%2Bb")
        self.assertEqual(student_file_name("a%2Bb"), "a%252Bb")
        self.assertEqual(student_file_name("a@b"), "a%40b")
        self.assertEqual(student_file_name(".hidden"), "%2Ehidden")
        self.assertRaises(ValueError, student_file_name, "")


class CsvCellTest(unittest.TestCase):
    def test_a_formula_is_text_and_the_text_comes_back(self):
        for name in ("=HYPERLINK(1)", "+cmd", "-x", "@me", "\tx", "\rx", "'=x", "'", "''", "'a", "a", "", "王"):
            cell = csv_cell(name)
            self.assertFalse(cell[:1] in ("=", "+", "-", "@", "\t", "\r"), cell)
            self.assertEqual(csv_text(cell), name)
        self.assertEqual(csv_cell("=1+1"), "'=1+1")
        self.assertEqual(csv_text("'abc"), "'abc", "a cell csv_cell did not mark stays as it is")


class PerStudentFiguresTest(unittest.TestCase):
    def test_students_whose_names_differ_only_in_odd_characters_get_one_figure_each(self):
        students = ["a+b", "a_b", "a%2Bb", "a@b", "A+B", "=HYPERLINK(1)", "+cmd", "José María", "王" * 70, "a$b$"]
        rows = ["reference,02_atomic,float,16777216,385.0,373.0,7.7,10.9,0.3,,,ok,GPU,2026-11-21"]
        rows += [f"\"{csv_cell(name)}\",02_atomic,float,16777216,{400.0 + 50 * k},{390.0 + 50 * k},7.0,10.0,0.3,"
                 f"385.0,{(400.0 + 50 * k) / 385:.3f},ok,GPU,2026-11-21" for k, name in enumerate(students)]
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

    def test_a_cjk_name_is_drawn_in_a_font_that_has_it_where_one_is_installed(self):
        from plotting import style
        if not any(name in style._INSTALLED for name in style.FALLBACK_FONTS):
            self.skipTest("no font with CJK glyphs is installed here (fonts-noto-cjk or fonts-wqy-zenhei)")
        rows = ["reference,02_atomic,float,16777216,385.0,373.0,7.7,10.9,0.3,,,ok,GPU,2026-11-21",
                "王小明,02_atomic,float,16777216,400.0,390.0,7.0,10.0,0.3,385.0,1.04,ok,GPU,2026-11-21"]
        with tempfile.TemporaryDirectory() as folder:
            csv_path = os.path.join(folder, "timings.csv")
            with open(csv_path, "w", encoding="utf-8") as handle:
                handle.write(",".join(COLUMNS) + "\n" + "\n".join(rows) + "\n")
            with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("always")
                status = rp.main([csv_path, "--out", os.path.join(folder, "plots"), "--figures", "per-student,status",
                                  "--formats", "png"])
        self.assertEqual(status, 0)
        self.assertEqual([str(w.message) for w in caught if "missing from current font" in str(w.message)], [])


if __name__ == "__main__":
    unittest.main()
