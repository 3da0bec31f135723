"""A run that timed out while other students' runs held the cores is run again alone, and the
retry's outcome is the verdict (engine.py, cpu_share.held): held by the evidence of their cgroups'
CPU time where there are cgroups (a made-up v2 tree here), by another student's runs beside it where
there are none. A timeout alone, or beside classmates that used no CPU, stays a TIMEOUT; a call
that timed out under a limit shortened for its small input (call_limit.py) is run again alone
beside any classmate; printed words retry nothing; every run again alone is flagged. On the
simulated toolchain."""

import json
import tempfile
import threading
import unittest
from pathlib import Path

from grader_tests.cgroup_fixtures import v2_tree
from grader_tests.helpers import FakeToolchain
from grader_tests.stages.test_classmates import LABS, OOM_CAUSE, WAIT_S, ClassCase, HogClass, note
from grader.sandbox.cgroups import detect
from grader.judge.checks import TestCheck
from grader.sandbox.cpu_share import CpuShare
from grader.policy import Policy
from grader.stages.toolchain import CompileRun
from grader.sandbox.process import ProcessResult
from grader.contract import FULL_CALL_ELEMENTS, RUNNER_EXIT_WATCHDOG

WHAT = "lab 01_host_sum, n = 1025, type = int, pattern = mixed_sign, seed = 7"
TIMEOUT_WORDS = ("TIMEOUT\ntimed out\none call did not finish within 20 s\nthe tests did not finish within 300 s\n"
                 "Killed\nthe compiler did not finish within 120 s\n")


def timed_out(kind, lab):
    """A run the grader stopped: no progress for a call's limit (tests), its wall clock (a compile)."""
    if kind == "compile":
        return CompileRun(ProcessResult(-9, "", "", True, 120.0, ["nvcc"], 120.0))
    return ProcessResult(-9, stalled=True), TestCheck(lab.folder, "7", FakeToolchain.CASES, 40, 40,
                                                      last_started="c041", last_started_what=WHAT)


def watchdog_on(elements):
    """A run the runner's watchdog ended (its exit status), in a case whose limit counts `elements`."""
    def failure(kind, lab):
        what = f"lab {lab.folder}, n = {elements}, type = int, pattern = mixed_sign, seed = 7"
        return ProcessResult(RUNNER_EXIT_WATCHDOG), TestCheck(lab.folder, "7", FakeToolchain.CASES, 0, 0,
                                                              last_started="c001", last_started_what=what,
                                                              last_started_elements=elements)
    return failure


class WatchdogAlways(FakeToolchain):
    """Every test run of `key` ((kind, student, lab)) is ended by the watchdog in a case on 1 element."""

    def __init__(self, key):
        super().__init__({})
        self.key = key

    def run_tests(self, student, lab, *args):
        if ("tests", student, lab.folder) == self.key:
            return watchdog_on(1)("tests", lab)
        return super().run_tests(student, lab, *args)


class Burner(FakeToolchain):
    """While the run `burner` ((kind, student, lab)) runs, its student's cgroup takes `burn_s` CPU
    seconds. The first run of each of `victims` waits for that and then ends as `failure(kind, lab)`
    says (a timeout); later runs are what they are. `always`: runs that time out whenever they run."""

    def __init__(self, share: CpuShare, burner=None, victims=(), always=(), burn_s=30.0, failure=timed_out):
        super().__init__({})
        self.cpu_share, self.burner, self.victims, self.always = share, burner, set(victims), set(always)
        self.burn_s, self.failure = burn_s, failure
        self.condition = threading.Condition()
        self.started, self.harmed, self.burning, self.done = set(), set(), False, False
        self.counts, self.quota_alone = {}, {}

    def _burn(self, student):
        stat = self.cpu_share.group_of(student).usage / "cpu.stat" if self.cpu_share.on else None
        self.condition.wait_for(lambda: self.started >= self.victims, WAIT_S)   # their windows are open
        if stat is not None:
            stat.write_text(f"usage_usec {round(self.burn_s * 1e6)}\n", encoding="ascii")
        self.burning = True
        self.condition.notify_all()
        self.condition.wait_for(lambda: self.harmed >= self.victims, WAIT_S)
        self.done = True
        self.condition.notify_all()

    def _call(self, kind, student, lab, real):
        key = (kind, student, lab.folder)
        with self.condition:
            self.counts[key] = self.counts.get(key, 0) + 1
            if self.counts[key] > 1 and self.cpu_share.on:   # a run again alone: its quota, then
                cpu_max = self.cpu_share.group_of(student).folders[0] / "cpu.max"
                self.quota_alone[key] = cpu_max.read_text(encoding="ascii").strip()
            if key == self.burner:
                self._burn(student)
            elif key in self.victims and not self.done:
                self.started.add(key)
                self.condition.notify_all()
                self.condition.wait_for(lambda: self.burning, WAIT_S)
                self.harmed.add(key)
                self.condition.notify_all()
                return self.failure(kind, lab)
        return timed_out(kind, lab) if key in self.always else real()

    def compile(self, student, lab, *args):
        return self._call("compile", student, lab, lambda: super(Burner, self).compile(student, lab, *args))

    def run_tests(self, student, lab, *args):
        return self._call("tests", student, lab, lambda: super(Burner, self).run_tests(student, lab, *args))


class CoresHeld(ClassCase):
    def setUp(self):
        super().setUp()
        self.cgroups = tempfile.TemporaryDirectory()
        mounts, self.fs = v2_tree(Path(self.cgroups.name) / "cgroup")
        self.share = CpuShare(detect(mounts, self.fs), fs=self.fs, cores={0, 1, 2, 3}, name="g1-1")

    def tearDown(self):
        self.cgroups.cleanup()
        super().tearDown()

    def record(self, name):
        return json.loads((self.out / "students" / f"{name}.json").read_text(encoding="utf-8"))

    def assert_retried(self, lab, what, then, cpu_s="30.0"):
        self.assertEqual(len(lab["notes"]), 1, lab["notes"])
        text = lab["notes"][0]
        self.assertTrue(text.startswith(f"the first {what} timed out while other students' runs held the cores "
                                        f"(they used {cpu_s} CPU-seconds in its "), text)
        self.assertTrue(text.endswith(f" s; its own share: 2 core(s)); {then}"), text)

    def test_a_test_run_that_timed_out_beside_a_burning_classmate_is_run_again_alone_and_passes(self):
        victim = ("tests", "amy", "01_host_sum")
        burner = Burner(self.share, ("tests", "burner", "02_atomic"), {victim})
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2)
        self.assertEqual(burner.harmed, {victim})
        self.assertEqual({f: lab["verdict"] for f, lab in labs["amy"].items()}, dict.fromkeys(LABS, "PASSED"))
        self.assert_retried(labs["amy"]["01_host_sum"], "test run", "run again alone: PASSED")
        self.assertEqual(burner.counts[victim], 2)
        self.assertEqual(burner.quota_alone[victim], "max 100000", "a run again alone has every student core")
        flags = self.record("amy")["flags"]
        self.assertEqual([(f["kind"], f["lab"]) for f in flags], [("retried_alone", "01_host_sum")])
        self.assertEqual(flags[0]["detail"], labs["amy"]["01_host_sum"]["notes"][0])
        self.assertFalse((Path(self.cgroups.name) / "cgroup" / "reduction-grading").exists(), "cgroups left behind")

    def test_a_compile_that_timed_out_beside_a_burning_classmate_compiles_alone(self):
        victim = ("compile", "amy", "03_shared_atomic")
        burner = Burner(self.share, ("compile", "burner", "02_atomic"), {victim})
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2)
        self.assertEqual(labs["amy"]["03_shared_atomic"]["verdict"], "PASSED")
        self.assert_retried(labs["amy"]["03_shared_atomic"], "compile", "run again alone: compiles")
        self.assertEqual(burner.counts[victim], 2)

    def test_a_timeout_alone_stays_a_timeout(self):
        own = ("tests", "amy", "01_host_sum")
        burner = Burner(self.share, always={own})
        labs = self.grade(burner, self.students("amy"), in_flight=1)
        self.assertEqual((labs["amy"]["01_host_sum"]["verdict"], labs["amy"]["01_host_sum"]["notes"]), ("TIMEOUT", []))
        self.assertEqual(burner.counts[own], 1)
        self.assertEqual([f for f in self.record("amy")["flags"] if f["kind"] == "retried_alone"], [])

    def test_a_timeout_beside_classmates_that_used_no_cpu_stays_a_timeout(self):
        victim = ("tests", "amy", "01_host_sum")
        burner = Burner(self.share, ("tests", "burner", "02_atomic"), {victim}, burn_s=0.0)
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2)
        self.assertEqual(burner.harmed, {victim}, "the runs did not meet")
        self.assertEqual((labs["amy"]["01_host_sum"]["verdict"], labs["amy"]["01_host_sum"]["notes"]), ("TIMEOUT", []))
        self.assertEqual(burner.counts[victim], 1)

    def test_a_watchdog_timeout_under_a_short_call_limit_beside_any_classmate_is_run_again_alone(self):
        """The runner's watchdog ended a call on 1 element at the limit's floor (call_limit.py): the GPU's
        time slices are shared too, so any classmate's run beside it is reason enough, whatever the cores
        said; the full limit (the case above: a classmate that used no CPU) is not."""
        victim = ("tests", "amy", "02_atomic")
        burner = Burner(self.share, ("tests", "burner", "02_atomic"), {victim}, burn_s=0.0, failure=watchdog_on(1))
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2)
        self.assertEqual(burner.harmed, {victim}, "the runs did not meet")
        self.assertEqual(labs["amy"]["02_atomic"]["verdict"], "PASSED")
        self.assertEqual(labs["amy"]["02_atomic"]["notes"], [
            "the first test run timed out under a call limit shortened for a small input while other students' "
            "runs shared the GPU; run again alone: PASSED"])
        self.assertEqual(burner.counts[victim], 2)
        self.assertEqual([(f["kind"], f["lab"]) for f in self.record("amy")["flags"]], [("retried_alone", "02_atomic")])

    def test_a_watchdog_timeout_under_the_full_call_limit_beside_an_idle_classmate_stays_a_timeout(self):
        victim = ("tests", "amy", "02_atomic")
        burner = Burner(self.share, ("tests", "burner", "02_atomic"), {victim}, burn_s=0.0,
                        failure=watchdog_on(FULL_CALL_ELEMENTS))
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2)
        self.assertEqual(burner.harmed, {victim}, "the runs did not meet")
        lab = labs["amy"]["02_atomic"]
        self.assertEqual((lab["verdict"], lab["notes"], burner.counts[victim]), ("TIMEOUT", [], 1))
        self.assertIn("one call did not finish within 20 s", lab["detail"])

    def test_the_short_limit_is_the_timeouts_words(self):
        labs = self.grade(WatchdogAlways(("tests", "solo", "02_atomic")), self.students("solo"), in_flight=1)
        lab = labs["solo"]["02_atomic"]
        self.assertEqual((lab["verdict"], lab["notes"]), ("TIMEOUT", []))
        self.assertIn("one call did not finish within 2.0 s, the limit of a call on 1 element (2 s, growing with the "
                      "input to 20 s at 2^24 elements)", lab["detail"])

    def test_without_cgroups_a_classmates_run_beside_it_is_the_evidence(self):
        victim = ("tests", "amy", "01_host_sum")
        burner = Burner(CpuShare.off("not root"), ("tests", "burner", "02_atomic"), {victim})
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2)
        self.assertEqual(labs["amy"]["01_host_sum"]["verdict"], "PASSED")
        self.assertEqual(labs["amy"]["01_host_sum"]["notes"], [
            "the first test run timed out while other students' runs held the cores (another student's runs ran "
            "beside it; no cgroup here measures their CPU time); run again alone: PASSED"])
        alone = Burner(CpuShare.off("not root"), always={("tests", "solo", "01_host_sum")})
        self.assertEqual(self.grade(alone, self.students("solo"), in_flight=1)["solo"]["01_host_sum"]["verdict"],
                         "TIMEOUT")

    def test_printed_words_retry_nothing(self):
        def printed(kind, lab):   # a wrong sum and a crash of its own, in a sea of timeout words
            n = FakeToolchain.CASES
            if lab.folder == "01_host_sum":
                return ProcessResult(0, TIMEOUT_WORDS, TIMEOUT_WORDS), TestCheck(
                    lab.folder, "7", n, n, n - 1, 1, end=True, first_failure={"what": WHAT})
            return ProcessResult(3, TIMEOUT_WORDS, TIMEOUT_WORDS), TestCheck(
                lab.folder, "7", n, 1, 0, error_case="c001", error_message="the call timed out (cudaErrorLaunchFailure)",
                last_started="c001")

        victims = {("tests", "amy", "01_host_sum"), ("tests", "amy", "03_shared_atomic")}
        burner = Burner(self.share, ("tests", "burner", "02_atomic"), victims, failure=printed)
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2)
        self.assertEqual(burner.harmed, victims)
        self.assertEqual([labs["amy"][f]["verdict"] for f in ("01_host_sum", "03_shared_atomic")],
                         ["WRONG_ANSWER", "RUNTIME_ERROR"])
        for key in victims:
            self.assertEqual((labs["amy"][key[2]]["notes"], burner.counts[key]), ([], 1), key)

    def test_the_burners_own_timeouts_are_run_again_alone_within_its_budget_only(self):
        own = ("tests", "burner", "01_host_sum")
        burner = Burner(self.share, ("tests", "amy", "02_atomic"), {own}, always={own})
        policy = Policy.from_dict({"pipeline": {"retry_alone_s": 0}})
        labs = self.grade(burner, self.students("burner", "amy"), in_flight=2, policy=policy)
        lab = labs["burner"]["01_host_sum"]
        self.assertEqual(lab["verdict"], "TIMEOUT")
        self.assert_retried(lab, "test run", "not run again: this student's runs alone took 0 s already "
                                             "([pipeline] retry_alone_s = 0)")
        self.assertEqual((burner.counts[own], [f for f in self.record("burner")["flags"] if f["kind"] == "retried_alone"]),
                         (1, []))


class Flagged(ClassCase):
    def test_a_run_again_alone_for_a_resource_is_flagged_too(self):
        hog = HogClass(("tests", "hog", "02_atomic"), victims={("tests", "amy", "02_atomic")})
        labs = self.grade(hog, self.students("hog", "amy"), in_flight=2)
        self.assertEqual(labs["amy"]["02_atomic"]["notes"], [note("test run", OOM_CAUSE, "GPU",
                                                                  "run again alone: PASSED")])
        flags = json.loads((self.out / "students" / "amy.json").read_text(encoding="utf-8"))["flags"]
        self.assertEqual(flags, [{"kind": "retried_alone", "lab": "02_atomic",
                                  "detail": labs["amy"]["02_atomic"]["notes"][0]}])


if __name__ == "__main__":
    unittest.main()
