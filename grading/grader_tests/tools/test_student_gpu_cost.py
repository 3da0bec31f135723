"""grading/tools/student_gpu_cost.py without a GPU: the simulated toolchain stands in for the runner,
the checker and compute-sanitizer, so what is run (every GPU lab's reference, the test plans and the
policy's small sanitizer plans, each configuration's runs) and the printed lines can be checked; a
run that does not come back right marks its line and the exit status; no build or no GPU is a clear
error, not a table of nothing."""

import collections
import io
import json
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from grader_tests.helpers import GRADING, REPO, FakeToolchain
from grader.manifest import MANIFEST_NAME
from grader.policy import Policy
from tools import student_gpu_cost

LABS = [("01_host_sum", "host_sum.cpp"), ("02_atomic", "atomic.cu"), ("05_sequential", "sequential.cu"),
        ("10_two_step", "two_step.cu")]
GPU = [folder for folder, _ in LABS[1:]]


class Recording(FakeToolchain):
    """The simulated toolchain, recording the plans asked for; `wrong`: a lab whose tests fail."""

    def __init__(self, wrong=None, gpu=True):
        super().__init__({STUDENT: {wrong: {"verdict": "WRONG_ANSWER", "why": ""}}} if wrong else {}, gpu=gpu)
        self.made = []

    def make_plan(self, lab, seed, path, large=False, cases=None):
        self.made.append((lab.folder, tuple(cases or ())))
        super().make_plan(lab, seed, path, large, cases)


STUDENT = student_gpu_cost.STUDENT


class StudentGpuCostTest(unittest.TestCase):
    def setUp(self):
        self.build = Path(tempfile.mkdtemp(prefix="student-gpu-cost-"))
        self.addCleanup(lambda: __import__("shutil").rmtree(self.build, ignore_errors=True))
        references = self.build / "solutions"
        references.mkdir()
        labs = []
        for folder, file in LABS:
            module = f"lab{folder}"
            # the simulated runner reads a "module" as text: any text but not_implemented passes
            (references / f"{module}.so").write_text("// ==== BEGIN STUDENT CODE ====\n", encoding="utf-8")
            labs.append({"folder": folder, "file": file, "module": module})
        (self.build / MANIFEST_NAME).write_text(json.dumps({
            "source_dir": str(REPO), "binary_dir": str(self.build), "reference_dir": str(references),
            "nvcc": "nvcc", "module_flags": [], "include_dirs": [], "labs": labs}), encoding="utf-8")

    def run_tool(self, tools, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = student_gpu_cost.main(["--build-dir", str(self.build), *args], tools=tools)
        return status, out.getvalue().splitlines(), err.getvalue()

    def test_every_configuration_runs_the_gpu_labs_references(self):
        tools = Recording()
        status, lines, err = self.run_tool(tools, "--at-once", "3")
        self.assertEqual(status, 0, err)
        cases = tuple(Policy.load(GRADING / "policy.toml").sanitizer.cases)
        self.assertEqual(sorted(tools.made), sorted([(folder, ()) for folder in GPU] + [(folder, cases) for folder in GPU]),
                         "a test plan and a small sanitizer plan of each GPU lab; none of the host lab")
        calls = collections.Counter((call[0], call[2] if call[0] != "sanitizer_labs" else (call[2], call[3]))
                                    for call in tools.calls if call[0] in ("tests", "tests_labs", "sanitizer_labs"))
        self.assertEqual(calls[("tests_labs", tuple(GPU))], 1 + 3, "one shared run, then 3 at once")
        self.assertEqual([calls[("tests", folder)] for folder in GPU], [1, 1, 1])
        for tool in ("memcheck", "racecheck", "synccheck"):
            # alone over every lab, over the first lab, then the tools at once, then 3 students' at once
            self.assertEqual(calls[("sanitizer_labs", (tuple(GPU), tool))], 1 + 1 + 3, tool)
            self.assertEqual(calls[("sanitizer_labs", ((GPU[0],), tool))], 1, tool)
        self.assertEqual(len(lines), 3 + 2 * 3 + 2)
        self.assertIn("tests: 3 labs in one runner", lines[0])
        self.assertIn("3 runners of the 3 labs at once", lines[2])
        self.assertIn("3 students' tools at once (9 runs)", lines[-1])
        self.assertTrue(all(line.endswith(" s") for line in lines), lines)

    def test_the_students_at_once_are_the_policys_by_default(self):
        status, lines, err = self.run_tool(Recording())
        self.assertEqual(status, 0, err)
        count = Policy.load(GRADING / "policy.toml").pipeline.students
        self.assertIn(f"tests: {count} runners of the 3 labs at once", lines[2])

    def test_a_run_that_is_not_right_marks_its_line_and_the_status(self):
        status, lines, _ = self.run_tool(Recording(wrong="05_sequential"))
        self.assertEqual(status, 1)
        marked = [line for line in lines if "NOT RIGHT" in line]
        self.assertEqual([line.split(":")[0] for line in marked], ["tests"] * 3, lines)

    def test_no_gpu_or_no_build_is_a_clear_error(self):
        status, lines, err = self.run_tool(Recording(gpu=False))
        self.assertEqual((status, lines), (2, []))
        self.assertIn("no GPU", err)
        (self.build / MANIFEST_NAME).unlink()
        status, lines, err = self.run_tool(Recording())
        self.assertEqual((status, lines), (2, []))
        self.assertIn("not found", err)


if __name__ == "__main__":
    unittest.main()
