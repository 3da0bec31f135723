"""The timekeeper on the GPU: lab 10's reference timed trusted and as a student's (sandboxed where
possible). A CTest entry of its own (grader.timekeeper_gpu, RUN_SERIAL), not in grader.unit: it
compares times, so nothing else may run on the GPU meanwhile (another process's work moves a call's
time and the timekeeper's stamps). Skipped, saying so, where no GPU is present. REDUCTION_CHECKER,
set by CTest, names the build's checker."""

import os
import shutil
import subprocess
from pathlib import Path

from grader.stages.benchmark import clock_problem
from grader.sandbox.bubblewrap import Sandbox
from grader.stages.toolchain import Toolchain
from grader_tests.helpers import main_with_skip_code
from grader_tests.stages import test_timekeeper as host_tests  # a module: its TestCase is not collected here again


class GpuTimekeeper(host_tests.RealTimekeeper):
    """RealTimekeeper's set-up (the build's manifest, a work folder) and a device lab."""

    def _device_lab(self):
        if shutil.which("nvidia-smi") is None or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode:
            self.skipTest("no GPU on this machine (nvidia-smi -L finds none)")
        return next(lab for lab in self.manifest.labs if lab.folder.startswith("10_"))

    def test_a_device_run_reads_the_timekeepers_inputs_and_its_clock_agrees_with_an_honest_claim(self):
        """The reference of lab 10, once trusted and once as a student's (sandboxed where possible): every
        call on the input the timekeeper wrote just before its go, every sum right, and the honest
        student's calls take no more beyond their claim than the reference's (benchmark.clock_problem)."""
        lab = self._device_lab()
        sandbox = Sandbox.detect(hidden=(self.manifest.source_dir, self.manifest.binary_dir))
        tools = Toolchain(self.manifest, sandbox)
        self.assertTrue(tools.gpu_available())
        module = self.work / lab.module_file
        shutil.copy(self.manifest.reference_module(lab), module)
        os.chmod(module, 0o644)
        runs = {}
        for who, path, sandboxed in (("reference", self.manifest.reference_module(lab), False),
                                     ("student", module, sandbox.enabled)):
            items = [f"t00{k + 1},{lab.folder},device,{dtype},{1 << 24},{path}" for k, dtype in enumerate(("int", "float"))]
            run = tools.time(tools.timing_plan(13, items, 25, 3, 20.0), self.work, sandboxed, (module,), True, 300.0,
                             20.0, self.work / "expected.txt")
            self.assertIsNotNone(run.check, run.problem + run.process.stderr[-800:])
            self.assertEqual(run.check.inputs, "shared", run.check.inputs_why)
            self.assertEqual((run.check.tampered, run.check.clock_error), ("", ""))
            runs[who] = {timed.type: timed for timed in run.check.items}
        for dtype in ("int", "float"):
            student, reference = runs["student"][dtype], runs["reference"][dtype]
            for timed in (student, reference):
                self.assertTrue(timed.verified, timed.problem)
                self.assertEqual((timed.samples, timed.clocked, timed.inputs), (25, 25, "shared"))
            print(f"\n{dtype}: reference {reference.median_us:.2f} us (excess {reference.excess_us:.1f}, min "
                  f"{reference.excess_min_us:.1f}, prep {reference.prep_us:.1f}), student {student.median_us:.2f} us "
                  f"(excess {student.excess_us:.1f}, min {student.excess_min_us:.1f}, prep {student.prep_us:.1f})")
            self.assertLess(abs(student.median_us / reference.median_us - 1), 0.05)
            self.assertEqual(clock_problem(student, reference.excess_us, 25.0, 0.15), "")



# The host tests of the base class run in grader.unit already: not here again.
for _name in [n for n in vars(host_tests.RealTimekeeper) if n.startswith("test_")]:
    setattr(GpuTimekeeper, _name, None)

if __name__ == "__main__":
    main_with_skip_code()
