"""Grading several students at once: the GPU gate, student claims, and a pipelined class graded
exactly as a serial one, with no correctness run ever on the GPU during a timing run."""

import json
import shutil
import tempfile
import threading
import time
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class
from grader.claims import Claim
from grader.engine import Grader, Options
from grader.gpu_gate import GpuGate
from grader.policy import Policy
from grader.progress import Progress


class GateTest(unittest.TestCase):
    def test_exclusive_waits_for_shared_runs_and_new_shared_runs_wait_for_it(self):
        gate, events = GpuGate(), []
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

    def test_quiet_since_says_whether_anything_shared_ran_between_two_exclusive_turns(self):
        gate = GpuGate()
        with gate.exclusive() as mark:
            pass
        self.assertTrue(gate.quiet_since(mark))
        with gate.shared():
            pass
        self.assertFalse(gate.quiet_since(mark))
        self.assertFalse(gate.quiet_since(None))


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
        from grader import signing
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
    """The fake toolchain, slowed down a little, that fails the test when a GPU correctness or
    sanitizer run overlaps a timing run."""

    def __init__(self, outcomes):
        super().__init__(outcomes)
        self.lock = threading.Lock()
        self.gpu_runs = 0
        self.timing = False
        self.most_gpu_runs = 0
        self.overlaps = []

    def _gpu_run(self, what, lab, run):
        if lab.host:
            return run()
        with self.lock:
            if self.timing:
                self.overlaps.append(f"{what} {lab.folder} during a timing run")
            self.gpu_runs += 1
            self.most_gpu_runs = max(self.most_gpu_runs, self.gpu_runs)
        try:
            time.sleep(0.002)
            return run()
        finally:
            with self.lock:
                self.gpu_runs -= 1

    def run_tests(self, student, lab, *args):
        return self._gpu_run("tests", lab, lambda: super(WatchedToolchain, self).run_tests(student, lab, *args))

    def run_sanitizer(self, student, lab, *args):
        return self._gpu_run("sanitizer", lab, lambda: super(WatchedToolchain, self).run_sanitizer(student, lab, *args))

    def time(self, *args, **kwargs):
        with self.lock:
            if self.gpu_runs:
                self.overlaps.append("a timing run during a GPU test run")
            self.timing = True
        try:
            time.sleep(0.01)
            return super().time(*args, **kwargs)
        finally:
            with self.lock:
                self.timing = False


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

    def grade(self, out: Path, in_flight: int, toolchain) -> dict:
        options = Options(labs=self.manifest.labs, jobs=4, seed=99, in_flight=in_flight)
        Grader(self.manifest, Policy.load(GRADING / "policy.toml"), toolchain, out, options,
               log=lambda text: None).grade_class(self.students)
        records = {}
        for name, _ in self.students:
            data = json.loads((out / "students" / f"{name}.json").read_text(encoding="utf-8"))
            records[name] = {folder: (lab["verdict"], lab["score"]["correctness"], lab["score"]["performance"])
                             for folder, lab in data["labs"].items()}
        return records

    def test_same_grades_as_one_at_a_time_and_no_test_during_timing(self):
        serial = self.grade(Path(self.tmp.name) / "serial", 1, FakeToolchain(self.expected))
        watched = WatchedToolchain(self.expected)
        pipelined = self.grade(Path(self.tmp.name) / "pipelined", 4, watched)
        self.assertEqual(pipelined, serial)
        self.assertEqual(watched.overlaps, [])
        self.assertGreater(watched.most_gpu_runs, 1, "the students' GPU test runs never overlapped: not pipelined")
        for name, _ in self.students:   # every student timed once, between its own references
            self.assertEqual(sum(1 for call in watched.calls if call[0] == "bench" and call[1] == name), 1)

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
