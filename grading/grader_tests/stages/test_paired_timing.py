"""A paired timing run (timekeeper_main.cpp, contract.json "pair"): the real timekeeper times two real
timing workers on lab 01's reference call by call, R S S R R S ..., freezing the student's cgroup for
every reference call, and the checker accepts both transcripts. PairedRun's cgroup is a plain folder
with v1's freezer.state: a regular file answers a freeze at once, as the kernel's does for a cgroup
whose tasks are all asleep, so it runs on any machine (no root, no cgroup tree); RealFreezer runs
the same against the grader's own paired cgroup where this machine has one (root, a freezer), and
says why not elsewhere. REDUCTION_CHECKER (set by CTest) names the build."""

import json
import os
import secrets
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.contract import (CLOCK_OUT_FD_FLAG, PAIR_FREEZE_FLAG, PAIR_OUT_FD_FLAG, PAIR_PLAN_FLAG,
                             PAIR_TOKEN_FD_FLAG, PAIR_WORKER_CGROUP_FLAG, PAIR_WORKER_FLAG, TOKEN_FD_FLAG)
from grader.stages.benchmark import paired_ratio
from grader.judge.checks import TimedItem
from grader.sandbox.cpu_share import CpuShare
from grader.manifest import load_manifest
from grader.stages.toolchain import Toolchain
from grader.sandbox.process import ProcessResult

CALLS = 2 + 4   # warm-up and samples of each item


def token_pipe(token: str) -> int:
    read, write = os.pipe()
    os.write(write, (token + "\n").encode())
    os.close(write)
    return read


def windows(transcript: str) -> list[tuple[float, str, int, str]]:
    """The timekeeper's window lines: (go_us, item, call, frozen)."""
    found = []
    for line in transcript.splitlines():
        fields = json.loads(line[2:]) if line.startswith("K ") else {}
        if fields.get("event") == "window":
            found.append((float(fields["go_us"]), fields["item"], int(fields["call"]), fields.get("frozen", "")))
    return found


class CallByCall(unittest.TestCase):
    def test_the_ratio_is_the_median_of_the_ratios_of_calls_of_the_same_number(self):
        # the machine slows down halfway: call by call both sides see it, medians of each side do not
        student = TimedItem("t001", "01_host_sum", "int", 8, 6, calls_us=[10.2, 10.2, 10.2, 20.4, 20.4, 20.4])
        reference = TimedItem("t001", "01_host_sum", "int", 8, 6, calls_us=[10.0, 10.0, 20.0, 20.0, 20.0, 20.0])
        self.assertAlmostEqual(paired_ratio(student, reference), 1.02)
        self.assertAlmostEqual(paired_ratio(TimedItem("a", "l", "int", 8, calls_us=[3.0, 9.0]),
                                            TimedItem("a", "l", "int", 8, calls_us=[2.0, 6.0, 7.0])), 1.5)

    def test_calls_either_side_lacks_are_left_out_and_none_means_no_ratio(self):
        student = TimedItem("t001", "01_host_sum", "int", 8, calls_us=[None, 11.0, 12.0])
        reference = TimedItem("t001", "01_host_sum", "int", 8, calls_us=[10.0, None, 10.0])
        self.assertAlmostEqual(paired_ratio(student, reference), 1.2)
        self.assertIsNone(paired_ratio(student, TimedItem("t001", "01_host_sum", "int", 8)))


class PairedRun(unittest.TestCase):
    def setUp(self):
        checker = Path(os.environ.get("REDUCTION_CHECKER", "/nonexistent"))
        if not checker.is_file():
            self.skipTest("REDUCTION_CHECKER names no checker (run through ctest -R grader.unit)")
        self.manifest = load_manifest(checker.parents[2])
        self.lab = next(lab for lab in self.manifest.labs if lab.host)
        if not self.manifest.timekeeper.is_file() or not self.manifest.reference_module(self.lab).is_file():
            self.skipTest("this build has no timekeeper or no lab 01 reference")
        self.tmp = tempfile.TemporaryDirectory(prefix="reduction-paired-")
        self.work = Path(self.tmp.name)
        self.cgroup = self.work / "cgroup"
        self.cgroup.mkdir()
        (self.cgroup / "freezer.state").write_text("THAWED\n", encoding="ascii")
        (self.cgroup / "cgroup.procs").write_text("", encoding="ascii")
        self.tools = Toolchain(self.manifest)
        self.write_plans()

    def write_plans(self, **budget):
        items = [f"t00{k + 1},{self.lab.folder},host,{t},100000,{self.manifest.reference_module(self.lab)}"
                 for k, t in enumerate(("int", "float"))]
        self.plans = []
        for name in ("student", "reference"):
            path = self.work / f"{name}.plan"
            path.write_text(self.tools.timing_plan(5, items, CALLS - 2, 2, 20.0, **budget), encoding="utf-8")
            self.plans.append(path)

    def tearDown(self):
        self.tmp.cleanup()

    def run_pair(self, freeze: Path, cgroups: list[Path]):
        """The timekeeper's paired run: (exit status, student's transcript, reference's, tokens)."""
        tokens = [secrets.token_hex(16) for _ in range(2)]
        fds = [token_pipe(token) for token in tokens]
        with open(self.work / "student.out", "wb+") as student_out, open(self.work / "reference.out", "wb+") as ref_out:
            command = [str(self.manifest.timekeeper), f"--plan={self.plans[0]}",
                       f"{CLOCK_OUT_FD_FLAG}={student_out.fileno()}", f"{PAIR_WORKER_FLAG}={self.manifest.time_worker}",
                       f"{PAIR_PLAN_FLAG}={self.plans[1]}", f"{PAIR_OUT_FD_FLAG}={ref_out.fileno()}",
                       f"{PAIR_TOKEN_FD_FLAG}={fds[1]}", f"{PAIR_FREEZE_FLAG}={freeze}",
                       *[f"{PAIR_WORKER_CGROUP_FLAG}={folder}" for folder in cgroups], "--",
                       str(self.manifest.time_worker), f"--plan={self.plans[0]}", f"{TOKEN_FD_FLAG}={fds[0]}"]
            done = subprocess.run(command, pass_fds=(student_out.fileno(), ref_out.fileno(), *fds), timeout=120,
                                  capture_output=True, text=True)
        for fd in fds:
            os.close(fd)
        texts = [(self.work / name).read_text(encoding="utf-8") for name in ("student.out", "reference.out")]
        return done, texts[0], texts[1], tokens

    def check(self, plan: Path, transcript: str, token: str):
        return self.tools._timing_run(plan, ProcessResult(0), self.work / "expected.txt", transcript, token).check

    def test_the_two_workers_take_turns_r_s_s_r_and_the_student_is_frozen_for_every_reference_call(self):
        done, student, reference, tokens = self.run_pair(self.cgroup, [self.cgroup])
        self.assertEqual(done.returncode, 0, done.stderr)
        for plan, text, token in zip(self.plans, (student, reference), tokens):
            check = self.check(plan, text, token)
            self.assertEqual((check.tampered, check.clock_error), ("", ""))
            for item in check.items:
                self.assertTrue(item.verified, item.problem)
                self.assertEqual((item.samples, item.clocked), (CALLS - 2, CALLS - 2))
                self.assertEqual(len(item.calls_us), CALLS - 2, "each timed call's claim, in call order")
                self.assertAlmostEqual(min(item.calls_us), item.min_us, places=3)
        turns = sorted([(go, "R", item, call, frozen) for go, item, call, frozen in windows(reference)] +
                       [(go, "S", item, call, frozen) for go, item, call, frozen in windows(student)])
        self.assertEqual(len(turns), 2 * 2 * CALLS)
        expected = [who for call in range(CALLS) for who in (("R", "S") if call % 2 == 0 else ("S", "R"))] * 2
        self.assertEqual([turn[1] for turn in turns], expected)
        self.assertEqual({turn[4] for turn in turns if turn[1] == "R"}, {"1"}, "frozen for every reference call")
        self.assertEqual((self.cgroup / "freezer.state").read_text(encoding="ascii").strip(), "THAWED", "thawed at the end")
        self.assertEqual(len((self.cgroup / "cgroup.procs").read_text(encoding="ascii").split()), 1,
                         "the student's worker joined the cgroup, the reference's did not")

    def test_a_spent_budget_ends_an_item_on_both_sides_at_the_same_call(self):
        self.write_plans(min_samples=2, budget_ms=1e-6)   # every call outlasts 1 ns: 2 timed calls an item
        done, student, reference, tokens = self.run_pair(self.cgroup, [self.cgroup])
        self.assertEqual(done.returncode, 0, done.stderr)
        for plan, text, token in zip(self.plans, (student, reference), tokens):
            check = self.check(plan, text, token)
            self.assertEqual((check.tampered, check.clock_error), ("", ""))
            for item in check.items:
                self.assertTrue(item.verified, item.problem)
                self.assertEqual((item.samples, len(item.calls_us)), (2, 2))
            self.assertEqual(len(windows(text)), 2 * (2 + 2), "each item: its warm-up and its 2 least calls")

    def test_a_freeze_that_fails_ends_the_students_timing_with_a_clock_error_and_the_reference_goes_on(self):
        (self.cgroup / "freezer.state").unlink()
        (self.cgroup / "freezer.state").mkdir()   # there, but cannot be written: every freeze fails
        done, student, reference, tokens = self.run_pair(self.cgroup, [self.cgroup])
        check = self.check(self.plans[0], student, tokens[0])
        self.assertIn("cannot freeze the cgroup", check.clock_error)
        self.assertEqual(sum(item.samples for item in check.items), 0, "no call of the student's after it")
        reference_check = self.check(self.plans[1], reference, tokens[1])
        self.assertTrue(all(item.verified and item.samples == CALLS - 2 for item in reference_check.items))
        self.assertEqual({frozen for *_, frozen in windows(reference)}, {"0"})

    def test_a_worker_that_cannot_join_its_cgroup_never_starts(self):
        done, student, reference, tokens = self.run_pair(self.cgroup, [self.work / "no such cgroup"])
        self.assertEqual(done.returncode, 126, done.stderr)
        self.assertIn("cannot join its cgroup", done.stderr)
        self.assertEqual(sum(item.samples for item in self.check(self.plans[0], student, tokens[0]).items), 0)

    def test_no_freezer_or_unpaired_plans_are_refused(self):
        done, *_ = self.run_pair(self.work, [self.cgroup])
        self.assertEqual(done.returncode, 3)
        self.assertIn("no cgroup freezer", done.stderr)
        self.plans[1].write_text(self.plans[1].read_text(encoding="utf-8").replace("type=int", "type=float"), encoding="utf-8")
        done, *_ = self.run_pair(self.cgroup, [self.cgroup])
        self.assertEqual(done.returncode, 3)
        self.assertIn("two plans of the same host items", done.stderr)


class RealFreezer(PairedRun):
    """The kernel's freezer: the timekeeper's freeze returns only once the kernel reports every task of
    the cgroup frozen (frozen=1 on a reference window means it did)."""

    def setUp(self):
        super().setUp()
        share = CpuShare.detect()
        if share.trees is not None:
            share = CpuShare(share.trees, cores=os.sched_getaffinity(0))
            share.start(in_flight=1, timing=True)
        if share.paired is None:
            share.close()
            self.skipTest(f"no cgroup freezer the grader can use here: {share.paired_why_not}")
        self.share = share
        self.addCleanup(share.close)

    def test_the_two_workers_take_turns_r_s_s_r_and_the_student_is_frozen_for_every_reference_call(self):
        paired = self.share.paired
        done, student, reference, tokens = self.run_pair(paired.freeze, list(paired.folders))
        self.assertEqual(done.returncode, 0, done.stderr)
        for plan, text, token in zip(self.plans, (student, reference), tokens):
            self.assertTrue(all(item.verified for item in self.check(plan, text, token).items))
        self.assertEqual({frozen for *_, frozen in windows(reference)}, {"1"})
        state = (paired.freeze / "freezer.state").read_text(encoding="ascii").strip() if \
            (paired.freeze / "freezer.state").exists() else (paired.freeze / "cgroup.events").read_text(encoding="ascii")
        self.assertTrue(state == "THAWED" or "frozen 0" in state, state)

    # the fake folder's cases (a folder that cannot be written, a missing cgroup) are PairedRun's alone
    test_a_freeze_that_fails_ends_the_students_timing_with_a_clock_error_and_the_reference_goes_on = None
    test_a_worker_that_cannot_join_its_cgroup_never_starts = None
    test_no_freezer_or_unpaired_plans_are_refused = None


if __name__ == "__main__":
    unittest.main()
