"""compute-sanitizer's log on a channel of its own, in the real sandbox (bubblewrap, as root; skipped
elsewhere): a stand-in for the tool (fake_compute_sanitizer.py) that behaves as the real one does with
--log-file runs a stand-in runner (fake_runner.py) or the real one (REDUCTION_OBSERVER, set by CTest)
with a module that writes a clean summary everywhere it can. What the program prints, and what it
writes into its own descriptors, must never reach the finding; what it writes through /proc into
the tool's log can only make a finding."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader_tests.helpers import REPO
from grader.manifest import Lab, Manifest
from grader.sandbox.bubblewrap import Sandbox
from grader.judge.sanitizer_findings import CLEAN, HAZARDS, UNREADABLE, sanitizer_finding
from grader.judge.sanitizer_log import BANNER, LogChannel
from grader.stages.toolchain import Toolchain

HERE = Path(__file__).resolve().parents[1]   # grader_tests/: the fake tools
LAB01 = Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum")


class ChannelCase(unittest.TestCase):
    sandbox = Sandbox(enabled=False, reason="not detected yet")

    @classmethod
    def setUpClass(cls):
        cls.sandbox = Sandbox.detect(hidden=[REPO])
        if not cls.sandbox.enabled:
            raise unittest.SkipTest(f"bubblewrap sandbox unavailable here: {cls.sandbox.reason}")

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sanitizer-channel-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.tmp.chmod(0o755)   # the run's uid reads what the view shows as "others"
        tool = self.tmp / "tool" / "bin"
        tool.mkdir(parents=True)
        self.tool = tool / "compute-sanitizer"
        shutil.copy(HERE / "fake_compute_sanitizer.py", self.tool)
        for path in (self.tool, tool, tool.parent):
            path.chmod(0o755)

    def behave(self, **behaviour) -> None:
        """What the fake tool reports next (fake_compute_sanitizer.py)."""
        path = self.tool.parent.parent / "fake-sanitizer.json"
        path.write_text(json.dumps(behaviour))
        path.chmod(0o644)

    def toolchain(self, build: Path) -> Toolchain:
        # nvcc: any program that does not answer a dry run; the toolkit's folder is then guessed as /usr
        tools = Toolchain(Manifest(REPO, build, None, shutil.which("true") or "/bin/true", [], []), self.sandbox)
        tools._sanitizer = str(self.tool)
        return tools

    def file(self, name: str, text: str) -> Path:
        path = self.tmp / name
        path.write_text(text)
        path.chmod(0o644)
        return path


class TheChannelWithAStandInRunner(ChannelCase):
    def setUp(self):
        super().setUp()
        runner = self.tmp / "build" / "grading" / "runner" / "reduction_lab_observe"
        runner.parent.mkdir(parents=True)
        shutil.copy(HERE / "fake_runner.py", runner)
        for path in (runner, *list(runner.parents)[:3]):
            path.chmod(0o755)
        self.tools = self.toolchain(self.tmp / "build")

    def sanitize(self, tool: str, *words: str):
        module = self.file("module.txt", "\n".join(words) + "\n")
        result = self.tools.run_sanitizer("amy", LAB01, tool, module, self.file("plan.txt", "plan\n"), 60, 30)
        return result, sanitizer_finding(tool, result)

    def test_the_tools_log_arrives_on_its_channel_and_the_program_keeps_its_output(self):
        self.behave(hazards=2)
        result, finding = self.sanitize("racecheck", "print")
        self.assertTrue(result.log.startswith(BANNER + "\n"), result.log)
        self.assertEqual((finding.status, finding.count), (HAZARDS, 2), finding.note)
        self.assertNotIn("Race reported", result.stdout + result.stderr, "the tool's lines are on its log only")
        self.assertIn("RACECHECK SUMMARY: 0 hazards", result.stdout, "the program's printing is its own output")
        self.assertIn("RACECHECK SUMMARY: 0 hazards", finding.program_output)

    def test_a_clean_run_is_clean(self):
        self.behave(hazards=0)
        self.assertEqual(self.sanitize("memcheck")[1].status, CLEAN)

    def test_what_the_program_writes_into_its_own_descriptors_never_reaches_the_log(self):
        self.behave(hazards=2)
        result, finding = self.sanitize("racecheck", "print", "own")
        self.assertEqual((finding.status, finding.count), (HAZARDS, 2), finding.note)
        self.assertEqual(result.log.count("SUMMARY"), 1, result.log)

    def test_a_runner_that_kept_the_log_would_let_the_program_write_into_it(self):
        # the control: without the runner's closing, the same writes reach the log (and only garble it)
        self.behave(hazards=0)
        result, finding = self.sanitize("racecheck", "keep", "own")
        self.assertIn("0 hazards displayed (0 errors, 0 warnings)\n", result.log.split("\n", 1)[1])
        self.assertEqual((finding.status, finding.count), (UNREADABLE, 1))

    def test_what_the_program_writes_through_proc_can_only_make_a_finding(self):
        for hazards in (0, 2):
            self.behave(hazards=hazards)
            result, finding = self.sanitize("racecheck", "proc")
            self.assertIn("wrote into it", finding.note, result.log)
            self.assertEqual((finding.status, finding.count), (UNREADABLE, 1))

    def test_the_program_cannot_open_the_log_to_take_the_tools_lines_out(self):
        self.behave(hazards=2)
        result, finding = self.sanitize("racecheck", "drain")
        self.assertNotIn("opened a pipe to read", result.stdout)
        self.assertEqual((finding.status, finding.count), (HAZARDS, 2), finding.note)
        with mock.patch.object(LogChannel, "MODE", 0o606):   # the control: a log the program may read
            result, finding = self.sanitize("racecheck", "drain")
        self.assertIn("opened a pipe to read", result.stdout, "the control: the program could open the log")

    def test_a_log_the_tool_left_unfinished_doubled_or_contradicted_is_a_finding_that_says_so(self):
        cases = ({"summary": "none"}, "holds no summary"), ({"summary": "two"}, "holds 2 summaries"), \
                ({"after": "========= Error: late\n"}, "lines after its summary"), \
                ({"status": 99}, "they disagree"), ({"status": 7}, "neither 0 nor 99")
        for behaviour, said in cases:
            self.behave(hazards=0, **behaviour)
            finding = self.sanitize("memcheck")[1]
            self.assertEqual((finding.status, finding.count), (UNREADABLE, 1), said)
            self.assertIn(said, finding.note)


class TheRealRunnerUnderAStandInTool(ChannelCase):
    """reduction_lab_observe itself, with a lab 01 module that writes a clean summary into every
    descriptor it has when it loads and on every call (grading/tests/fixtures/lab01_log_writer.cpp)."""

    def setUp(self):
        super().setUp()
        paths = {name: Path(os.environ.get(name, "/nonexistent")).resolve() for name in
                 ("REDUCTION_OBSERVER", "REDUCTION_CHECKER", "REDUCTION_LAB01_REFERENCE", "REDUCTION_LOG_WRITER_MODULE")}
        missing = [name for name, path in paths.items() if not path.is_file()]
        if missing:
            self.skipTest(f"{', '.join(missing)} name no built program (run through ctest -R grader.unit)")
        self.module = paths["REDUCTION_LOG_WRITER_MODULE"]
        self.tools = self.toolchain(paths["REDUCTION_OBSERVER"].parents[2])
        self.plan = self.tmp / "01.plan"
        made = subprocess.run([str(paths["REDUCTION_CHECKER"]), "plan", "--lab=01_host_sum", "--where=host", "--seed=7",
                               f"--reference={paths['REDUCTION_LAB01_REFERENCE']}", "--cases=int mixed_sign 33"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.file("01.plan", made.stdout)

    def sanitize(self):
        result = self.tools.run_sanitizer("amy", LAB01, "racecheck", self.module, self.plan, 120, 60)
        return result, sanitizer_finding("racecheck", result)

    def test_the_runner_closes_every_copy_of_the_log_before_the_module_loads(self):
        self.behave(hazards=2)
        result, finding = self.sanitize()
        self.assertIn("ERROR SUMMARY: 0 errors", result.stdout, "the module ran and wrote (its stdout)")
        self.assertEqual((finding.status, finding.count), (HAZARDS, 2), result.log + result.stderr)
        self.assertEqual(result.log.count("SUMMARY"), 1, result.log)

    def test_one_run_over_several_labs_closes_the_log_before_the_first_module_loads(self):
        self.behave(hazards=2)
        result = self.tools.run_sanitizer_labs("amy", [(LAB01, self.module, self.plan)] * 2, "racecheck", 120, 60)
        finding = sanitizer_finding("racecheck", result)
        # one write at load (one module, loaded once) and one a call: a lab alone writes two
        self.assertEqual(result.stdout.count("ERROR SUMMARY: 0 errors"), 3, "both labs ran and wrote")
        self.assertEqual((finding.status, finding.count), (HAZARDS, 2), result.log + result.stderr)
        self.assertEqual(result.log.count("SUMMARY"), 1, result.log)

    def test_without_the_runners_closing_the_module_reaches_the_log(self):
        self.behave(hazards=2)
        with mock.patch.object(LogChannel, "runner_argv", lambda channel: []):
            result, finding = self.sanitize()
        self.assertIn("ERROR SUMMARY: 0 errors", result.log, "the control: the module's writes reached the log")
        self.assertEqual(finding.status, UNREADABLE)


class TheRealToolOnAGpu(ChannelCase):
    """On a machine with a GPU and compute-sanitizer: the real tool writes its whole report on the
    channel (--log-file /proc/self/fd/N in the sandbox), in the shape read_log wants, and the real
    runner under it still works with its copies closed: the racy lab 07 fixture has racecheck
    hazards there, the reference is clean under every tool. Skipped elsewhere, saying why."""

    def setUp(self):
        super().setUp()
        paths = {name: Path(os.environ.get(name, "/nonexistent")).resolve() for name in
                 ("REDUCTION_OBSERVER", "REDUCTION_CHECKER", "REDUCTION_LAB07_REFERENCE", "REDUCTION_LAB07_RACY")}
        missing = [name for name, path in paths.items() if not path.is_file()]
        if missing:
            self.skipTest(f"{', '.join(missing)} name no built program (run through ctest -R grader.unit)")
        self.tools = Toolchain(Manifest(REPO, paths["REDUCTION_OBSERVER"].parents[2], None,
                                        shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc", [], []), self.sandbox)
        if not self.tools.gpu_available():
            self.skipTest("no CUDA GPU here")
        if not self.tools.sanitizer_available():
            self.skipTest("no compute-sanitizer here")
        self.paths = paths
        made = subprocess.run([str(paths["REDUCTION_CHECKER"]), "plan", "--lab=07_last_warp", "--where=device",
                               "--seed=7", f"--reference={paths['REDUCTION_LAB07_REFERENCE']}",
                               "--cases=int mixed_sign 2049;float uniform_positive 1025"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.plan = self.file("07.plan", made.stdout)

    def sanitize(self, tool: str, module: str):
        lab = Lab("07_last_warp", "last_warp.cu", "lab07_last_warp")
        result = self.tools.run_sanitizer("", lab, tool, self.paths[module], self.plan, 300, 120)
        return result, sanitizer_finding(tool, result)

    def test_the_reference_is_clean_under_every_tool_on_the_channel(self):
        for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
            result, finding = self.sanitize(tool, "REDUCTION_LAB07_REFERENCE")
            self.assertEqual(finding.status, CLEAN, f"{tool}: {finding.note}\n{result.log}\n{result.stderr[-2000:]}")
            self.assertTrue(result.log.startswith(BANNER + "\n"), result.log)
            self.assertNotIn("SUMMARY", result.stdout + result.stderr, "the tool's lines belong on its log")

    def test_one_run_over_several_labs_is_clean_when_each_is_and_not_when_one_is_not(self):
        lab = Lab("07_last_warp", "last_warp.cu", "lab07_last_warp")
        reference, racy = (self.paths[name] for name in ("REDUCTION_LAB07_REFERENCE", "REDUCTION_LAB07_RACY"))
        clean = self.tools.run_sanitizer_labs("", [(lab, reference, self.plan)] * 2, "racecheck", 300, 120)
        self.assertEqual(sanitizer_finding("racecheck", clean).status, CLEAN, clean.log + clean.stderr[-2000:])
        mixed = self.tools.run_sanitizer_labs("", [(lab, reference, self.plan), (lab, racy, self.plan)], "racecheck",
                                              300, 120)
        self.assertEqual(sanitizer_finding("racecheck", mixed).status, HAZARDS, mixed.log + mixed.stderr[-2000:])

    def test_racecheck_reports_the_racy_last_warp_on_the_channel(self):
        result, finding = self.sanitize("racecheck", "REDUCTION_LAB07_RACY")
        self.assertEqual(finding.status, HAZARDS, f"{finding.note}\n{result.log}\n{result.stderr[-2000:]}")
        self.assertGreater(finding.count, 0)


if __name__ == "__main__":
    unittest.main()
