"""grading/tools/context_cost.sh without a GPU: a fake test binary records the GPU and module of
every process it is started as, so the configurations' dealing (every module RUNS_PER_LAB times,
round robin over the GPUs named, or all on the first) and the printed lines can be checked; and a
missing binary or build gets a clear error, not a table of nothing."""

import collections
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO

TOOL = REPO / "grading" / "tools" / "context_cost.sh"
LABS = ["lab02_atomic", "lab03_shared_atomic", "lab04_interleaved", "lab05_sequential", "lab06_first_add",
        "lab07_last_warp", "lab08_complete_unroll", "lab09_shuffle", "lab10_two_step", "lab11_single_pass",
        "lab12_any_operator"]


class ContextCostTest(unittest.TestCase):
    def setUp(self):
        self.folder = Path(tempfile.mkdtemp(prefix="context-cost-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(self.folder)], check=False)
        (self.folder / "solutions").mkdir()
        for lab in LABS + ["lab01_host_sum"]:   # lab 01 runs on the host: not one of the processes
            (self.folder / "solutions" / f"{lab}.so").write_bytes(b"")
        self.log = self.folder / "started.log"
        self.fake = self.folder / "reduction_lab_tests"
        self.fake.write_text('#!/bin/sh\necho "$CUDA_VISIBLE_DEVICES $1 $2" >> "%s"\n' % self.log)
        self.fake.chmod(0o755)

    def run_tool(self, **env):
        return subprocess.run(["bash", str(TOOL), str(self.folder)], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "REDUCTION_LAB_TESTS": str(self.fake), **env})

    def started(self):
        return [line.split() for line in self.log.read_text().splitlines()]

    def test_six_configurations_each_of_every_gpu_lab_runs_per_lab_times(self):
        done = self.run_tool(GPUS="3 5", AT_ONCE="2", RUNS_PER_LAB="2")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual([line.split(":")[0].split(" (")[0] for line in lines],
                         ["warm-up", "A", "B", "C", "D", "E"])
        self.assertTrue(all(" runs 22 " in line for line in lines), lines)
        self.assertIn("A: 2 at a time, GPU 3", lines[1])
        self.assertIn("C: 4 at a time, GPUs 3 5", lines[3])
        started = self.started()
        self.assertEqual(len(started), 6 * 22)
        self.assertTrue(all(filter_ == "--gtest_filter=Small.*" for _, _, filter_ in started))
        modules = collections.Counter(Path(lab.removeprefix("--lab=")).stem for _, lab, _ in started)
        self.assertEqual(modules, {lab: 6 * 2 for lab in LABS})
        gpus = collections.Counter(gpu for gpu, _, _ in started)
        # warm-up, B and C deal 22 runs over GPUs 3 and 5 (11 each); A, D and E put all 22 on GPU 3
        self.assertEqual(gpus, {"3": 3 * 11 + 3 * 22, "5": 3 * 11})

    def test_no_test_binary_or_no_modules_is_a_clear_error(self):
        done = self.run_tool(REDUCTION_LAB_TESTS=str(self.folder / "missing"))
        self.assertEqual(done.returncode, 2)
        self.assertIn("no test binary", done.stderr)
        for module in (self.folder / "solutions").iterdir():
            module.unlink()
        done = self.run_tool()
        self.assertEqual(done.returncode, 2)
        self.assertIn("no lab modules", done.stderr)
        self.assertFalse(self.log.exists())


if __name__ == "__main__":
    unittest.main()
