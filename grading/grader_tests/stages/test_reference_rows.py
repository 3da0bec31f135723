"""The timing turns of a pipelined class: one at a time on the timing lane, the host part beside
other students' GPU runs unless [benchmark] host_part_holds_gpu, and several students' device runs
in a row closed by one reference run ([benchmark] students_per_reference)."""

import contextlib
import dataclasses
import json
import tempfile
import threading
import unittest
from pathlib import Path

from grader_tests.cgroup_fixtures import v2_tree
from grader_tests.helpers import FakeToolchain, fake_manifest
from grader.sandbox.cgroups import detect
from grader.sandbox.cpu_share import CpuShare
from grader.policy import Policy
from grader.stages import benchmark
from grader.stages.engine import Grader, Options
from grader_tests.stages.test_classmates import ClassCase

WAIT_S = 5.0


class Turns:
    """One timing turn at a time, as the timing lane gives them, counting the students waiting for one."""

    def __init__(self):
        self.lock, self.count_lock = threading.Lock(), threading.Lock()
        self.waiting_now = 0
        self.log = []

    @contextlib.contextmanager
    def turn(self, who: str, part: str, alone: bool = False):
        with self.count_lock:
            self.waiting_now += 1
        with self.lock:
            with self.count_lock:
                self.waiting_now -= 1
            self.log.append((who, part, alone))
            yield False   # other work ran there since: a "before" is reused only when recent

    def waiting(self, part: str) -> int:
        with self.count_lock:
            return self.waiting_now


class RowToolchain(FakeToolchain):
    """FakeToolchain whose student runs can wait until `waiters` students wait for a turn, and whose
    student `fails` raises in its own timing run (a grader thread that dies in its turn)."""

    def __init__(self, turns: Turns, hold: dict[str, int], fails: str = ""):
        super().__init__({})
        self.turns, self.hold, self.fails = turns, hold, fails
        self.order = []

    def time(self, plan_text, work, sandboxed, readable, gpu, *args, **kwargs):
        if sandboxed:
            student = Path(plan_text.splitlines()[0].split(",")[5]).parent.parent.name
            if student == self.fails:
                raise RuntimeError("the grader's thread for this student died in its turn")
            waiters = self.hold.get(student, 0)
            for _ in range(int(WAIT_S / 0.01)):
                if self.turns.waiting("device") >= waiters:
                    break
                threading.Event().wait(0.01)
            self.order.append(student)
        else:
            self.order.append("reference")
        return super().time(plan_text, work, sandboxed, readable, gpu, *args, **kwargs)


class TimingCase(unittest.TestCase):
    """A ClassTiming of lab 10 alone, on the fake toolchain."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.manifest = fake_manifest(self.root / "build")
        self.labs = [lab for lab in self.manifest.labs if lab.folder == "10_two_step"]

    def tearDown(self):
        self.tmp.cleanup()

    def timing(self, tools, per_row: int) -> benchmark.ClassTiming:
        config = dataclasses.replace(Policy.load(None).benchmark, students_per_reference=per_row)
        timing = benchmark.ClassTiming(tools, self.manifest, self.labs, config, 7, self.root / "timing", True,
                                       self.root / "expected.txt")
        timing.row_wait_s = 0.05
        return timing

    def assert_bracketed(self, outcome: benchmark.Outcome):
        references = [row for row in outcome.rows if row["student"] == "reference"]
        self.assertTrue(references)
        self.assertIsNotNone(outcome.drift, "a reference run before and one after the student's")
        self.assertTrue(outcome.labs["10_two_step"].rows[0]["ratio_to_ref"])


class ReferenceRowTest(TimingCase):
    def time_students(self, names: list[str], per_row: int, hold: dict[str, int], fails: str = ""):
        """`names[0]` takes the first turn; the others ask for theirs while it runs."""
        turns = Turns()
        tools = RowToolchain(turns, hold, fails)
        timing = self.timing(tools, per_row)
        outcomes, errors = {}, {}

        def time_one(name):
            modules = {lab.folder: self.root / name / "modules" / lab.module_file for lab in self.labs}
            try:
                outcomes[name] = timing.time_student(name, self.labs, modules, "2026-11-27",
                                                     lambda part, alone: turns.turn(name, part, alone))
            except RuntimeError as exc:
                errors[name] = str(exc)

        first = threading.Thread(target=time_one, args=(names[0],))
        first.start()
        for _ in range(int(WAIT_S / 0.01)):   # the first student has its turn before the others ask
            if turns.log:
                break
            threading.Event().wait(0.01)
        others = [threading.Thread(target=time_one, args=(name,)) for name in names[1:]]
        for thread in others:
            thread.start()
        for thread in [first, *others]:
            thread.join(WAIT_S * 4)
            self.assertFalse(thread.is_alive(), "a student still waits for its timing")
        return tools, turns, outcomes, errors

    def test_students_waiting_for_a_turn_share_one_reference_run_after_them(self):
        # amy runs while ben and cal wait: amy and ben leave their "after" to the run that ends the row
        tools, _, outcomes, errors = self.time_students(["amy", "ben", "cal"], 4, {"amy": 2, "ben": 1})
        self.assertEqual(errors, {})
        self.assertEqual(tools.order[:2], ["reference", "amy"])
        self.assertEqual(tools.order[-1], "reference")
        self.assertEqual(tools.order.count("reference"), 2, tools.order)
        for name in ("amy", "ben", "cal"):
            self.assert_bracketed(outcomes[name])

    def test_a_row_holds_at_most_students_per_reference(self):
        tools, _, outcomes, errors = self.time_students(["amy", "ben", "cal"], 2, {"amy": 2, "ben": 1})
        self.assertEqual(errors, {})
        # amy joins a row; ben is its second student and ends it; cal's row is his own
        self.assertEqual(tools.order, ["reference", "amy", tools.order[2], "reference", tools.order[4], "reference"])
        for name in ("amy", "ben", "cal"):
            self.assert_bracketed(outcomes[name])

    def test_one_per_row_is_a_reference_run_after_every_student(self):
        tools, _, outcomes, errors = self.time_students(["amy", "ben", "cal"], 1, {"amy": 2, "ben": 1})
        self.assertEqual(errors, {})
        self.assertEqual(tools.order.count("reference"), 4, tools.order)

    def test_a_row_whose_next_student_fails_in_its_turn_still_gets_its_after(self):
        # amy leaves her "after" to ben, whose thread dies in its turn: amy measures it in a turn of her own
        tools, turns, outcomes, errors = self.time_students(["amy", "ben"], 4, {"amy": 1}, fails="ben")
        self.assertIn("ben", errors)
        self.assertEqual(tools.order, ["reference", "amy", "reference"])
        self.assertEqual([who for who, part, _ in turns.log], ["amy", "ben", "amy"])
        self.assert_bracketed(outcomes["amy"])

    def test_a_classmate_in_flight_before_its_timing_makes_a_row(self):
        # ben is still in his tests when amy's device run ends: amy leaves her "after" to the row, and
        # ben's run, once his tests are over, ends it
        turns = Turns()
        tools = RowToolchain(turns, {})
        timing = self.timing(tools, 4)
        outcomes, ben_in_flight = {}, threading.Event()

        def modules(name):
            return {lab.folder: self.root / name / "modules" / lab.module_file for lab in self.labs}

        def ben():
            with timing.expecting("ben"):
                ben_in_flight.set()
                for _ in range(int(WAIT_S / 0.01)):   # his tests and sanitizer runs, until amy's device run
                    if "amy" in tools.order:
                        break
                    threading.Event().wait(0.01)
                outcomes["ben"] = timing.time_student("ben", self.labs, modules("ben"), "2026-11-28",
                                                      lambda part, alone: turns.turn("ben", part, alone))

        thread = threading.Thread(target=ben)
        thread.start()
        self.assertTrue(ben_in_flight.wait(WAIT_S))
        with timing.expecting("amy"):
            outcomes["amy"] = timing.time_student("amy", self.labs, modules("amy"), "2026-11-28",
                                                  lambda part, alone: turns.turn("amy", part, alone))
        thread.join(WAIT_S * 2)
        self.assertFalse(thread.is_alive())
        self.assertEqual(tools.order, ["reference", "amy", "ben", "reference"])
        for name in ("amy", "ben"):
            self.assert_bracketed(outcomes[name])

    def test_a_classmate_in_flight_with_no_device_lab_passed_ends_no_row(self):
        # ben's timing has no device lab: amy's row would wait for nobody, so her "after" follows at once
        turns = Turns()
        tools = RowToolchain(turns, {})
        timing = self.timing(tools, 4)
        with timing.expecting("ben"):
            timing.time_student("ben", [], {}, "2026-11-28", lambda part, alone: turns.turn("ben", part, alone))
            modules = {lab.folder: self.root / "amy" / "modules" / lab.module_file for lab in self.labs}
            with timing.expecting("amy"):
                outcome = timing.time_student("amy", self.labs, modules, "2026-11-28",
                                              lambda part, alone: turns.turn("amy", part, alone))
        self.assertEqual(tools.order, ["reference", "amy", "reference"])
        self.assertEqual([who for who, _, _ in turns.log], ["amy"], "amy's after came in a turn of its own")
        self.assert_bracketed(outcome)

    def test_a_student_alone_never_joins_a_row(self):
        # nobody waits when amy's device run ends: her "after" follows at once, in her turn
        tools, turns, outcomes, _ = self.time_students(["amy"], 4, {})
        self.assertEqual(tools.order, ["reference", "amy", "reference"])
        self.assertEqual(len(turns.log), 1)
        self.assert_bracketed(outcomes["amy"])


class SlowChecks(FakeToolchain):
    """Each timing run's check takes CHECK_S after its processes ended (on_ended); `broken_reference`:
    a reference run's check raises."""
    CHECK_S = 1.0   # far longer than the fake runs of a turn take, even on a loaded machine

    def __init__(self, events: list, broken_reference: bool = False):
        super().__init__({})
        self.events, self.broken_reference = events, broken_reference

    def time(self, plan_text, work, sandboxed, readable, gpu, timeout, call_timeout, cache=None, on_ended=None):
        result = super().time(plan_text, work, sandboxed, readable, gpu, timeout, call_timeout, cache)
        who = "student" if sandboxed else "reference"
        self.events.append(f"{who} ended")
        on_ended()
        threading.Event().wait(self.CHECK_S)
        self.events.append(f"{who} checked")
        if self.broken_reference and not sandboxed:
            raise OSError("the checker could not be started")
        return result


class ChecksAfterTheTurnTest(TimingCase):
    """A timing run's check (the checker, on the CPU) runs beside the turn's next run or after the
    turn: the GPU's turn lasts as long as the runs' processes, not their checks."""

    def time_one(self, tools: SlowChecks, events: list) -> benchmark.Outcome:
        @contextlib.contextmanager
        def turn(part, alone):
            events.append("turn begins")
            yield False
            events.append("turn over")

        modules = {lab.folder: self.root / "amy" / "modules" / lab.module_file for lab in self.labs}
        return self.timing(tools, 4).time_student("amy", self.labs, modules, "2026-11-28", turn)

    def test_the_turn_ends_when_the_runs_end_and_each_check_overlaps_the_next_run(self):
        events = []
        outcome = self.time_one(SlowChecks(events), events)
        self.assertEqual(events[:4], ["turn begins", "reference ended", "student ended", "reference ended"], events)
        self.assertEqual(events[4], "turn over", "the turn waited for a check")
        self.assertEqual(sorted(events[5:]), ["reference checked", "reference checked", "student checked"], events)
        self.assert_bracketed(outcome)
        self.assertEqual(outcome.problems, [])

    def test_a_reference_check_that_fails_is_a_problem_of_the_timing_not_an_error(self):
        events = []
        outcome = self.time_one(SlowChecks(events, broken_reference=True), events)
        self.assertIn("the reference run's check failed: the checker could not be started", outcome.problems)
        self.assertIsNone(outcome.labs["10_two_step"].ratio)
        self.assertIn("turn over", events)


class TimingLaneTest(unittest.TestCase):
    """A host part's timing turn lets GPU runs go on unless the policy says it holds the GPU, and no
    device timing turn starts while it lasts where both parts' runs share one timing core; with a
    core for each part (cpu_plan.py) a device turn runs beside it."""

    def grader(self, tmp: str, holds: bool, host_points: float | None = None) -> Grader:
        policy = Policy.from_dict({"labs": {"01_host_sum": {"performance": host_points}}} if host_points else {})
        policy.benchmark = dataclasses.replace(policy.benchmark, host_part_holds_gpu=holds)
        manifest = fake_manifest(Path(tmp) / "build")
        return Grader(manifest, policy, FakeToolchain({}), Path(tmp) / "out", Options(labs=manifest.labs),
                      log=lambda line: None)

    def test_a_host_lab_that_earns_performance_points_is_timed_holding_the_gpu(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertFalse(self.grader(tmp, False).runs.host_part_holds_gpu(), "lab 01 earns none by default")
            self.assertTrue(self.grader(tmp, False, host_points=5.0).runs.host_part_holds_gpu())
            self.assertTrue(self.grader(tmp, True).runs.host_part_holds_gpu())

    def beside_host_turn(self, holds: bool, other, two_cores: bool = False) -> bool:
        """Whether `other(grader)` (a context manager) gets in while a host timing turn is held;
        `two_cores`: the grader's CPU share keeps a core for each part's timing runs (cpu_plan.py)."""
        with tempfile.TemporaryDirectory() as tmp:
            grader = self.grader(tmp, holds)
            if two_cores:
                mounts, fs = v2_tree(Path(tmp) / "cgroup", cpus="0-15")
                grader.cpu = CpuShare(detect(mounts, fs), fs=fs, cores=range(16), name="g1-1")
                grader.cpu.start(4, True)
                self.addCleanup(grader.cpu.close)
                self.assertFalse(grader.cpu.parts_share_a_core, grader.cpu.why_not)
            entered = threading.Event()

            def run_beside():
                with other(grader):
                    entered.set()

            with grader.runs.timing_turn("amy", benchmark.HOST):
                thread = threading.Thread(target=run_beside)
                thread.start()
                during = entered.wait(2.0 if not holds and (other is not device_turn or two_cores) else 0.3)
            thread.join(5)
            self.assertTrue(entered.is_set() and not thread.is_alive(), "it ran once the turn ended")
            return during

    def test_a_gpu_run_goes_on_beside_the_host_part_unless_it_holds_the_gpu(self):
        self.assertTrue(self.beside_host_turn(False, gpu_run))
        self.assertFalse(self.beside_host_turn(True, gpu_run))

    def test_a_compile_never_runs_beside_the_host_part(self):
        self.assertFalse(self.beside_host_turn(False, compile_run))

    def test_a_device_timing_turn_waits_for_the_host_part_either_way_on_one_timing_core(self):
        self.assertFalse(self.beside_host_turn(False, device_turn))
        self.assertFalse(self.beside_host_turn(True, device_turn))

    def test_with_a_timing_core_for_each_part_a_device_turn_runs_beside_the_host_part(self):
        """In a class of 40 on one H200 (2026-11-28), a device turn that had the GPU waited for the one
        lane behind host turns 27 s of a 331 s grading, the GPU idle all that time."""
        self.assertTrue(self.beside_host_turn(False, device_turn, two_cores=True))
        self.assertFalse(self.beside_host_turn(True, device_turn, two_cores=True), "unless the host part holds the GPU")


    def turn_while_the_other_drains(self, waiting: str, shared) -> bool:
        """Whether the other part's turn gets in while a `waiting` part's turn waits for `shared(grader)`,
        another student's run on its gate, to end."""
        other = benchmark.DEVICE if waiting == benchmark.HOST else benchmark.HOST
        with tempfile.TemporaryDirectory() as tmp:
            grader = self.grader(tmp, False)
            run_ends, turns = threading.Event(), []

            def turn(who, part):
                with grader.runs.timing_turn(who, part):
                    turns.append(who)

            with shared(grader):   # another student's run, on the waiting turn's gate
                waiter = threading.Thread(target=turn, args=("amy", waiting))
                waiter.start()
                while not (grader.gpu_gate if waiting == benchmark.DEVICE else grader.cpu_gate)._waiting_exclusive:
                    threading.Event().wait(0.005)
                beside = threading.Thread(target=turn, args=("ben", other))
                beside.start()
                beside.join(2.0)
                during = not beside.is_alive()
                run_ends.set()
            for thread in (waiter, beside):
                thread.join(5)
                self.assertFalse(thread.is_alive(), "a turn still waits once the run ended")
            self.assertEqual(sorted(turns), ["amy", "ben"])
            return during

    def test_a_device_turn_waiting_for_the_gpus_runs_leaves_the_lane_to_a_host_turn(self):
        self.assertTrue(self.turn_while_the_other_drains(benchmark.DEVICE, gpu_run))

    def test_a_host_turn_waiting_for_a_compile_leaves_the_lane_to_a_device_turn(self):
        self.assertTrue(self.turn_while_the_other_drains(benchmark.HOST, compile_run))


class EarlyHostPartTest(ClassCase):
    """A student's host part is timed beside its own sanitizer runs: the host lab's verdict is final
    after the test stage."""

    def test_the_host_part_is_timed_beside_the_students_sanitizer_runs(self):
        class Meet(FakeToolchain):
            """The sanitizer run waits up to 5 s for the host part's timing run to run, which waits as
            long for it: unless the grader times the host part beside the sanitizer runs, each waits 5 s."""

            def __init__(self):
                super().__init__({})
                self.lock, self.running, self.met, self.gave_up = threading.Lock(), set(), False, 0

            def _meet(self, kind, other, call):
                with self.lock:
                    self.running.add(kind)
                try:
                    for _ in range(int(WAIT_S / 0.01)):
                        with self.lock:
                            if other in self.running or self.met:
                                self.met = True
                                break
                        threading.Event().wait(0.01)
                    else:
                        self.gave_up += 1
                    return call()
                finally:
                    with self.lock:
                        self.running.discard(kind)

            def run_sanitizer(self, student, *args):
                if student != "amy":   # the grader's self-test of the tool, before any student
                    return super().run_sanitizer(student, *args)
                return self._meet("sanitizer", "host timing", lambda: FakeToolchain.run_sanitizer(self, student, *args))

            def time(self, plan_text, *args, **kwargs):
                if ",host," not in plan_text:
                    return super().time(plan_text, *args, **kwargs)
                return self._meet("host timing", "sanitizer", lambda: FakeToolchain.time(self, plan_text, *args, **kwargs))

        tools = Meet()
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=("01_host_sum", "02_atomic", "03_shared_atomic"),
                          bench=True)
        self.assertTrue(tools.met, "the host part was not timed beside the sanitizer runs")
        self.assertEqual(tools.gave_up, 0)
        record = json.loads((self.out / "students" / "amy.json").read_text(encoding="utf-8"))
        host_rows = [row for row in record["timings"] if row["lab"] == "01_host_sum" and row["student"] == "amy"]
        self.assertTrue(host_rows and all(row["ratio_to_ref"] for row in host_rows), "the host part's timing is in the record")
        self.assertEqual([labs["amy"][folder]["verdict"] for folder in ("01_host_sum", "02_atomic")], ["PASSED", "PASSED"])
        benches = [call for call in tools.calls if call[0] == "bench"]
        self.assertEqual([call[2] for call in benches], [("01_host_sum",), ("02_atomic", "03_shared_atomic")])


def gpu_run(grader):
    return grader.gpu_gate.shared()


def compile_run(grader):
    return grader.cpu_gate.shared()


def device_turn(grader):
    return grader.runs.timing_turn("ben", benchmark.DEVICE)


if __name__ == "__main__":
    unittest.main()
