"""Shared pieces of the grader tests: canned runner outputs, a simulated toolchain, the example class."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
import unittest
from pathlib import Path

GRADING = Path(__file__).resolve().parent.parent
REPO = GRADING.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = REPO / "examples"
if str(GRADING) not in sys.path:
    sys.path.insert(0, str(GRADING))

from grader.judge.checks import TestCheck, TimedItem, TimingCheck  # noqa: E402
from grader.manifest import Lab, Manifest  # noqa: E402
from grader.stages.timing_runs import TimingRun  # noqa: E402
from grader.stages.toolchain import CompileRun  # noqa: E402
from grader.sandbox.process import ProcessResult  # noqa: E402
from grader.contract import SKIP_CODE  # noqa: E402


def main_with_skip_code() -> None:
    """A CTest entry's unittest main (a GPU test module run with -m): why each test was skipped on a
    line of its own, and the skip code (CTest's SKIP_RETURN_CODE) when every test was skipped."""
    result = unittest.main(exit=False, verbosity=2).result
    for _test, why in result.skipped:
        print(f"SKIPPED: {why}")
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(SKIP_CODE if result.testsRun and len(result.skipped) == result.testsRun else 0)


def fixture(name: str, timed_out: bool = False, timeout_s: float | None = None) -> ProcessResult:
    """A canned run: '# returncode: N', then '--- log ---' (a sanitizer run's: what compute-sanitizer
    writes with --log-file, all of its text, which goes to stdout without that option), '--- stdout ---'
    and '--- stderr ---' (the program's own) sections."""
    text = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")
    returncode = int(re.search(r"^# returncode: (-?\d+)$", text, re.MULTILINE).group(1))
    log = text.split("--- log ---\n", 1)[1].split("--- stdout ---\n", 1)[0] if "--- log ---\n" in text else ""
    stdout = text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]
    stderr = text.split("--- stderr ---\n", 1)[1]
    return ProcessResult(returncode, stdout, stderr, timed_out, 1.0, ["fake", name], timeout_s, log=log)


def course_labs() -> list[Lab]:
    """The labs of the top-level CMakeLists.txt, as a build's manifest would list them."""
    text = (REPO / "CMakeLists.txt").read_text(encoding="utf-8")
    labs = []
    for folder, file in re.findall(r"^\s*reduction_lab\(\s*(\d\d_[a-z0-9_]+)\s+([\w.]+)\s*\)", text, re.MULTILINE):
        labs.append(Lab(folder, file, f"lab{folder[:2]}_{folder[3:]}"))
    return labs


def example_script(name: str):
    """examples/<name>.py, loaded as a module (the examples are scripts, not a package)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def maker():
    return example_script("make_examples")


def expected_class() -> dict:
    return maker().expected_verdicts("example")


def write_example_class(folder: Path) -> Path:
    """The example class, generated into `folder` (it is not committed)."""
    maker().write_class("example", folder)
    return folder


def example_labs() -> list[Lab]:
    wanted = expected_class()["labs"]
    return [lab for lab in course_labs() if lab.folder in wanted]


def fake_manifest(build_dir: Path, labs: list[Lab] | None = None) -> Manifest:
    return Manifest(source_dir=REPO, binary_dir=Path(build_dir), reference_dir=Path(build_dir) / "solutions",
                    nvcc="nvcc", module_flags=["-O3"], include_dirs=[str(REPO / "common" / "include")],
                    labs=labs if labs is not None else example_labs())


class FakeToolchain:
    """Stands in for nvcc, the sandboxed runner and timing worker, the checker and compute-sanitizer.

    `outcomes[student][lab folder]` is an expected_verdicts.json entry ({"verdict", "why",
    "hazards", "slow"}): the fake compiles (or fails to, for COMPILE_ERROR), answers the tests with
    the checker's report and process result such a lab gives, reports the listed sanitizer
    hazards, and times a slow lab at `slow_ratio` x the reference. MISSING labs are never asked
    for: the grader must find them missing on its own. Every call is recorded in `calls`."""

    CASES = 166

    def __init__(self, outcomes: dict, gpu: bool = True, sanitizer: bool = True, slow_ratio: float = 3.0,
                 paired: bool = False):
        self.outcomes = outcomes
        self.pairs_host_timing = paired   # host labs in one paired run (time_paired), as with a freezer
        self.gpu = gpu
        self.sanitizer = sanitizer
        self.slow_ratio = slow_ratio
        self.noisy_timings: dict[tuple[str, str], int] = {}   # per (student, lab), its noisy timings so far
        self.calls: list[tuple] = []
        self.call_limits: list[tuple[str, float]] = []   # each test run's call limit: ("tests_labs" or a lab, seconds)
        self.plans: list[tuple[int, tuple[str, ...]]] = []   # each timing plan's samples and its items' labs
        self.budgets: list[tuple[int, float, tuple[int, ...]]] = []   # each plan's min_samples, budget_ms, items' n

    def _outcome(self, student: str, folder: str) -> dict:
        return self.outcomes.get(student, {}).get(folder, {"verdict": "PASSED", "why": ""})

    def gpu_available(self) -> bool:
        return self.gpu

    def sanitizer_available(self) -> bool:
        return self.sanitizer

    def sandbox_status(self) -> str:
        return "fake sandbox (tests)"

    def compile(self, student, lab, source, module, timeout, refuse=()):
        self.calls.append(("compile", student, lab.folder))
        assert Path(source).is_file(), source
        text = Path(source).read_text(encoding="utf-8")
        assert "// ==== BEGIN STUDENT CODE ====" in text
        # A refused library is named by the header the file includes (the real one asks nvcc -M).
        refused = tuple(header for header in re.findall(r"#\s*include\s*<([^>]+)>", text)
                        if any(header.split("/", 1)[0] == library.top and library.refuses(header.split("/", 1)[-1])
                               for library in refuse))
        if refused:
            return CompileRun(ProcessResult(0, "", "", False, 0.5, ["nvcc"], timeout), refused)
        if self._outcome(student, lab.folder)["verdict"] == "COMPILE_ERROR":
            return CompileRun(ProcessResult(1, "", f"{source}(23): error: no instance of overloaded function "
                                                   "\"atomicAdd_block\" matches the argument list\n"
                                                   "/etc/secret.h(1): error: quoted secret\n"
                                                   "1 error detected", False, 0.5, ["nvcc"], timeout))
        Path(module).parent.mkdir(parents=True, exist_ok=True)
        Path(module).write_text(text, encoding="utf-8")  # the "module" keeps the spliced source for the fake runner
        return CompileRun(ProcessResult(0, "", "", False, 0.5, ["nvcc", str(source)], timeout))

    def make_plan(self, lab, seed, path, large=False, cases=None):
        self.calls.append(("plan", "", lab.folder))
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(f"fake plan {lab.folder} {seed} {cases}\n", encoding="utf-8")

    def expect(self, plan, cache):
        Path(cache).touch()

    test_together = False   # the stage's tests of one run over several labs set it

    def run_tests_labs(self, student, labs, cache, timeout, call_timeout):
        """One run over the labs: each lab's part as its own run would have it, up to the first lab
        whose run would have ended early (a timeout or a crash ends the process): no part after it."""
        folders = tuple(lab.folder for lab, _, _ in labs)
        self.calls.append(("tests_labs", student, folders))
        self.call_limits.append(("tests_labs", call_timeout))
        checks, process, going = {}, ProcessResult(0, "every lab says hello"), True
        for lab, module, plan in labs:
            if not going:
                checks[lab.folder] = TestCheck(lab.folder, "7", self.CASES, 0, 0)
                continue
            process, checks[lab.folder] = self._test_result(student, lab, module)
            going = checks[lab.folder].end
        return process, checks

    def run_tests(self, student, lab, module, plan, cache, timeout, call_timeout):
        self.calls.append(("tests", student, lab.folder))
        self.call_limits.append((lab.folder, call_timeout))
        return self._test_result(student, lab, module)

    def _test_result(self, student, lab, module):
        assert self.gpu or lab.host, "the grader must not run a GPU lab without a GPU"
        verdict = self._outcome(student, lab.folder)["verdict"]
        n = self.CASES
        what = f"lab {lab.folder}, n = 1025, type = int, pattern = mixed_sign, seed = 7"
        if "reduction::not_implemented(" in Path(module).read_text(encoding="utf-8"):
            return ProcessResult(0), TestCheck(lab.folder, "7", n, n, 0, 0, n, end=True)
        if verdict == "WRONG_ANSWER":
            failure = {"case": "c045", "what": what, "expected": "75", "got": "0",
                       "hint": "the result is 0: no element reached the output"}
            return ProcessResult(0), TestCheck(lab.folder, "7", n, n, n - 3, 3, 0, end=True, first_failure=failure)
        if verdict == "TIMEOUT":
            return (ProcessResult(-9, stalled=True), TestCheck(lab.folder, "7", n, 40, 40, last_started="c041",
                                                               last_started_what=what))
        if verdict == "RUNTIME_ERROR":  # exit() from lab code: the run ends early
            return ProcessResult(0), TestCheck(lab.folder, "7", n, 1, 1, last_started="c002", last_started_what=what)
        # An honest student prints, here a banner without a newline: shown as program output, never judged.
        return ProcessResult(0, f"{lab.folder} says hello"), TestCheck(lab.folder, "7", n, n, n, end=True)

    sanitize_together = False   # the stage's tests of one tool run over several labs set it
    unreadable_together = False   # their one run over several labs with a hazard ends without a summary

    def run_sanitizer_labs(self, student, labs, tool, timeout, call_timeout):
        """One run over the labs: a hazard in any of them is the run's (its log cannot say whose)."""
        folders = tuple(lab.folder for lab, _, _ in labs)
        self.calls.append(("sanitizer_labs", student, folders, tool))
        race = tool == "racecheck"
        if any(tool in self._outcome(student, folder).get("hazards", []) for folder in folders):
            if self.unreadable_together:   # a run the program cut short: no summary to read
                return dataclasses.replace(fixture("memcheck_error"), log="", returncode=-9)
            return fixture("racecheck_hazard" if race else "memcheck_error")
        return fixture("racecheck_clean" if race else "memcheck_clean")

    def run_sanitizer(self, student, lab, tool, module, plan, timeout, call_timeout):
        self.calls.append(("sanitizer", student, lab.folder, tool))
        race = tool == "racecheck"   # racecheck's summary has a shape of its own
        if tool in self._outcome(student, lab.folder).get("hazards", []):
            return fixture("racecheck_hazard" if race else "memcheck_error")
        return fixture("racecheck_clean" if race else "memcheck_clean")

    def timing_plan(self, seed, items, samples, warmup, call_timeout, min_samples=0, budget_ms=0.0):
        self.plans.append((samples, tuple(item.split(",")[1] for item in items)))
        self.budgets.append((min_samples, budget_ms, tuple(int(item.split(",")[4]) for item in items)))
        return "\n".join(items)

    def time(self, plan_text, work, sandboxed, readable, gpu, timeout, call_timeout, cache=None, on_ended=None):
        """Reference labs take 400/lab number us, the roof 20 and CUB 24; a student's lab 1.02x its
        reference, or slow_ratio x when the outcome says slow. Every call is reported 20 us beyond its
        claim on the timekeeper's clock; `clock` in the outcome adds that many us more (work the claim
        leaves out), `clock_cheat` claims a twentieth of the real time, `clock_once` is 5 ms late on its
        first timing only (a noisy machine), `clock_noisy: K` on its first K timings."""
        items, students, noisy_now = [], set(), {}
        for line in plan_text.splitlines():
            item_id, folder, where, dtype, n, *module = line.split(",")
            excess = 20.0
            if folder in ("roof", "cub"):
                median = 20.0 if folder == "roof" else 24.0
            else:
                median = 400.0 / int(folder[:2])
                if sandboxed:  # the student's module: .../work/<student>/modules/labNN.so
                    student = Path(module[0]).parent.parent.name
                    students.add(student)
                    outcome = self._outcome(student, folder)
                    median *= self.slow_ratio if outcome.get("slow") else 1.02
                    excess += outcome.get("clock", 0.0)
                    if outcome.get("clock_cheat"):
                        excess += median * 19
                    if (student, folder) not in noisy_now:   # the lab's timings so far, this one not counted
                        noisy_now[(student, folder)] = self.noisy_timings.get((student, folder), 0)
                    if noisy_now[(student, folder)] < outcome.get("clock_noisy", 1 if outcome.get("clock_once") else 0):
                        self.noisy_timings[(student, folder)] = noisy_now[(student, folder)] + 1   # noise, this timing
                        excess += 5000.0
            items.append(TimedItem(item_id, folder, dtype, int(n), 25, median, median * 0.99, median * 0.995,
                                   median * 1.005, True, "", inputs="host" if where == "host" else "shared",
                                   clocked=25, excess_us=excess, excess_min_us=excess - 2, window_us=excess + median - 5,
                                   prep_us=5.0))
        labs = tuple(sorted({line.split(",")[1] for line in plan_text.splitlines()}))
        self.calls.append(("bench", students.pop(), labs) if sandboxed else ("reference", "", labs))
        return TimingRun(ProcessResult(0), TimingCheck("NVIDIA H200 (fake)", items=items))

    def time_paired(self, plan_text, reference_plan_text, work, readable, timeout, call_timeout, cache=None):
        """time()'s student and reference runs as one paired run; `freeze_fails` in a lab's outcome: the
        timekeeper could not freeze the student's processes (its clock_error)."""
        student = self.time(plan_text, work, True, readable, False, timeout, call_timeout, cache)
        reference = self.time(reference_plan_text, work, False, (), False, timeout, call_timeout, cache)
        (_, who, labs), _ = self.calls.pop(-2), self.calls.pop()
        self.calls.append(("paired", who, labs))
        if any(self._outcome(who, lab).get("freeze_fails") for lab in labs):
            student.check.clock_error = "the student's processes were not all frozen within 2000 ms"
        return student, reference
