"""No classmate harmed: a run that failed for a resource while another student's runs shared the
machine is run again alone, and the retry's outcome is the verdict (engine.py, resources.py,
neighbours.py). On the simulated toolchain: a hog holds a resource during one of its runs, and the
runs that run into it fail the way the real tools say so."""

import json
import shutil
import tempfile
import threading
import time
import unittest
from collections import Counter
from pathlib import Path

from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class
from grader_tests.stages.test_pipeline import WatchedToolchain
from grader.judge.checks import TestCheck
from grader.stages.engine import Grader, Options
from grader.policy import Policy
from grader.stages.toolchain import CompileRun
from grader.sandbox.process import ProcessResult

LABS = ("01_host_sum", "02_atomic", "03_shared_atomic")
WAIT_S = 10.0   # a scenario that does not happen within this fails the test, it does not hang it
WHAT = "lab 02_atomic, n = 1025, type = int, pattern = mixed_sign, seed = 7"
OOM = "grading/checking/lab_runner.cpp:61: cudaMalloc(&d, bytes) failed: cudaErrorMemoryAllocation (out of memory)"
NO_FORK = "nvcc fatal   : Failed to preprocess host compiler properties.\n"
SANITIZER_OOM = ("========= COMPUTE-SANITIZER\n"
                 "========= Program hit cudaErrorMemoryAllocation (error 2) due to \"out of memory\" on CUDA API call "
                 "to cudaMalloc.\n"
                 "=========     Saved host backtrace up to driver entry point\n"
                 "========= ERROR SUMMARY: 1 error\n")
RESOURCE_WORDS = ("out of memory\ncudaErrorMemoryAllocation\nResource temporarily unavailable\nCannot allocate memory\n"
                  "std::bad_alloc\nbwrap: Creating new namespace failed: Resource temporarily unavailable\n"
                  f"{OOM}\n{NO_FORK}")


def out_of_memory(kind: str, lab):
    """A run that ran out of memory, as the real tools report it."""
    n = FakeToolchain.CASES
    if kind == "compile":
        return CompileRun(ProcessResult(1, "", NO_FORK, False, 0.1, ["nvcc"], 120.0))
    if kind == "tests":
        return ProcessResult(3), TestCheck(lab.folder, "7", n, 1, 0, error_case="c001", error_message=OOM,
                                           last_started="c001", last_started_what=WHAT)
    return ProcessResult(99, "", "", log=SANITIZER_OOM)


class HogClass(FakeToolchain):
    """The run `hog` ((kind, student, lab): kind is "compile", "tests" or a sanitizer tool) holds a
    shared resource until every run of `victims` has run into it. A victim's first run waits until
    the hog holds it and every other victim runs too, then fails with `failure(kind, lab)`; after the
    hog let go, runs are what they are. A run in `always` fails so whenever it runs (its own doing)."""

    def __init__(self, hog=None, victims=(), always=(), failure=out_of_memory):
        super().__init__({})
        self.hog, self.victims, self.always, self.failure = hog, set(victims), set(always), failure
        self.condition = threading.Condition()
        self.hogging = self.hog_done = False
        self.started, self.harmed = set(), set()
        self.counts = Counter()

    def _call(self, kind, student, lab, real):
        key = (kind, student, lab.folder)
        with self.condition:
            self.counts[key] += 1
            if key == self.hog:
                self.hogging = True
                self.condition.notify_all()
                self.condition.wait_for(lambda: self.harmed >= self.victims, WAIT_S)
                self.hog_done = True
                self.condition.notify_all()
            elif key in self.victims and not self.hog_done:
                self.started.add(key)
                self.condition.notify_all()
                self.condition.wait_for(lambda: self.hogging and self.started >= self.victims, WAIT_S)
                if self.hogging and not self.hog_done:
                    self.harmed.add(key)
                    self.condition.notify_all()
                    return self.failure(kind, lab)
        return self.failure(kind, lab) if key in self.always else real()

    def compile(self, student, lab, *args):
        return self._call("compile", student, lab, lambda: super(HogClass, self).compile(student, lab, *args))

    def run_tests(self, student, lab, *args):
        return self._call("tests", student, lab, lambda: super(HogClass, self).run_tests(student, lab, *args))

    def run_sanitizer(self, student, lab, tool, *args):
        return self._call(tool, student, lab, lambda: super(HogClass, self).run_sanitizer(student, lab, tool, *args))


class ClassCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.example = write_example_class(root / "example")
        self.manifest = fake_manifest(root / "build")
        self.out = root / "out"

    def tearDown(self):
        self.tmp.cleanup()

    def students(self, *names):
        """Students who wrote every lab as the reference does (alice's submission under their names)."""
        folder = Path(self.tmp.name) / "class"
        for name in names:
            shutil.copytree(self.example / "alice", folder / name)
        return [(name, folder / name) for name in names]

    def grade(self, toolchain, students, in_flight, policy=None, labs=LABS, bench=False):
        options = Options(labs=[lab for lab in self.manifest.labs if lab.folder in labs], jobs=4, seed=99,
                          in_flight=in_flight, bench=bench)
        self.log = []
        Grader(self.manifest, policy or Policy.load(GRADING / "policy.toml"), toolchain, self.out, options,
               log=self.log.append).grade_class(students)
        return {name: json.loads((self.out / "students" / f"{name}.json").read_text(encoding="utf-8"))["labs"]
                for name, _ in students}


def note(what, cause, where, then):
    return f"the first {what} failed for a resource ({cause}) while other students' runs shared the {where}; {then}"


OOM_CAUSE = "out of memory (cudaErrorMemoryAllocation)"


class HarmedClassmates(ClassCase):
    def test_classmates_out_of_memory_beside_a_hog_get_the_verdict_of_a_run_alone(self):
        hog = HogClass(("tests", "hog", "02_atomic"),
                       victims={("tests", "amy", "02_atomic"), ("tests", "ben", "03_shared_atomic")})
        labs = self.grade(hog, self.students("hog", "amy", "ben"), in_flight=3)
        self.assertEqual(hog.harmed, hog.victims, "the victims never ran into the hog")
        for name in ("hog", "amy", "ben"):
            self.assertEqual({folder: lab["verdict"] for folder, lab in labs[name].items()},
                             dict.fromkeys(LABS, "PASSED"), name)
        self.assertIn(note("test run", OOM_CAUSE, "GPU", "run again alone: PASSED"), labs["amy"]["02_atomic"]["notes"])
        self.assertIn(note("test run", OOM_CAUSE, "GPU", "run again alone: PASSED"),
                      labs["ben"]["03_shared_atomic"]["notes"])
        self.assertEqual(labs["amy"]["02_atomic"]["score"]["correctness"], 10.0)
        retried = {key for key, count in hog.counts.items() if count > 1}
        self.assertEqual(retried, hog.victims, "one retry for each harmed run, none for the others")
        self.assertEqual(max(hog.counts.values()), 2)

    def test_a_student_waiting_to_run_alone_lends_its_place_and_the_cores_stay_free(self):
        # The hog's run goes on until cal, third in the roster, has compiled: cal can get a place (two
        # in flight) only from amy, waiting for her run alone behind the hog's, and compile only if that
        # wait holds no gate of the cores (flight.py's away, gpu_gate.py's reservation).
        class UntilCalCompiles(HogClass):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.cal_compiled = threading.Event()
                self.cal_in_time = False

            def _call(self, kind, student, lab, real):
                if (kind, student, lab.folder) == self.hog:
                    result = super()._call(kind, student, lab, real)
                    self.cal_in_time = self.cal_compiled.wait(WAIT_S)
                    return result
                return super()._call(kind, student, lab, real)

            def compile(self, student, lab, *args):
                result = super().compile(student, lab, *args)
                if student == "cal":
                    self.cal_compiled.set()
                return result

        hog = UntilCalCompiles(("tests", "hog", "02_atomic"), victims={("tests", "amy", "02_atomic")})
        labs = self.grade(hog, self.students("hog", "amy", "cal"), in_flight=2)
        self.assertEqual(hog.harmed, hog.victims)
        self.assertTrue(hog.cal_in_time, "cal compiled only after the hog's run ended")
        self.assertEqual(labs["amy"]["02_atomic"]["verdict"], "PASSED")
        self.assertIn(note("test run", OOM_CAUSE, "GPU", "run again alone: PASSED"), labs["amy"]["02_atomic"]["notes"])
        for name in ("hog", "amy", "cal"):
            self.assertEqual({folder: lab["verdict"] for folder, lab in labs[name].items()},
                             dict.fromkeys(LABS, "PASSED"), name)

    def test_a_run_that_fails_the_same_way_alone_keeps_its_verdict(self):
        own = {("tests", "amy", "03_shared_atomic"), ("tests", "hog", "03_shared_atomic")}
        hog = HogClass(("tests", "hog", "02_atomic"), victims=own, always=own)  # too big for the GPU, alone too
        labs = self.grade(hog, self.students("hog", "amy"), in_flight=2)
        self.assertEqual(hog.harmed, own)
        for name in ("hog", "amy"):   # the hog's own lab 03 met amy's run: run again alone, fails again
            lab = labs[name]["03_shared_atomic"]
            self.assertEqual(lab["verdict"], "RUNTIME_ERROR", name)
            self.assertIn("cudaErrorMemoryAllocation", lab["detail"])
            self.assertEqual(lab["notes"], [note("test run", OOM_CAUSE, "GPU", "run again alone: RUNTIME_ERROR")])
            self.assertEqual(hog.counts[("tests", name, "03_shared_atomic")], 2, "one retry only")

    def test_a_failure_beside_the_students_own_runs_only_is_not_run_again(self):
        hog = HogClass(("tests", "hog", "02_atomic"), victims={("tests", "hog", "03_shared_atomic")})
        labs = self.grade(hog, self.students("hog"), in_flight=1)
        self.assertEqual(hog.harmed, hog.victims)
        self.assertEqual(labs["hog"]["03_shared_atomic"]["verdict"], "RUNTIME_ERROR")
        self.assertEqual(labs["hog"]["03_shared_atomic"]["notes"], [])
        self.assertEqual(hog.counts[("tests", "hog", "03_shared_atomic")], 1)

    def test_no_retry_when_the_classmates_in_flight_ran_at_other_times(self):
        out = self.out

        class AfterBen(HogClass):   # amy compiles only once ben's grading is complete: 2 in flight, never together
            def compile(self, student, lab, *args):
                deadline = time.monotonic() + WAIT_S
                while student == "amy" and time.monotonic() < deadline:
                    path = out / "students" / "ben.json"
                    if path.is_file() and '"complete": true' in path.read_text(encoding="utf-8"):
                        break
                    time.sleep(0.01)
                return super().compile(student, lab, *args)

        hog = AfterBen(always={("tests", "amy", "03_shared_atomic")})
        labs = self.grade(hog, self.students("ben", "amy"), in_flight=2)
        self.assertEqual(labs["amy"]["03_shared_atomic"]["verdict"], "RUNTIME_ERROR")
        self.assertEqual(labs["amy"]["03_shared_atomic"]["notes"], [])
        self.assertEqual(hog.counts[("tests", "amy", "03_shared_atomic")], 1)

    def test_what_a_run_prints_cannot_make_it_run_again(self):
        def printed(kind, lab):
            n = FakeToolchain.CASES
            if lab.folder == "02_atomic":   # a crash of its own, in a sea of resource words
                crash = "lab.cu:9: kernel failed: cudaErrorIllegalAddress (an illegal memory access was encountered)"
                return ProcessResult(3, RESOURCE_WORDS, RESOURCE_WORDS), TestCheck(
                    lab.folder, "7", n, 1, 0, error_case="c001", error_message=crash, last_started="c001")
            if lab.folder == "03_shared_atomic":   # wrong sums
                return ProcessResult(0, RESOURCE_WORDS, RESOURCE_WORDS), TestCheck(
                    lab.folder, "7", n, n, n - 1, 1, end=True, first_failure={"what": WHAT})
            return ProcessResult(1, RESOURCE_WORDS, RESOURCE_WORDS), TestCheck(lab.folder, "7", n)  # nothing seen

        victims = {("tests", "amy", "02_atomic"), ("tests", "amy", "03_shared_atomic"), ("tests", "ben", "01_host_sum")}
        hog = HogClass(("tests", "hog", "02_atomic"), victims=victims, failure=printed)
        labs = self.grade(hog, self.students("hog", "amy", "ben"), in_flight=3)
        self.assertEqual(hog.harmed, victims, "the runs did not meet the hog's")
        self.assertEqual([labs["amy"]["02_atomic"]["verdict"], labs["amy"]["03_shared_atomic"]["verdict"],
                          labs["ben"]["01_host_sum"]["verdict"]], ["RUNTIME_ERROR", "WRONG_ANSWER", "RUNTIME_ERROR"])
        for student, folder in (("amy", "02_atomic"), ("amy", "03_shared_atomic"), ("ben", "01_host_sum")):
            self.assertEqual(labs[student][folder]["notes"], [], (student, folder))
            self.assertEqual(hog.counts[("tests", student, folder)], 1, (student, folder))

    def test_a_compile_that_could_not_fork_beside_a_classmate_is_compiled_again_alone(self):
        hog = HogClass(("compile", "hog", "02_atomic"), victims={("compile", "amy", "03_shared_atomic")})
        labs = self.grade(hog, self.students("hog", "amy"), in_flight=2)
        self.assertEqual(hog.harmed, hog.victims)
        lab = labs["amy"]["03_shared_atomic"]
        self.assertEqual(lab["verdict"], "PASSED")
        cause = "nvcc could not run the host compiler (Failed to preprocess host compiler properties)"
        self.assertEqual(lab["notes"], [note("compile", cause, "machine", "run again alone: compiles")])
        self.assertEqual(hog.counts[("compile", "amy", "03_shared_atomic")], 2)

    def test_a_sanitizer_run_out_of_memory_beside_a_classmate_is_run_again_alone(self):
        hog = HogClass(("tests", "hog", "02_atomic"), victims={("memcheck", "amy", "03_shared_atomic")})
        labs = self.grade(hog, self.students("hog", "amy"), in_flight=2)
        self.assertEqual(hog.harmed, hog.victims)
        lab = labs["amy"]["03_shared_atomic"]
        self.assertEqual((lab["verdict"], lab["sanitizer"]["hazards"], lab["score"]["correctness"]),
                         ("PASSED", {}, 10.0))
        self.assertEqual(lab["notes"], [note("memcheck run", OOM_CAUSE, "GPU", "run again alone: clean")])
        self.assertEqual(hog.counts[("memcheck", "amy", "03_shared_atomic")], 2)

    def test_a_racecheck_run_that_ended_without_a_summary_beside_a_hog_is_run_again_alone(self):
        def no_summary(kind, lab):   # racecheck names no failed CUDA call: the runner's error status, no summary
            return ProcessResult(3, "", "", log="========= COMPUTE-SANITIZER\n")
        hog = HogClass(("tests", "hog", "02_atomic"), victims={("racecheck", "amy", "03_shared_atomic")},
                       failure=no_summary)
        labs = self.grade(hog, self.students("hog", "amy"), in_flight=2)
        lab = labs["amy"]["03_shared_atomic"]
        self.assertEqual((lab["verdict"], lab["sanitizer"]["hazards"], lab["score"]["correctness"]),
                         ("PASSED", {}, 10.0))
        self.assertEqual(hog.counts[("racecheck", "amy", "03_shared_atomic")], 2)
        self.assertIn("run again alone: clean", lab["notes"][0])

    def test_no_retry_past_the_students_budget_of_time_alone(self):
        hog = HogClass(("tests", "hog", "02_atomic"), victims={("tests", "amy", "02_atomic")})
        policy = Policy.from_dict({"pipeline": {"retry_alone_s": 0}})
        labs = self.grade(hog, self.students("hog", "amy"), in_flight=2, policy=policy)
        self.assertEqual(labs["amy"]["02_atomic"]["verdict"], "RUNTIME_ERROR")
        self.assertEqual(labs["amy"]["02_atomic"]["notes"], [note(
            "test run", OOM_CAUSE, "GPU", "not run again: this student's runs alone took 0 s already "
                                          "([pipeline] retry_alone_s = 0)")])
        self.assertEqual(hog.counts[("tests", "amy", "02_atomic")], 1)


class Crowded(WatchedToolchain):
    """Every compile of lab 02, test run of labs 01 and 03 and memcheck run of lab 04 fails for a
    resource when another student's run is running as it starts (references are nobody's), and is
    what it is otherwise: a run alone always gets its true outcome."""

    FAILING = {("compile", "02_atomic"), ("tests", "01_host_sum"), ("tests", "03_shared_atomic"),
               ("memcheck", "04_interleaved")}

    def __init__(self, outcomes):
        super().__init__(outcomes, seconds=0.004)
        self.students_running = Counter()
        self.failed = 0

    def _crowded(self, kind, student, lab, real):
        with self.lock:
            crowded = any(count for other, count in self.students_running.items() if other != student)
            self.students_running[student] += 1
        try:
            if crowded and (kind, lab.folder) in self.FAILING:
                with self.lock:
                    self.failed += 1
                if kind == "tests" and lab.host:   # the host lab: host memory
                    n = FakeToolchain.CASES
                    return ProcessResult(3), TestCheck(lab.folder, "7", n, 0, 0, error_message="std::bad_alloc")
                return out_of_memory(kind, lab)
            return real()
        finally:
            with self.lock:
                self.students_running[student] -= 1

    def compile(self, student, lab, *args):
        return self._crowded("compile", student, lab, lambda: super(Crowded, self).compile(student, lab, *args))

    def run_tests(self, student, lab, *args):
        return self._crowded("tests", student, lab, lambda: super(Crowded, self).run_tests(student, lab, *args))

    def run_sanitizer(self, student, lab, tool, *args):
        return self._crowded(tool, student, lab,
                             lambda: super(Crowded, self).run_sanitizer(student, lab, tool, *args))

    def time(self, plan_text, work, sandboxed, *args, **kwargs):
        student = Path(plan_text.splitlines()[0].split(",")[5]).parent.parent.name if sandboxed else ""
        with self.lock:
            self.students_running[student] += 1 if student else 0
        try:
            return super().time(plan_text, work, sandboxed, *args, **kwargs)
        finally:
            with self.lock:
                self.students_running[student] -= 1 if student else 0


class CrowdedClass(ClassCase):
    def test_many_students_in_flight_with_retries_and_timing_finish_with_the_grades_of_one_at_a_time(self):
        expected = expected_class()["students"]
        students = [(path.name, path) for path in sorted(self.example.iterdir()) if path.is_dir()]
        students += self.students("amy", "ben", "cat")
        labs = tuple(expected["alice"])

        def grades(records):
            return {name: {folder: (lab["verdict"], lab["score"]["correctness"], lab["score"]["performance"])
                           for folder, lab in record.items()} for name, record in records.items()}

        serial = grades(self.grade(FakeToolchain(expected), students, in_flight=1, labs=labs, bench=True))
        shutil.rmtree(self.out)
        crowded, result = Crowded(expected), {}
        worker = threading.Thread(target=lambda: result.update(
            grades(self.grade(crowded, students, in_flight=6, labs=labs, bench=True))), daemon=True)
        worker.start()
        worker.join(120)
        self.assertFalse(worker.is_alive(), "the class did not finish in 120 s: a deadlock?")
        self.assertEqual(result, serial)
        self.assertEqual(crowded.overlaps, [])
        self.assertGreater(crowded.failed, 0, "no run failed for a resource: nothing was run again")
        self.assertTrue(any("run again alone" in line for line in self.log))


if __name__ == "__main__":
    unittest.main()
