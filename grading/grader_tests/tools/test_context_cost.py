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
        self.fake.write_text('#!/bin/sh\necho "$CUDA_VISIBLE_DEVICES ${CUDA_DEVICE_MAX_CONNECTIONS:-unset} $1 $2" '
                             '>> "%s"\n' % self.log)
        self.fake.chmod(0o755)

    def run_tool(self, **env):
        return subprocess.run(["bash", str(TOOL), str(self.folder)], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "REDUCTION_LAB_TESTS": str(self.fake), **env})

    def started(self):
        return [line.split() for line in self.log.read_text().splitlines()]

    def test_five_configurations_per_connections_setting_each_of_every_gpu_lab_runs_per_lab_times(self):
        done = self.run_tool(GPUS="3 5", AT_ONCE="2", RUNS_PER_LAB="2")   # CONNECTIONS: "default 1"
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual([line.split(":")[0].split(" (")[0] for line in lines],
                         ["warm-up", "CUDA_DEVICE_MAX_CONNECTIONS", "A", "B", "C", "D", "E",
                          "CUDA_DEVICE_MAX_CONNECTIONS", "A", "B", "C", "D", "E"])
        self.assertEqual((lines[1], lines[7]), ("CUDA_DEVICE_MAX_CONNECTIONS: default", "CUDA_DEVICE_MAX_CONNECTIONS: 1"))
        timed = [line for line in lines if not line.startswith("CUDA_")]
        self.assertTrue(all(" runs 22 " in line for line in timed), lines)
        self.assertIn("A: 2 at a time, GPU 3", lines[2])
        self.assertIn("C: 4 at a time, GPUs 3 5", lines[4])
        started = self.started()
        self.assertEqual(len(started), 11 * 22)
        self.assertTrue(all(filter_ == "--gtest_filter=Small.*" for _, _, _, filter_ in started))
        modules = collections.Counter(Path(lab.removeprefix("--lab=")).stem for _, _, lab, _ in started)
        self.assertEqual(modules, {lab: 11 * 2 for lab in LABS})
        gpus = collections.Counter(gpu for gpu, _, _, _ in started)
        # warm-up, then twice B and C deal 22 runs over GPUs 3 and 5 (11 each); A, D and E put all 22 on GPU 3
        self.assertEqual(gpus, {"3": 5 * 11 + 6 * 22, "5": 5 * 11})
        # the warm-up and the first five with the driver's default, the last five with one queue
        self.assertEqual([queues for _, queues, _, _ in started], ["unset"] * 6 * 22 + ["1"] * 5 * 22)

    def test_connections_lists_the_settings_in_order(self):
        done = self.run_tool(GPUS="0", AT_ONCE="4", RUNS_PER_LAB="1", CONNECTIONS="2")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.splitlines()[1], "CUDA_DEVICE_MAX_CONNECTIONS: 2")
        self.assertEqual(collections.Counter(queues for _, queues, _, _ in self.started()), {"unset": 11, "2": 5 * 11})

    def test_wrap_puts_a_command_before_every_process_and_says_so(self):
        wrapper = self.folder / "sanitizer"
        wrapper.write_text('#!/bin/sh\necho "wrapped $1 $2" >> "%s"\nshift 2\nexec "$@"\n' % self.log)
        wrapper.chmod(0o755)
        done = self.run_tool(GPUS="0", AT_ONCE="4", RUNS_PER_LAB="1", CONNECTIONS="default", WRAP=f"{wrapper} --tool memcheck")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.splitlines()[0], f"each process wrapped in: {wrapper} --tool memcheck")
        lines = self.log.read_text().splitlines()
        wrapped = [line for line in lines if line.startswith("wrapped")]   # processes run side by side: any order
        self.assertEqual(wrapped, ["wrapped --tool memcheck"] * 6 * 11)      # the warm-up and A to E, 11 labs each
        self.assertEqual(len([line for line in lines if line.startswith("0 unset --lab=")]), 6 * 11)
        self.assertEqual(len(lines), 2 * 6 * 11)

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
