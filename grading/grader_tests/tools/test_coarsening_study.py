"""grading/tools/coarsening_study.py without a GPU: the variants and their nvcc lines (the study's knob
set, the manifest's flags), the one reduction_bench run that times them all (every variant a
--variant NAME:DIR; the bench's own side is the CTest bench.variants_side_by_side), and its
arguments."""

import contextlib
import io
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader.manifest import Manifest

from tools import coarsening_study as study  # noqa: E402  (grading/ is on the path: grader_tests.helpers)


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

    def test_one_bench_run_times_every_variant_beside_the_reference(self):
        folders = {variant: Path("/out") / variant.name.replace("=", "").replace(" ", "_")
                   for variant in study.variants([1, 32])}
        args = study.parse_args(["--sizes", "2^20,2^28", "--types", "float,int"])
        command = study.bench_command(Path("/build/reduction_bench"), folders, args, Path("/out/coarsening.csv"))
        self.assertEqual(command, ["/build/reduction_bench", "--labs", "10",
                                   "--variant", "one wave:/out/one_wave", "--variant", "C=1:/out/C1",
                                   "--variant", "C=32:/out/C32", "--sizes", "2^20,2^28", "--types", "float,int",
                                   "--budget", "0.5", "--csv", "/out/coarsening.csv"])
        self.assertTrue(all(":" not in variant.name for variant in folders))   # the bench splits at the first ':'

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
