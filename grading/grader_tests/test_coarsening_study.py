"""grading/coarsening_study.py without a GPU: the variants and their nvcc lines (the study's knob
set, the manifest's flags), the merged CSV (each variant's rows, the reference and baselines of the
first run only, so that it loads as a timings CSV), and its arguments."""

import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader.manifest import Manifest

sys.path.insert(0, str(REPO / "plots"))
import coarsening_study as study  # noqa: E402  (grading/ is on the path: grader_tests.helpers)
from plotting.timings import COLUMNS, load_timings  # noqa: E402

HEADER = ",".join(COLUMNS)


def run_csv(student: str, median: str) -> str:
    return "\n".join([HEADER, f"{student},10_two_step,float,16777216,{median},,,,,,,ok,gpu,2026-12-01",
                      "reference,10_two_step,float,16777216,30.0,,,,,,,ok,gpu,2026-12-01",
                      "baseline,cub,float,16777216,28.0,,,,,,,ok,gpu,2026-12-01"]) + "\n"


class CoarseningStudyTest(unittest.TestCase):
    def test_the_lab_as_it_is_comes_first_then_each_c(self):
        self.assertEqual([(v.name, v.coarsening) for v in study.variants([1, 32])],
                         [("one wave", 0), ("C=1", 1), ("C=32", 32)])

    def test_each_variant_is_built_with_the_manifests_flags_and_its_c(self):
        manifest = Manifest(Path("/src"), Path("/build"), None, "/cuda/bin/nvcc", ["-O3", "-shared"], ["/src/common/include"])
        command = study.compile_command(manifest, Path("/src/labs/10_two_step/two_step.cu"), study.Variant("C=8", 8),
                                        Path("/out/C8/lab10_two_step.so"))
        self.assertEqual(command, ["/cuda/bin/nvcc", "-O3", "-shared", "-I/src/common/include",
                                   "-DREDUCTION_LAB10_COARSENING=8", "/src/labs/10_two_step/two_step.cu",
                                   "-o", "/out/C8/lab10_two_step.so"])

    def test_the_merged_csv_has_one_row_per_student_lab_type_and_n(self):
        merged = study.merge([run_csv("one wave", "29.0"), run_csv("C=1", "40.0"), run_csv("C=32", "29.5")])
        lines = merged.splitlines()
        self.assertEqual(lines[0], HEADER)
        self.assertEqual([line.split(",")[0] for line in lines[1:]], ["one wave", "reference", "baseline", "C=1", "C=32"])
        with tempfile.TemporaryDirectory() as tmp:  # the plots load it: no duplicate rows
            (Path(tmp) / "coarsening.csv").write_text(merged, encoding="utf-8")
            self.assertEqual(len(load_timings(Path(tmp) / "coarsening.csv")), 5)

    def test_the_lab_source_exists_and_has_the_knob(self):
        # The knob is in the fixed part: the skeleton and the solution both have it.
        for tree in ("labs", "solutions"):
            text = (REPO / tree / "10_two_step" / "two_step.cu").read_text(encoding="utf-8")
            self.assertIn("#ifndef REDUCTION_LAB10_COARSENING", text, tree)

    def test_c_must_be_positive(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            study.parse_args(["--coarsening", "0,4"])
        self.assertEqual(study.parse_args(["--coarsening", "8,1,8"]).coarsening, [1, 8])


if __name__ == "__main__":
    unittest.main()
