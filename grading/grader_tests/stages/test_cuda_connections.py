"""Which runs get a context of [tests] cuda_connections hardware queues (CUDA_DEVICE_MAX_CONNECTIONS):
a grader's test and sanitizer runs of GPU labs, where a context made and ended faster frees the
host's driver for every other CUDA process; never a timing run (its streams keep the driver's
default, as on the student's own machine), nor a host lab's test run, nor anything when the
setting is 0. The real Toolchain builds each command and environment; only the process is not
started (run_process is replaced by a recorder)."""

import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader.manifest import Lab, Manifest
from grader.sandbox.bubblewrap import Sandbox
from grader.sandbox.process import ProcessResult
from grader.settings import TestsSettings
from grader.stages import toolchain as toolchain_module
from grader.stages.toolchain import CONNECTIONS_VARIABLE, Toolchain
from grader_tests.helpers import REPO

LAB01 = Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum")
LAB05 = Lab("05_sequential", "sequential.cu", "lab05_sequential")
LAB09 = Lab("09_shuffle", "shuffle.cu", "lab09_shuffle")


class Recorded:
    """Every run_process call of the toolchain: its command and environment."""

    def __init__(self):
        self.calls: list[tuple[list[str], dict | None]] = []

    def __call__(self, command, timeout, env=None, **_):
        self.calls.append((list(command), None if env is None else dict(env)))
        return ProcessResult(returncode=0)


def connections_of(call) -> str | None:
    """The variable's value in a run's environment, or on its `env -i` command line (a timing run's
    sandbox gets its environment that way, through the timekeeper)."""
    command, env = call
    if env is not None and CONNECTIONS_VARIABLE in env:
        return env[CONNECTIONS_VARIABLE]
    prefix = CONNECTIONS_VARIABLE + "="
    return next((word[len(prefix):] for word in command if word.startswith(prefix)), None)


class WhichRunsGetFewConnections(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp(prefix="connections-"))
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        self.recorded = Recorded()
        patcher = mock.patch.object(toolchain_module, "run_process", self.recorded)
        patcher.start()
        self.addCleanup(patcher.stop)
        timing_patcher = mock.patch("grader.stages.timing_runs.run_process", self.recorded)
        timing_patcher.start()
        self.addCleanup(timing_patcher.stop)

    def tools(self, connections: int) -> Toolchain:
        manifest = Manifest(source_dir=REPO, binary_dir=REPO / "build", reference_dir=REPO / "build", nvcc="/bin/true",
                            module_flags=[], include_dirs=[], labs=[LAB01, LAB05, LAB09])
        return Toolchain(manifest, Sandbox(False, "test"), cuda_connections=connections)

    def file(self, name: str) -> Path:
        path = self.work / name
        path.write_text("", encoding="utf-8")
        return path

    def runs(self, tools: Toolchain, what) -> list:
        """The sandboxed runs `what(tools)` started (the checker's trusted runs have the grader's own
        environment: run_process gets none)."""
        before = len(self.recorded.calls)
        what(tools)
        return [call for call in self.recorded.calls[before:] if call[1] is not None or "-i" in call[0]]

    def gpu_runs(self, tools: Toolchain) -> dict[str, list]:
        labs = [(lab, self.file(f"{lab.module}.so"), self.file(f"{lab.folder}.plan")) for lab in (LAB05, LAB09)]
        lab, module, plan = labs[0]
        return {
            "one lab's test run": self.runs(tools, lambda t: t.run_tests("amy", lab, module, plan, self.work, 60, 20)),
            "the labs' test run": self.runs(tools, lambda t: t.run_tests_labs("amy", labs, self.work, 60, 20)),
            "a sanitizer run": self.runs(tools, lambda t: t.run_sanitizer_labs("amy", labs, "memcheck", 60, 20)),
        }

    def test_the_test_and_sanitizer_runs_of_gpu_labs_get_the_setting(self):
        for connections in (1, 4):
            for what, runs in self.gpu_runs(self.tools(connections)).items():
                with self.subTest(connections=connections, run=what):
                    self.assertEqual(len(runs), 1, runs)
                    self.assertEqual(connections_of(runs[0]), str(connections))

    def test_zero_leaves_the_drivers_default(self):
        for what, runs in self.gpu_runs(self.tools(0)).items():
            with self.subTest(run=what):
                self.assertEqual(len(runs), 1, runs)
                self.assertIsNone(connections_of(runs[0]))

    def test_a_host_labs_test_run_has_no_context_to_set(self):
        tools = self.tools(1)
        module, plan = self.file("lab01_host_sum.so"), self.file("01_host_sum.plan")
        runs = self.runs(tools, lambda t: t.run_tests("amy", LAB01, module, plan, self.work, 60, 20))
        self.assertEqual(len(runs), 1, runs)
        self.assertIsNone(connections_of(runs[0]))

    def test_a_timing_run_keeps_the_drivers_default(self):
        tools = self.tools(1)
        module = self.file("lab05_sequential.so")
        for sandboxed in (True, False):
            with self.subTest(sandboxed=sandboxed):
                before = len(self.recorded.calls)
                tools.time("plan text", self.work, sandboxed, (module,), gpu=True, timeout=60, call_timeout=20)
                started = self.recorded.calls[before:]
                self.assertTrue(started)
                self.assertTrue(all(connections_of(call) is None for call in started), started)

    def test_the_policy_default_is_one_connection(self):
        self.assertEqual(TestsSettings().cuda_connections, 1)


if __name__ == "__main__":
    unittest.main()
