"""Timing in an end-to-end grading with a simulated toolchain: the read roof, times the grader's
clock contradicts, and the reference runs that bracket each student's host and device parts."""

import contextlib
import dataclasses
import json
import statistics
import unittest
from pathlib import Path

from grader_tests.engine_fixtures import GradingCase
from grader_tests.helpers import FakeToolchain
from grader.stages import benchmark
from grader.policy import Policy
from grader.judge.checks import TimedItem


class TestTimings(GradingCase):
    def test_a_time_below_the_read_roof_earns_no_performance_points(self):
        outcomes = {"alice": {"10_two_step": {"verdict": "PASSED", "slow": True}}}
        toolchain = FakeToolchain(outcomes, slow_ratio=0.25)  # 400/10 * 0.25 = 10 us, the roof is 20 us
        self.grade(toolchain, who={"alice"})
        lab = self.record("alice")["labs"]["10_two_step"]
        self.assertTrue(lab["benchmark"]["impossible"])
        self.assertEqual(lab["score"]["performance"], 0.0)
        self.assertIn("below the read roof", "\n".join(lab["score"]["notes"]))
        self.assertEqual({row["status"] for row in lab["benchmark"]["rows"]}, {"IMPOSSIBLE"})

    def test_a_time_the_graders_clock_contradicts_earns_no_performance_points(self):
        outcomes = {"alice": {"10_two_step": {"verdict": "PASSED", "clock_cheat": True},
                              "05_sequential": {"verdict": "PASSED", "clock": 30.0}}}
        self.grade(FakeToolchain(outcomes), who={"alice"})
        record = self.record("alice")
        lab = record["labs"]["10_two_step"]
        self.assertTrue(lab["benchmark"]["contradicted"])
        self.assertEqual(lab["score"]["performance"], 0.0)
        self.assertEqual(lab["score"]["correctness"], lab["score"]["correctness_max"])
        self.assertIn("the grader's clock puts each timed call at about", "\n".join(lab["score"]["notes"]))
        self.assertEqual({row["status"] for row in lab["benchmark"]["rows"]}, {"CONTRADICTED"})
        self.assertEqual([(f["kind"], f["lab"]) for f in record["flags"]], [("time_contradicted", "10_two_step")])
        # 30 us beyond the reference's on a 81.6 us lab is within the slack (25 us + 15 %): believed
        honest = record["labs"]["05_sequential"]
        self.assertFalse(honest["benchmark"]["contradicted"])
        self.assertEqual(honest["score"]["performance"], honest["score"]["performance_max"])
        gradescope = json.loads((self.out / "gradescope" / "alice" / "results.json").read_text(encoding="utf-8"))
        test = next(t for t in gradescope["tests"] if "10_two_step" in t["name"])
        self.assertIn("grader's clock", test["output"])
        self.assertIn("timed again: the grader's clock contradicted the first timing of 10_two_step",
                      record["benchmark"]["problems"])

    def test_a_contradiction_that_does_not_come_back_is_noise_and_the_last_timing_stands(self):
        problems = ["timed again: the grader's clock contradicted the first timing of 10_two_step",
                    "timed again: the grader's clock contradicted the second timing of 10_two_step"]
        for noisy in (1, 2):   # noise on the first timing, or on the first two
            with self.subTest(noisy=noisy):
                outcomes = {"alice": {"10_two_step": {"verdict": "PASSED", "clock_noisy": noisy}}}
                toolchain = FakeToolchain(outcomes)
                self.grade(toolchain, who={"alice"}, force=True)
                record = self.record("alice")
                lab = record["labs"]["10_two_step"]
                self.assertFalse(lab["benchmark"]["contradicted"])
                self.assertEqual(lab["score"]["performance"], lab["score"]["performance_max"])
                self.assertEqual(record["flags"], [])
                self.assertEqual(sum(1 for call in toolchain.calls if call[0] == "bench"), 1 + noisy + 1,
                                 "the host part once, the device part until a timing agrees")
                self.assertEqual(record["benchmark"]["problems"], problems[:noisy])
        outcomes = {"alice": {"10_two_step": {"verdict": "PASSED", "clock_noisy": 2}}}
        # with [benchmark] clock_attempts = 2 the second timing stands: contradicted
        policy = Policy.load(None)
        policy.benchmark = dataclasses.replace(policy.benchmark, clock_attempts=2)
        self.grade(FakeToolchain(outcomes), who={"alice"}, policy=policy, force=True)
        self.assertTrue(self.record("alice")["labs"]["10_two_step"]["benchmark"]["contradicted"])

    def test_a_part_timed_again_has_the_machine_alone_and_a_first_timing_does_not(self):
        labs = [lab for lab in self.manifest.labs if lab.folder in ("01_host_sum", "10_two_step")]
        tools = FakeToolchain({"amy": {"10_two_step": {"verdict": "PASSED", "clock_once": True}}})
        timing = benchmark.ClassTiming(tools, self.manifest, labs, Policy.load(None).benchmark, 7,
                                       Path(self.tmp.name) / "timing", True, Path(self.tmp.name) / "expected.txt")
        turns = []

        @contextlib.contextmanager
        def turn(part, alone=False):
            turns.append((part, alone))
            yield True

        modules = {lab.folder: Path(self.tmp.name) / "amy" / "modules" / lab.module_file for lab in labs}
        outcome = timing.time_student("amy", labs, modules, "2026-11-26", turn)
        self.assertEqual(turns, [("host", False), ("device", False), ("device", True)])
        self.assertFalse(outcome.labs["10_two_step"].contradicted)

    def test_only_the_contradicted_lab_is_timed_again_between_its_own_references(self):
        labs = [lab for lab in self.manifest.labs if lab.folder in ("05_sequential", "10_two_step")]
        tools = FakeToolchain({"amy": {"10_two_step": {"verdict": "PASSED", "clock_once": True}}})
        timing = benchmark.ClassTiming(tools, self.manifest, labs, Policy.load(None).benchmark, 7,
                                       Path(self.tmp.name) / "timing", True, Path(self.tmp.name) / "expected.txt")

        @contextlib.contextmanager
        def turn(part, alone=False):
            yield True

        modules = {lab.folder: Path(self.tmp.name) / "amy" / "modules" / lab.module_file for lab in labs}
        outcome = timing.time_student("amy", labs, modules, "2026-11-28", turn)
        every = ("05_sequential", "10_two_step", "cub", "roof")
        self.assertEqual(tools.calls, [("reference", "", every), ("bench", "amy", ("05_sequential", "10_two_step")),
                                       ("reference", "", every), ("reference", "", ("10_two_step",)),
                                       ("bench", "amy", ("10_two_step",)), ("reference", "", ("10_two_step",))])
        self.assertEqual(outcome.problems, ["timed again: the grader's clock contradicted the first timing of 10_two_step"])
        for folder in ("05_sequential", "10_two_step"):
            result = outcome.labs[folder]
            self.assertFalse(result.contradicted, folder)
            self.assertTrue(result.rows and all(row["ratio_to_ref"] for row in result.rows), folder)
            self.assertEqual({row["status"] for row in result.rows}, {"ok"}, folder)
        # the roof of the first timing still bounds the lab timed again (its runs again time no baseline)
        self.assertTrue(any(row["lab"] == "roof" for row in outcome.rows))
        # the runs again are nobody's "before": the next student's is the first timing's "after"
        timing.time_student("ben", labs[:1], {"05_sequential": modules["05_sequential"]}, "2026-11-28", turn)
        self.assertEqual(tools.calls[6][0], "bench", tools.calls[6:])

    def test_reference_runs_bracket_every_student_and_are_fresh_after_other_work(self):
        policy = Policy.load(None)
        policy.benchmark = dataclasses.replace(policy.benchmark, reference_reuse_s=0.0)
        toolchain = FakeToolchain(self.expected)
        self.grade(toolchain, who={"alice", "bob"}, policy=policy)
        runs = [(call[0], "host" if call[2] == ("01_host_sum",) else "device") for call in toolchain.calls
                if call[0] in ("bench", "reference")]
        # Each part between its own references; bob's compiles ran on the cores after alice's host "after",
        # and his tests on the GPU after her device "after": neither is bob's "before" (gpu_gate.py).
        one = [(kind, part) for part in ("host", "device") for kind in ("reference", "bench", "reference")]
        self.assertEqual(runs, one + one)

    def test_a_recent_reference_run_is_the_next_students_before_even_after_other_work(self):
        # The policy's reference_reuse_s: far more than this takes. No rows: alice in her timing has given
        # bob her place, and her "after" would be the run after his (test_reference_rows.py).
        policy = Policy.load(None)
        policy.benchmark = dataclasses.replace(policy.benchmark, students_per_reference=1)
        toolchain = FakeToolchain(self.expected)
        self.grade(toolchain, who={"alice", "bob"}, policy=policy)
        runs = [(call[0], "host" if call[2] == ("01_host_sum",) else "device") for call in toolchain.calls
                if call[0] in ("bench", "reference")]
        one = [(kind, part) for part in ("host", "device") for kind in ("reference", "bench", "reference")]
        again = [("bench", "host"), ("reference", "host"), ("bench", "device"), ("reference", "device")]
        self.assertEqual(runs, one + again)
        bob = self.record("bob")
        self.assertIsNotNone(bob["benchmark"]["reference_drift"], "alice's after and bob's after: an A/A measure")


class TestTimingParts(GradingCase):
    def test_each_part_reuses_its_reference_run_when_nothing_ran_there_since_or_it_is_recent(self):
        runs = []

        class Recording(FakeToolchain):
            def time(self, plan_text, work, sandboxed, readable, gpu, *args, **kwargs):
                part = "host" if ",host," in plan_text else "device"
                runs.append(("bench" if sandboxed else "reference", part, gpu))
                return super().time(plan_text, work, sandboxed, readable, gpu, *args, **kwargs)

        labs = [lab for lab in self.manifest.labs if lab.folder in ("01_host_sum", "02_atomic")]
        timing = benchmark.ClassTiming(Recording({}), self.manifest, labs, Policy.load(None).benchmark, 7,
                                       Path(self.tmp.name) / "timing", True, Path(self.tmp.name) / "expected.txt")
        quiet, turns = {"host": True, "device": False}, []

        @contextlib.contextmanager
        def turn(part, alone=False):
            turns.append(part)
            yield quiet[part]

        now = [0.0]
        timing.clock = lambda: now[0]
        reuse = Policy.load(None).benchmark.reference_reuse_s
        self.assertGreater(reuse, 0)
        outcomes = {}
        for student, waited in (("amy", 0.0), ("ben", reuse + 1), ("cat", reuse - 1)):
            now[0] += waited
            modules = {lab.folder: Path(self.tmp.name) / student / "modules" / lab.module_file for lab in labs}
            outcomes[student] = timing.time_student(student, labs, modules, "2026-11-26", turn)
        self.assertEqual(turns, ["host", "device"] * 3)
        host, device = [("reference", "host", False), ("bench", "host", False), ("reference", "host", False)], \
            [("reference", "device", True), ("bench", "device", True), ("reference", "device", True)]
        # ben's host "before" is amy's host "after" (nothing ran on the cores); the GPU ran other work
        # and amy's device "after" is older than reference_reuse_s: fresh. cat comes within it: reused.
        self.assertEqual(runs, host + device + host[1:] + device + host[1:] + device[1:])
        for student, outcome in outcomes.items():
            self.assertEqual(sorted(outcome.labs), ["01_host_sum", "02_atomic"], student)
            self.assertTrue(all(row["ratio_to_ref"] for lab in outcome.labs.values() for row in lab.rows), student)
            self.assertEqual(outcome.device, "NVIDIA H200 (fake)")


    def _paired_class(self, tools, labs, host_runs: int, zero_credit_ratio: float | None = None) -> dict:
        """amy, then ben, timed by one ClassTiming with `host_runs` paired runs a host part."""
        config = dataclasses.replace(Policy.load(None).benchmark, host_runs=host_runs)
        timing = benchmark.ClassTiming(tools, self.manifest, labs, config, 7,
                                       Path(self.tmp.name) / "timing", True, Path(self.tmp.name) / "expected.txt",
                                       zero_credit_ratio)

        @contextlib.contextmanager
        def turn(part, alone=False):
            yield True

        outcomes = {}
        for student in ("amy", "ben"):
            modules = {lab.folder: Path(self.tmp.name) / student / "modules" / lab.module_file for lab in labs}
            outcomes[student] = timing.time_student(student, labs, modules, "2026-11-26", turn)
        return outcomes

    def test_a_paired_host_part_is_one_run_whose_reference_is_the_only_side(self):
        labs = [lab for lab in self.manifest.labs if lab.folder in ("01_host_sum", "02_atomic")]
        tools = FakeToolchain({"ben": {"01_host_sum": {"freeze_fails": True}}}, paired=True)
        outcomes = self._paired_class(tools, labs, host_runs=1)
        device = [("reference", "", ("02_atomic", "cub", "roof")), ("bench", "amy", ("02_atomic",)),
                  ("reference", "", ("02_atomic", "cub", "roof"))]
        self.assertEqual(tools.calls[:4], [("paired", "amy", ("01_host_sum",))] + device)
        self.assertEqual(tools.calls[4], ("paired", "ben", ("01_host_sum",)), "a paired part reuses no reference run")
        amy = outcomes["amy"].labs["01_host_sum"]
        self.assertEqual({row["ratio_to_ref"] for row in amy.rows}, {"1.0200"})
        self.assertEqual(len([r for r in outcomes["amy"].rows if r["lab"] == "01_host_sum"]), 2, "one reference row a type")
        self.assertFalse(amy.contradicted)
        ben = outcomes["ben"].labs["01_host_sum"]
        self.assertIn("the timing is not usable: the student's processes were not all frozen", ben.note)
        self.assertTrue(all(row["status"] == "UNVERIFIED" for row in ben.rows))
        self.assertFalse(outcomes["ben"].labs["02_atomic"].note, "the device part is not touched")

    def test_a_paired_host_part_is_several_runs_whose_calls_are_pooled(self):
        labs = [lab for lab in self.manifest.labs if lab.folder == "01_host_sum"]
        tools = FakeToolchain({"ben": {"01_host_sum": {"freeze_fails": True}}}, paired=True)
        outcomes = self._paired_class(tools, labs, host_runs=3)
        self.assertEqual(tools.calls, [("paired", "amy", ("01_host_sum",))] * 3 + [("paired", "ben", ("01_host_sum",))],
                         "3 paired runs; a run whose student side is spoiled ends the part")
        amy = outcomes["amy"].labs["01_host_sum"]
        self.assertEqual({row["ratio_to_ref"] for row in amy.rows}, {"1.0200"})
        self.assertEqual({row["status"] for row in amy.rows}, {"ok"})
        ben = outcomes["ben"].labs["01_host_sum"]
        self.assertTrue(all(row["status"] == "UNVERIFIED" for row in ben.rows))

    def test_a_host_part_past_the_zero_credit_ratio_stops_after_its_first_run(self):
        labs = [lab for lab in self.manifest.labs if lab.folder == "01_host_sum"]
        zero = Policy.load(None).performance.zero_credit_ratio
        past = zero * benchmark.PAST_CREDIT_MARGIN
        for slow_ratio, amy_runs in ((past * 1.1, 1), (past * 0.9, 4), (3.0, 4)):
            with self.subTest(slow_ratio=slow_ratio):
                tools = FakeToolchain({"amy": {"01_host_sum": {"slow": True}}}, paired=True, slow_ratio=slow_ratio)
                outcomes = self._paired_class(tools, labs, host_runs=4, zero_credit_ratio=zero)
                self.assertEqual(tools.calls, [("paired", "amy", ("01_host_sum",))] * amy_runs
                                 + [("paired", "ben", ("01_host_sum",))] * 4, "ben is honest: every run")
                amy = outcomes["amy"].labs["01_host_sum"]
                self.assertEqual({row["status"] for row in amy.rows}, {"ok"})
                self.assertEqual({round(float(row["ratio_to_ref"]), 2) for row in amy.rows}, {round(slow_ratio, 2)})
                self.assertFalse(outcomes["amy"].problems)
        tools = FakeToolchain({"amy": {"01_host_sum": {"slow": True}}}, paired=True, slow_ratio=past * 10)
        self._paired_class(tools, labs, host_runs=4)
        self.assertEqual(len(tools.calls), 8, "no zero_credit_ratio given: every run")

    def test_runs_merge_call_by_call_and_a_cell_missing_from_one_is_not_usable(self):
        def item(calls, verified=True, excess=30.0):
            return TimedItem("t001", "01_host_sum", "int", 8, len(calls), 0.0, 0.0, 0.0, 0.0, verified, "",
                             inputs="host", clocked=len(calls), excess_us=excess, excess_min_us=excess - 1,
                             window_us=excess, prep_us=2.0, calls_us=list(calls))
        key = ("01_host_sum", "int", 8)
        befores = [{key: item([10.0, 10.0, 10.0])}, {key: item([20.0, 20.0, 20.0], excess=50.0)}]
        owns = [{key: item([11.0, 11.0, 11.0])}, {key: item([21.0, 23.0, 21.0])}]
        before, own = benchmark.merge_paired(befores, owns)
        self.assertEqual(own[key].samples, 6)
        self.assertEqual(own[key].calls_us, [11.0, 11.0, 11.0, 21.0, 23.0, 21.0])
        self.assertEqual((own[key].median_us, own[key].min_us), (16.0, 11.0))
        self.assertAlmostEqual(own[key].paired_ratio, statistics.median([1.1, 1.1, 1.1, 1.05, 1.15, 1.05]))
        self.assertEqual((before[key].excess_us, before[key].excess_min_us), (40.0, 29.0))
        self.assertTrue(own[key].verified)
        _, own = benchmark.merge_paired(befores, [owns[0], {}])
        self.assertFalse(own[key].verified)
        self.assertEqual(own[key].problem, "not timed in every paired run")
        _, own = benchmark.merge_paired(befores, [owns[0], {key: item([21.0], verified=False)}])
        self.assertFalse(own[key].verified)

    def test_the_host_part_is_timed_with_the_host_samples_and_the_device_part_with_the_samples(self):
        labs = [lab for lab in self.manifest.labs if lab.folder in ("01_host_sum", "02_atomic")]
        config = dataclasses.replace(Policy.load(None).benchmark, samples=30, host_samples=120, min_samples=4,
                                     budget_ms=80.0, host_budget_ms=900.0, sizes=["2^22"], host_sizes=["2^18", "1000"])
        for paired in (True, False):
            tools = FakeToolchain({}, paired=paired)
            timing = benchmark.ClassTiming(tools, self.manifest, labs, config, 7, Path(self.tmp.name) / "timing",
                                           True, Path(self.tmp.name) / "expected.txt")

            @contextlib.contextmanager
            def turn(part, alone=False):
                yield True

            modules = {lab.folder: Path(self.tmp.name) / "amy" / "modules" / lab.module_file for lab in labs}
            timing.time_student("amy", labs, modules, "2026-11-26", turn)
            host = [n for n, folders in tools.plans if "01_host_sum" in folders]
            device = [n for n, folders in tools.plans if "02_atomic" in folders]
            self.assertEqual(host, [120] * (2 if paired else 3), f"paired={paired}: the student's and the "
                                                                 "reference's, or before, the student's, after")
            self.assertEqual(device, [30] * 3, f"paired={paired}: before, the student's, after")
            budgets = {(options[0], options[1], options[2][0]) for options, (_, folders) in zip(tools.budgets, tools.plans)
                       if "01_host_sum" in folders}
            self.assertEqual(budgets, {(4, 900.0, 1 << 18)}, "the host part: its budget, at host_sizes")
            sizes = {n for options, (_, folders) in zip(tools.budgets, tools.plans) if "01_host_sum" in folders
                     for n in options[2]}
            self.assertEqual(sizes, {1 << 18, 1000})
            device_budgets = {options[:2] for options, (_, folders) in zip(tools.budgets, tools.plans)
                              if "02_atomic" in folders}
            sizes = {n for options, (_, folders) in zip(tools.budgets, tools.plans) if "02_atomic" in folders
                     for n in options[2]}
            self.assertEqual((device_budgets, sizes), ({(4, 80.0)}, {1 << 22}), "the device part: its budget, at sizes")


if __name__ == "__main__":
    unittest.main()
