"""Grading several students at once: the gates, student claims, and a pipelined class graded
exactly as a serial one, with no correctness run ever on the GPU during a timing run and nothing
else on the cores while the host lab is timed."""

import contextlib
import json
import shutil
import tempfile
import threading
import time
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class
from grader.outputs.claims import Claim
from grader.stages.engine import Grader, Options
from grader.stages.gpu_gate import CPU_RANK, GPU_RANK, Gate, LockOrderError
from grader.stages.neighbours import Neighbours
from grader.policy import Policy
from grader.run.progress import Progress


def started(target, pause_s: float = 0.0) -> threading.Thread:
    """`target` in a thread of its own, started; then `pause_s` for it to reach where it waits."""
    thread = threading.Thread(target=target)
    thread.start()
    time.sleep(pause_s)
    return thread


def held_run(gate: Gate, entered: threading.Event, release: threading.Event, events: list, out: str):
    """A shared run of `gate` that says it `entered`, holds the gate until `release`, then logs `out`."""
    def run():
        with gate.shared():
            entered.set()
            release.wait(5)
        events.append(out)
    return run


def alone_and_gpu_run(grader: Grader, events: list):
    """amy's run alone on the GPU, and another student's GPU run: each logs when it ran."""
    def retry_alone():
        with grader.runs.alone("amy", gpu=True):
            events.append("alone")

    def gpu_run():
        with grader.gpu_gate.shared():
            events.append("gpu run")
    return retry_alone, gpu_run


class GateTest(unittest.TestCase):
    def test_exclusive_waits_for_shared_runs_and_new_shared_runs_wait_for_it(self):
        gate, events = Gate("GPU", GPU_RANK), []
        first_in, release_first = threading.Event(), threading.Event()

        def tester(name, hold: threading.Event | None):
            with gate.shared():
                events.append(f"{name} in")
                if hold:
                    first_in.set()
                    hold.wait(5)
                events.append(f"{name} out")

        def timer():
            with gate.exclusive():
                events.append("timing in")
                events.append("timing out")

        first = threading.Thread(target=tester, args=("test1", release_first))
        first.start()
        first_in.wait(5)
        timing = threading.Thread(target=timer)
        timing.start()
        time.sleep(0.2)   # the timing waits now; a test arriving after it must wait too
        second = threading.Thread(target=tester, args=("test2", None))
        second.start()
        time.sleep(0.2)
        self.assertEqual(events, ["test1 in"])
        release_first.set()
        for thread in (first, timing, second):
            thread.join(5)
        self.assertEqual(events, ["test1 in", "test1 out", "timing in", "timing out", "test2 in", "test2 out"])

    def test_a_turn_behind_a_long_shared_run_lets_new_shared_runs_in_for_a_while_only(self):
        gate, events = Gate("GPU", GPU_RANK, long_s=0.3, behind_long_s=1.0), []
        hang_in, release_hang = threading.Event(), threading.Event()

        def hang():   # a test run whose call never ends, until the grader stops it
            with gate.shared():
                events.append("hang in")
                hang_in.set()
                release_hang.wait(10)
            events.append("hang out")

        def run(name):
            with gate.shared():
                events.append(f"{name} in")
            events.append(f"{name} out")

        def timer():
            with gate.exclusive():
                events.append("timing in")
                events.append("timing out")

        first = threading.Thread(target=hang)
        first.start()
        hang_in.wait(5)
        timing = threading.Thread(target=timer)
        timing.start()
        time.sleep(0.05)   # the timing waits behind the hang, which is not long yet
        early = threading.Thread(target=run, args=("early",))
        early.start()
        time.sleep(0.1)
        self.assertEqual(events, ["hang in"], "a shared run let in before the run ahead of the timing was long")
        early.join(5)   # let in once the hang has held 0.3 s, the timing's let-in time not over
        self.assertEqual(events, ["hang in", "early in", "early out"])
        time.sleep(1.2)   # the timing has waited past its 1 s: nothing more is let in
        late = threading.Thread(target=run, args=("late",))
        late.start()
        time.sleep(0.4)
        self.assertEqual(events, ["hang in", "early in", "early out"])
        release_hang.set()
        for thread in (first, timing, late):
            thread.join(5)
        self.assertEqual(events[3:], ["hang out", "timing in", "timing out", "late in", "late out"])
        self.assertEqual(gate.let_in_behind_long, 1)

    def test_behind_a_hog_new_shared_runs_go_on_longer_but_not_forever(self):
        gate = Gate("CPU", CPU_RANK, long_s=0.1, behind_long_s=0.3, hog_s=0.6, behind_hog_s=1.5)
        events, hog_in, release = [], threading.Event(), threading.Event()

        def hog():
            with gate.shared():
                hog_in.set()
                release.wait(10)

        def run(name):
            with gate.shared():
                events.append(name)

        def turn():
            with gate.exclusive():
                events.append("turn")

        threads = [started(hog)]
        hog_in.wait(5)
        threads.append(started(turn, pause_s=0.45))   # past behind_long_s, the hog not yet a hog
        blocked = started(lambda: run("blocked"), pause_s=0.1)
        self.assertEqual(events, [], "past behind_long_s and before hog_s: kept out")
        time.sleep(0.3)   # the hog has held 0.85 s now: let in
        threads.append(started(lambda: run("behind the hog"), pause_s=0.2))
        self.assertIn("behind the hog", events)
        time.sleep(1.2)   # the turn has waited past behind_hog_s: kept out again
        late = started(lambda: run("late"), pause_s=0.3)
        self.assertNotIn("late", events)
        release.set()
        for thread in threads + [blocked, late]:
            thread.join(5)
        self.assertEqual(events[-2:], ["turn", "late"])

    def test_quiet_since_says_whether_anything_ran_on_the_gate_between_two_exclusive_turns(self):
        gate = Gate("GPU", GPU_RANK)
        with gate.exclusive() as first:
            pass
        with gate.exclusive() as second:
            self.assertTrue(second.quiet_since(first))
        with gate.exclusive(idle=True):   # held only to keep others out: nothing ran there
            pass
        with gate.exclusive() as third:
            self.assertTrue(third.quiet_since(second))
        with gate.shared():
            pass
        with gate.exclusive() as fourth:
            self.assertFalse(fourth.quiet_since(third))
        with gate.exclusive():             # a run again alone is work on the gate
            pass
        with gate.exclusive() as fifth:
            self.assertFalse(fifth.quiet_since(fourth))
            self.assertFalse(fifth.quiet_since(None))

    def test_gates_are_taken_in_one_order_and_never_twice(self):
        cpu, gpu = Gate("CPU", CPU_RANK), Gate("GPU", GPU_RANK)
        with cpu.exclusive(), gpu.exclusive():
            pass
        with gpu.shared():
            with self.assertRaises(LockOrderError):
                with cpu.shared():
                    pass
            with self.assertRaises(LockOrderError):
                with gpu.shared():
                    pass
        with cpu.shared():   # the failed attempts left nothing held
            pass
        def other_thread():   # the order is per thread: another thread holds nothing
            with cpu.shared():
                pass

        with gpu.shared():
            other = threading.Thread(target=other_thread)
            other.start()
            other.join(5)
        self.assertFalse(other.is_alive())


    def test_a_reservation_keeps_new_shared_runs_out_and_waits_for_the_old_without_holding_the_gate(self):
        cpu, gpu = Gate("CPU", CPU_RANK), Gate("GPU", GPU_RANK)
        events, long_in, release = [], threading.Event(), threading.Event()

        def long_run():
            with gpu.shared():
                long_in.set()
                release.wait(5)
            events.append("long out")

        def reserve_then_both():
            with gpu.reserved():
                events.append("reserved")
                with cpu.exclusive(), gpu.exclusive():   # the lock order, after the reservation
                    events.append("both")

        def late_run():
            with gpu.shared():
                events.append("late in")

        threads = [started(long_run)]
        long_in.wait(5)
        threads.append(started(reserve_then_both, pause_s=0.2))
        threads.append(started(late_run, pause_s=0.2))
        self.assertEqual(events, [], "the reservation waits for the long run; the late run waits for it")
        with cpu.shared():   # nothing held: the cores are free meanwhile
            events.append("compile")
        release.set()
        for thread in threads:
            thread.join(5)
        self.assertEqual(events, ["compile", "long out", "reserved", "both", "late in"])


class TimingTurnTest(unittest.TestCase):
    """A device part's timing lets other students compile beside it; its timing again holds the cores too."""

    def compiles_during(self, alone: bool) -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            grader = Grader(fake_manifest(Path(tmp) / "build"), Policy.load(None), FakeToolchain({}), Path(tmp) / "out",
                            Options(labs=[]), log=lambda line: None)
            compiled = threading.Event()

            def compile_beside():
                with grader.cpu_gate.shared():
                    compiled.set()

            with grader.runs.timing_turn("amy", "device", alone=alone):
                other = threading.Thread(target=compile_beside)
                other.start()
                during = compiled.wait(0.5 if alone else 5)
            other.join(5)
            self.assertTrue(compiled.is_set() and not other.is_alive(), "the compile ran once the turn ended")
            return during

    def test_a_first_timing_of_the_device_part_lets_compiles_go_on(self):
        self.assertTrue(self.compiles_during(alone=False))

    def test_a_timing_again_of_the_device_part_keeps_the_cores_to_itself(self):
        self.assertFalse(self.compiles_during(alone=True))

    def test_a_run_alone_behind_a_hog_on_the_cores_keeps_no_gpu_run_out_until_the_hog_ends(self):
        with tempfile.TemporaryDirectory() as tmp:
            grader = Grader(fake_manifest(Path(tmp) / "build"), Policy.load(None), FakeToolchain({}), Path(tmp) / "out",
                            Options(labs=[]), log=lambda line: None)
            grader.cpu_gate.long_s = 0.3
            grader.runs.POLL_S = 0.02
            hog_in, release, events = threading.Event(), threading.Event(), []

            # the student's own burners slowing its host test
            cpu_hog = held_run(grader.cpu_gate, hog_in, release, events, "hog out")

            retry_alone, gpu_run = alone_and_gpu_run(grader, events)

            threads = [started(cpu_hog)]
            hog_in.wait(5)
            time.sleep(0.4)   # a long run now
            threads.append(started(retry_alone, pause_s=0.2))
            threads.append(started(gpu_run, pause_s=0.3))
            self.assertEqual(events, ["gpu run"], "the run alone kept the GPU's runs out behind a hog on the cores")
            release.set()
            for thread in threads:
                thread.join(5)
            self.assertEqual(events, ["gpu run", "hog out", "alone"])

    def test_a_run_alone_gives_the_gpu_back_when_a_long_run_began_on_the_cores_while_it_drained(self):
        with tempfile.TemporaryDirectory() as tmp:
            grader = Grader(fake_manifest(Path(tmp) / "build"), Policy.load(None), FakeToolchain({}), Path(tmp) / "out",
                            Options(labs=[]), log=lambda line: None)
            grader.cpu_gate.long_s = 0.3
            grader.runs.POLL_S = 0.02
            gpu_in, cpu_in, gpu_release, cpu_release = (threading.Event() for _ in range(4))
            events = []

            retry_alone, gpu_run = alone_and_gpu_run(grader, events)

            threads = [started(held_run(grader.gpu_gate, gpu_in, gpu_release, events, "gpu out"))]
            gpu_in.wait(5)
            threads.append(started(retry_alone, pause_s=0.1))   # reserves the GPU, waits for it to drain
            threads.append(started(held_run(grader.cpu_gate, cpu_in, cpu_release, events, "cpu out")))
            cpu_in.wait(5)
            time.sleep(0.4)   # the run on the cores is long now
            gpu_release.set()
            time.sleep(0.2)   # drained: the run alone sees the cores' long run and gives the GPU back
            threads.append(started(gpu_run, pause_s=0.3))
            self.assertEqual(events, ["gpu out", "gpu run"], "the GPU stayed reserved behind the cores' long run")
            cpu_release.set()
            for thread in threads:
                thread.join(5)
            self.assertEqual(events, ["gpu out", "gpu run", "cpu out", "alone"])

    def test_a_run_alone_leaves_the_cores_free_while_the_gpu_s_runs_drain_then_has_both(self):
        with tempfile.TemporaryDirectory() as tmp:
            grader = Grader(fake_manifest(Path(tmp) / "build"), Policy.load(None), FakeToolchain({}), Path(tmp) / "out",
                            Options(labs=[]), log=lambda line: None)
            gpu_in, release, events = threading.Event(), threading.Event(), []

            # another student's test run on the GPU, still going
            long_gpu_run = held_run(grader.gpu_gate, gpu_in, release, events, "gpu run out")

            def retry_alone():
                with grader.runs.alone("amy", gpu=True):
                    events.append("alone")
                    with self.assertRaises(LockOrderError):   # both gates are this thread's
                        with grader.cpu_gate.shared():
                            pass

            first = threading.Thread(target=long_gpu_run)
            first.start()
            gpu_in.wait(5)
            alone = threading.Thread(target=retry_alone)
            alone.start()
            time.sleep(0.2)
            compiled = threading.Event()

            def compile_meanwhile():
                with grader.cpu_gate.shared():
                    events.append("compile")
                    compiled.set()

            other = threading.Thread(target=compile_meanwhile)
            other.start()
            self.assertTrue(compiled.wait(5), "a compile waited while the run alone waited for the GPU")
            release.set()
            for thread in (first, alone, other):
                thread.join(5)
            self.assertEqual(events, ["compile", "gpu run out", "alone"])


class NeighboursTest(unittest.TestCase):
    def test_runs_meet_the_other_students_runs_that_ran_at_the_same_time(self):
        neighbours = Neighbours()
        with neighbours.run("amy", gpu=True) as amy:
            with neighbours.run("amy", gpu=False) as amy_again, neighbours.run("ben", gpu=False) as ben:
                pass
            with neighbours.run("cat", gpu=True) as cat:
                pass
        with neighbours.run("dan", gpu=True) as dan:   # after everyone: met no one
            pass
        self.assertEqual((amy.students, amy.on_gpu), ({"ben", "cat"}, {"cat"}))
        self.assertEqual((ben.students, ben.on_gpu), ({"amy"}, {"amy"}), "amy's run on the GPU was running")
        self.assertEqual(amy_again.students, {"ben"}, "a student's own runs are no classmate")
        self.assertEqual(cat.students, {"amy"})
        self.assertEqual(dan.students, set())
        self.assertTrue(amy.shared(gpu_only=True) and ben.shared(gpu_only=True))
        self.assertTrue(amy_again.shared(gpu_only=False))
        self.assertFalse(amy_again.shared(gpu_only=True), "ben's run had no GPU")
        self.assertFalse(dan.shared(gpu_only=False))


class ClaimTest(unittest.TestCase):
    def test_a_student_is_held_by_one_grader_until_it_lets_go(self):
        with tempfile.TemporaryDirectory() as out:
            first, second = Claim(Path(out), "alice"), Claim(Path(out), "alice")
            self.assertTrue(first.acquire())
            self.assertFalse(second.acquire())
            self.assertTrue(Claim(Path(out), "bob").acquire())
            first.release()
            self.assertTrue(second.acquire())
            second.release()


class KeyTest(unittest.TestCase):
    def test_graders_starting_together_on_one_output_folder_agree_on_its_key(self):
        from concurrent.futures import ThreadPoolExecutor
        from grader.outputs import signing
        for _ in range(20):
            with tempfile.TemporaryDirectory() as out:
                with ThreadPoolExecutor(8) as pool:
                    keys = list(pool.map(lambda _: signing.load_key(Path(out)), range(8)))
                self.assertEqual(len(set(keys)), 1)
                self.assertEqual(sorted(p.name for p in Path(out).iterdir()), [signing.KEY_FILE])


class ProgressTest(unittest.TestCase):
    def test_counts_students_labs_and_failures(self):
        progress = Progress(total=3)
        progress.skipped()
        line = progress.finished("bob", ["PASSED", "WRONG_ANSWER", "MISSING", "TIMEOUT"])
        self.assertIn("2/3 students", line)
        self.assertIn("failures so far: 2 labs of 1 students", line)
        self.assertRegex(line, r"ETA \d+s")
        self.assertIn("ETA done", progress.finished("carol", ["PASSED"]))


class WatchedToolchain(FakeToolchain):
    """The fake toolchain, slowed down a little, that records what ran at the same time: it fails the
    test when a GPU correctness or sanitizer run overlaps a device timing run (or a host one, when the
    host part holds the GPU), a compile or a host test run overlaps the timing of host items, or two
    timing runs overlap, and counts the compiles that overlap GPU timing and the GPU runs that overlap
    host timing."""

    # what must never run beside what (both ways: whichever of the two starts second sees the first)
    FORBIDDEN = {"compile": {"host timing"}, "host test": {"host timing"}, "gpu run": {"host timing", "device timing"},
                 "host timing": {"compile", "host test", "gpu run", "host timing", "device timing"},
                 "device timing": {"gpu run", "host timing", "device timing"}}

    def __init__(self, outcomes, seconds: float = 0.01, host_part_holds_gpu: bool | None = None):
        super().__init__(outcomes)
        if host_part_holds_gpu is None:   # as the policy the grading loads says
            host_part_holds_gpu = Policy.load(GRADING / "policy.toml").benchmark.host_part_holds_gpu
        if not host_part_holds_gpu:   # GPU runs may go on beside the host part's timing
            self.FORBIDDEN = {kind: others - ({"host timing"} if kind == "gpu run" else {"gpu run"} if
                                              kind == "host timing" else set())
                              for kind, others in self.FORBIDDEN.items()}
        self.seconds = seconds   # a compile or a timing run; a test run takes a fifth of it
        self.lock = threading.Lock()
        self.running = {kind: 0 for kind in self.FORBIDDEN}
        self.most_gpu_runs = 0
        self.overlaps = []
        self.compiles_beside_gpu_timing = 0
        self.gpu_runs_beside_host_timing = 0

    @contextlib.contextmanager
    def _running(self, kind: str, seconds: float):
        with self.lock:
            self.overlaps += [f"a {kind} beside a {other}" for other in sorted(self.FORBIDDEN[kind])
                              if self.running[other]]
            pair = {"compile": "device timing", "device timing": "compile"}.get(kind)
            if pair and self.running[pair]:
                self.compiles_beside_gpu_timing += 1
            pair = {"gpu run": "host timing", "host timing": "gpu run"}.get(kind)
            if pair and self.running[pair]:
                self.gpu_runs_beside_host_timing += 1
            self.running[kind] += 1
            self.most_gpu_runs = max(self.most_gpu_runs, self.running["gpu run"])
        try:
            time.sleep(seconds)
            yield
        finally:
            with self.lock:
                self.running[kind] -= 1

    def compile(self, student, lab, *args):
        with self._running("compile", self.seconds):
            return super().compile(student, lab, *args)

    def run_tests(self, student, lab, *args):
        with self._running("host test" if lab.host else "gpu run", self.seconds / 5):
            return super().run_tests(student, lab, *args)

    def run_sanitizer(self, student, lab, *args):
        with self._running("gpu run", self.seconds / 5):
            return super().run_sanitizer(student, lab, *args)

    def time(self, plan_text, *args, **kwargs):
        host = any(line.split(",")[2] == "host" for line in plan_text.splitlines())
        with self._running("host timing" if host else "device timing", self.seconds):
            return super().time(plan_text, *args, **kwargs)


class PipelinedClassTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.manifest = fake_manifest(root / "build")
        self.submissions = write_example_class(root / "example")
        self.students = [(p.name, p) for p in sorted(self.submissions.iterdir()) if p.is_dir()]
        self.expected = expected_class()["students"]

    def tearDown(self):
        self.tmp.cleanup()

    def grade(self, out: Path, in_flight: int, toolchain, **benchmark) -> dict:
        options = Options(labs=self.manifest.labs, jobs=4, seed=99, in_flight=in_flight)
        policy = Policy.load(GRADING / "policy.toml")
        for key, value in benchmark.items():
            setattr(policy.benchmark, key, value)
        Grader(self.manifest, policy, toolchain, out, options, log=lambda text: None).grade_class(self.students)
        records = {}
        for name, _ in self.students:
            data = json.loads((out / "students" / f"{name}.json").read_text(encoding="utf-8"))
            records[name] = {folder: (lab["verdict"], lab["score"]["correctness"], lab["score"]["performance"])
                             for folder, lab in data["labs"].items()}
        return records

    def grade_amy_and_ben(self, toolchain, in_flight: int) -> None:
        """Two copies of alice's submission, labs 01 and 02, no sanitizer."""
        folder = Path(self.tmp.name) / "two"
        for name in ("amy", "ben"):
            shutil.copytree(self.submissions / "alice", folder / name)
        options = Options(labs=[lab for lab in self.manifest.labs if lab.folder in ("01_host_sum", "02_atomic")],
                          jobs=2, seed=99, in_flight=in_flight, sanitizer=False)
        Grader(self.manifest, Policy.load(GRADING / "policy.toml"), toolchain, Path(self.tmp.name) / "out", options,
               log=lambda text: None).grade_class([(name, folder / name) for name in ("amy", "ben")])

    def test_same_grades_as_one_at_a_time_and_nothing_beside_what_is_timed(self):
        serial = self.grade(Path(self.tmp.name) / "serial", 1, FakeToolchain(self.expected))
        for holds in (True, False):
            with self.subTest(host_part_holds_gpu=holds):
                watched = WatchedToolchain(self.expected, host_part_holds_gpu=holds)
                pipelined = self.grade(Path(self.tmp.name) / f"pipelined-{holds}", 4, watched,
                                       host_part_holds_gpu=holds)
                self.assertEqual(pipelined, serial)
                self.assertEqual(watched.overlaps, [])
                self.assertGreater(watched.most_gpu_runs, 1, "the students' GPU test runs never overlapped: not pipelined")
                if holds:
                    self.assertEqual(watched.gpu_runs_beside_host_timing, 0)
                for name, _ in self.students:   # every student timed once per part
                    parts = [call[2] == ("01_host_sum",) for call in watched.calls
                             if call[0] == "bench" and call[1] == name]
                    host = self.expected[name]["01_host_sum"]["verdict"] == "PASSED"
                    self.assertEqual(parts, [True, False][not host:], name)

    def test_compiles_go_on_while_the_gpu_is_timed(self):
        class Rendezvous(WatchedToolchain):
            """ben's compile of lab 02 waits for a GPU timing run, and the GPU timing runs wait for a
            compile, until one compile ran beside GPU timing: unless the grader keeps compiles off the
            cores while the GPU is timed, which would make each wait its whole 10 s."""

            gave_up = 0

            def _meet(self, kind, other, call):
                with self._running(kind, 0):
                    deadline = time.monotonic() + 10
                    while True:
                        with self.lock:
                            if self.running[other] or self.compiles_beside_gpu_timing:   # met, or meeting
                                break
                            if time.monotonic() > deadline:
                                self.gave_up += 1
                                break
                        time.sleep(0.005)
                    return call()

            def compile(self, student, lab, *args):
                if (student, lab.folder) != ("ben", "02_atomic"):
                    return super().compile(student, lab, *args)
                return self._meet("compile", "device timing", lambda: FakeToolchain.compile(self, student, lab, *args))

            def time(self, plan_text, *args, **kwargs):
                if ",host," in plan_text:
                    return super().time(plan_text, *args, **kwargs)
                return self._meet("device timing", "compile", lambda: FakeToolchain.time(self, plan_text, *args,
                                                                                             **kwargs))

        # amy's lab 01 fails: she has no host part, whose turn would wait for ben's compile to end
        toolchain = Rendezvous({"amy": {"01_host_sum": {"verdict": "WRONG_ANSWER"}}})
        self.grade_amy_and_ben(toolchain, in_flight=2)
        self.assertEqual(toolchain.overlaps, [])
        self.assertGreater(toolchain.compiles_beside_gpu_timing, 0, "no compile ran beside a GPU timing run")
        self.assertEqual(toolchain.gave_up, 0, "a compile or a GPU timing run waited 10 s for the other")

    def test_a_student_in_its_timing_gives_its_place_to_the_next(self):
        class NextStudentMeets(WatchedToolchain):
            """amy's device timing run waits (10 s at most) until ben has begun compiling. With one place
            in flight, ben can begin only when amy gives it up before her timing ends."""

            gave_up = 0

            def time(self, plan_text, *args, **kwargs):
                if ",host," not in plan_text and "/amy/" in plan_text:
                    deadline = time.monotonic() + 10
                    while not any(call[:2] == ("compile", "ben") for call in list(self.calls)):
                        if time.monotonic() > deadline:
                            self.gave_up += 1
                            break
                        time.sleep(0.005)
                return super().time(plan_text, *args, **kwargs)

        toolchain = NextStudentMeets({})
        self.grade_amy_and_ben(toolchain, in_flight=1)
        self.assertEqual(toolchain.overlaps, [])
        self.assertEqual(toolchain.gave_up, 0, "ben began only after amy's timing: she kept her place in flight")
        self.assertIn(("bench", "amy"), [call[:2] for call in toolchain.calls], "amy's device labs were timed")

    def test_a_student_claimed_by_another_grader_is_left_to_it(self):
        out = Path(self.tmp.name) / "claimed"
        holder = Claim(out, "alice")
        self.assertTrue(holder.acquire())
        toolchain = FakeToolchain(self.expected)
        options = Options(labs=self.manifest.labs, jobs=2, seed=99, in_flight=2)
        result = Grader(self.manifest, Policy.load(GRADING / "policy.toml"), toolchain, out, options,
                        log=lambda text: None).grade_class(self.students)
        holder.release()
        self.assertEqual(result.elsewhere, ["alice"])
        self.assertNotIn("alice", result.graded)
        self.assertFalse((out / "students" / "alice.json").exists())
        shutil.rmtree(out)


if __name__ == "__main__":
    unittest.main()
