"""Grading the example class end to end with a simulated toolchain (no nvcc, no GPU): verdicts,
the output files, resuming, records only the grader writes, library headers and the compile's view."""

import csv
import json
import shutil
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from grader_tests.engine_fixtures import SUBMISSIONS, GradingCase, students
from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest
from grader.judge.compile_view import DOC, RULE
from grader.stages.engine import Grader, Options
from grader.policy import Policy
from grader.outputs.records import StudentRecord
from grader.report.reports import summary_table
from grader.stages.toolchain import CompileRun
from grader.sandbox.process import ProcessResult

BONUS_LABS = ("11_single_pass", "12_any_operator")   # bonus = true in the shipped policy


class TestExampleClass(GradingCase):
    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.TemporaryDirectory()
        case = cls()
        case.tmp = cls.shared
        case.out = Path(cls.shared.name) / "out"
        case.manifest = fake_manifest(Path(cls.shared.name) / "build")
        case.expected = expected_class()["students"]
        case.log = []
        cls.toolchain = FakeToolchain(case.expected)
        cls.result = case.grade(cls.toolchain)
        cls.out, cls.manifest, cls.log_lines = case.out, case.manifest, case.log

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def setUp(self):
        self.expected = expected_class()["students"]

    def tearDown(self):
        pass

    def test_every_student_gets_the_expected_verdicts(self):
        self.assertEqual(sorted(self.expected), [name for name, _ in students()])
        for student, labs in self.expected.items():
            record = self.record(student)
            self.assertTrue(record["complete"])
            for folder, want in labs.items():
                self.assertEqual(record["labs"][folder]["verdict"], want["verdict"], f"{student} {folder}")

    def test_missing_labs_are_found_by_the_grader_and_never_compiled(self):
        compiled = {(call[1], call[2]) for call in self.toolchain.calls if call[0] == "compile"}
        self.assertNotIn(("frank", "10_two_step"), compiled)
        self.assertEqual(self.record("frank")["labs"]["10_two_step"]["score"]["total"], 0.0)

    def test_details_name_the_cause(self):
        dave = self.record("dave")["labs"]
        self.assertEqual(dave["01_host_sum"]["detail"], "not implemented yet")
        self.assertIn("expected 75, got 0", dave["06_first_add"]["detail"])
        frank = self.record("frank")["labs"]
        self.assertIn("atomicAdd_block", frank["03_shared_atomic"]["compile"]["output"])
        self.assertIn("labs/03_shared_atomic/shared_atomic.cu(23): error", frank["03_shared_atomic"]["compile"]["output"])
        self.assertNotIn("quoted secret", frank["03_shared_atomic"]["compile"]["output"],
                         "a diagnostic located in another file than the student's must not be quoted")
        self.assertIn("exit() called from lab code", frank["04_interleaved"]["detail"])
        self.assertIn("did not finish", self.record("carol")["labs"]["05_sequential"]["detail"])

    def test_ignored_files_and_edits_outside_the_region_are_reported(self):
        frank = self.record("frank")
        self.assertEqual(frank["ignored"], ["CMakeLists.txt", "grading/tests/lab_suite.cpp", "labs/02_atomic/NOTES.md"])
        self.assertIn("ignored: grading/tests/lab_suite.cpp", frank["notes"])
        self.assertIn("kBlockThreads = 1024", "\n".join(frank["labs"]["02_atomic"]["notes"]))
        self.assertEqual(frank["labs"]["02_atomic"]["verdict"], "PASSED")

    def test_what_needs_attention_is_recorded_as_flags(self):
        flags = {name: {(f["kind"], f["lab"]) for f in self.record(name)["flags"]} for name in ("frank", "carol", "erin")}
        self.assertIn(("edit_outside_region", "02_atomic"), flags["frank"], "an edit outside the region, as data")
        self.assertIn(("timeout", "05_sequential"), flags["carol"])
        self.assertIn(("sanitizer_hazard", "07_last_warp"), flags["erin"])
        self.assertFalse(any(kind == "edit_outside_region" for kind, _ in flags["carol"]))

    def test_scores_follow_the_policy(self):
        alice = self.record("alice")
        bonus = sum(lab["score"]["max"] for lab in alice["labs"].values() if lab["score"]["bonus"])
        self.assertEqual(bonus, 40.0, "labs 11 and 12 are bonus labs by default")
        self.assertEqual(alice["total"], alice["max_total"] + bonus)
        self.assertEqual(alice["max_total"], 190.0)
        self.assertEqual(self.record("dave")["labs"]["11_single_pass"]["score"]["total"], 0.0)
        erin = self.record("erin")["labs"]["07_last_warp"]
        self.assertEqual(erin["sanitizer"]["hazards"], {"racecheck": 2})
        self.assertEqual((erin["score"]["correctness"], erin["score"]["performance"]), (5.0, 10.0))
        bob = self.record("bob")["labs"]
        for folder in ("05_sequential", "06_first_add"):
            self.assertEqual(bob[folder]["benchmark"]["ratio"], 3.0)
            self.assertEqual(bob[folder]["score"]["performance"], 3.33)

    def test_sanitizer_runs_only_on_passing_gpu_labs(self):
        sanitized = {(call[1], call[2]) for call in self.toolchain.calls if call[0] == "sanitizer"}
        self.assertNotIn(("carol", "05_sequential"), sanitized)
        self.assertNotIn(("alice", "01_host_sum"), sanitized)
        self.assertIn(("alice", "02_atomic"), sanitized)

    def test_the_benchmark_runs_once_per_part_after_all_tests_on_passing_labs(self):
        kinds = [call[0] for call in self.toolchain.calls]
        for student, _ in students():
            mine = [i for i, call in enumerate(self.toolchain.calls) if call[1] == student]
            bench = [i for i in mine if kinds[i] == "bench"]
            # the host lab's part (lab 01 alone, when it passed), then the device labs' part
            host = self.expected[student]["01_host_sum"]["verdict"] == "PASSED"
            self.assertEqual([self.toolchain.calls[i][2] == ("01_host_sum",) for i in bench], [True, False][not host:],
                             student)
            self.assertEqual(bench[-1], max(mine), f"{student}: the benchmark is the last step")
            # the host part may be timed beside the sanitizer runs, after every compile and test run
            self.assertGreater(bench[0], max(i for i in mine if kinds[i] not in ("bench", "sanitizer", "sanitizer_labs")))
            self.assertGreater(bench[-1], max(i for i in mine if kinds[i] != "bench"))
        dave_bench = [call for call in self.toolchain.calls if call[0] == "bench" and call[1] == "dave"]
        self.assertEqual(len(dave_bench), 1, "dave's lab 01 is not implemented: no host part")
        self.assertNotIn("06_first_add", dave_bench[0][2])
        self.assertNotIn("01_host_sum", dave_bench[0][2])

    def test_the_summary_table_marks_bonus_labs(self):
        records = [StudentRecord.from_json(self.record(name)) for name, _ in students()]
        text = summary_table(records, self.manifest.labs)
        self.assertIn(" 11+ 12+", text.splitlines()[0])
        self.assertIn("230/190", text.splitlines()[2])  # alice: labs 11 and 12's points on top of the 190
        self.assertIn("NN+ a bonus lab", text)

    def test_progress_lines_and_summary(self):
        self.assertIn("[student 3/6] carol  lab 05_sequential  TIMEOUT", "\n".join(self.log_lines))

    def test_gradebook_has_a_column_per_lab_and_a_total(self):
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        self.assertEqual(rows[0], ["student", *[lab.folder + (" (bonus)" if lab.folder in BONUS_LABS else "")
                                                for lab in self.manifest.labs], "total"])
        self.assertEqual([row[0] for row in rows[1:]], [name for name, _ in students()])
        alice = rows[1]
        self.assertEqual(alice[-1], str(int(self.record("alice")["total"])))
        frank = dict(zip(rows[0], rows[-1]))
        self.assertEqual((frank["03_shared_atomic"], frank["10_two_step"]), ("0", "0"))

    def test_timings_have_each_row_once_with_references_baselines_and_failures(self):
        with open(self.out / "timings.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        keys = [(r["student"], r["lab"], r["type"], r["n"]) for r in rows]
        self.assertEqual(len(keys), len(set(keys)), "plots reject duplicate (student, lab, type, n)")
        owners = {r["student"] for r in rows}
        self.assertTrue({"reference", "baseline", "alice", "bob"} <= owners)
        carol = [r for r in rows if r["student"] == "carol" and r["lab"] == "05_sequential"]
        self.assertEqual({r["status"] for r in carol}, {"TIMEOUT"})
        self.assertFalse([r for r in rows if r["student"] == "frank" and r["lab"] == "10_two_step"])
        self.assertTrue((self.out / "timings.json").is_file())

    def test_junit_has_a_suite_per_student_and_a_case_per_lab(self):
        root = ET.parse(self.out / "junit.xml").getroot()
        suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
        self.assertEqual(sorted(suites), [name for name, _ in students()])
        frank = suites["frank"]
        self.assertEqual(len(frank.findall("testcase")), len(self.manifest.labs))
        self.assertEqual((frank.get("failures"), frank.get("errors")), ("1", "2"))
        case = next(c for c in frank.findall("testcase") if c.get("name") == "03_shared_atomic")
        self.assertIn("atomicAdd_block", case.find("error").text)

    def test_gradescope_results(self):
        for student, _ in students():
            data = json.loads((self.out / "gradescope" / student / "results.json").read_text(encoding="utf-8"))
            self.assertEqual(len(data["tests"]), len(self.manifest.labs))
            self.assertEqual(data["score"], self.record(student)["total"])
            for test in data["tests"]:
                self.assertTrue({"name", "score", "max_score", "output", "status"} <= set(test))
            self.assertIn("11_single_pass (bonus)", [test["name"] for test in data["tests"]])
            self.assertIn("12_any_operator (bonus)", [test["name"] for test in data["tests"]])
            self.assertIn("/ 190 + bonus (11_single_pass, 12_any_operator)", data["output"])

    def test_what_passing_code_printed_is_shown_as_program_output(self):
        for student, _ in students():
            record = self.record(student)
            passed = [folder for folder, lab in record["labs"].items() if lab["verdict"] == "PASSED"]
            if not passed:
                continue
            self.assertEqual(record["labs"][passed[0]]["tests"]["program_output"], f"[stdout]\n{passed[0]} says hello")
            data = json.loads((self.out / "gradescope" / student / "results.json").read_text(encoding="utf-8"))
            test = next(test for test in data["tests"] if test["name"].startswith(passed[0]))
            self.assertIn(f"program output (what your code printed during its tests):\n[stdout]\n{passed[0]} says hello",
                          test["output"])

    def test_every_record_is_signed_and_names_the_seed_and_the_sandbox(self):
        for student, _ in students():
            record = self.record(student)
            self.assertRegex(record["signature"], "^[0-9a-f]{64}$")
            self.assertTrue(record["seed"].isdigit())
            self.assertEqual(record["sandbox"], "fake sandbox (tests)")


class TestResume(GradingCase):
    def test_a_second_run_skips_complete_students_and_redoes_a_half_written_one(self):
        self.grade(FakeToolchain(self.expected), who={"alice", "bob"})
        path = self.out / "students" / "bob.json"
        bob = json.loads(path.read_text(encoding="utf-8"))
        bob["complete"] = False
        path.write_text(json.dumps(bob), encoding="utf-8")
        again = FakeToolchain(self.expected)
        result = self.grade(again, who={"alice", "bob"})
        self.assertEqual((result.skipped, result.graded), (["alice"], ["bob"]))
        self.assertEqual({call[1] for call in again.calls if call[1]}, {"bob"})  # "": class-level runs
        self.assertTrue(self.record("bob")["complete"])

    def test_force_regrades_everyone(self):
        self.grade(FakeToolchain(self.expected), who={"alice"})
        again = FakeToolchain(self.expected)
        self.assertEqual(self.grade(again, force=True, who={"alice"}).graded, ["alice"])

    def test_a_crash_keeps_the_finished_students(self):
        class Crashing(FakeToolchain):
            def run_tests(self, student, lab, *args):
                if student == "carol":
                    raise RuntimeError("the machine went away")
                return super().run_tests(student, lab, *args)

        with self.assertRaises(RuntimeError):
            self.grade(Crashing(self.expected), who={"alice", "bob", "carol"})
        self.assertTrue(self.record("alice")["complete"] and self.record("bob")["complete"])
        self.assertFalse(self.record("carol")["complete"])  # written after compiling, then cut short
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        self.assertEqual([row[0] for row in rows], ["student", "alice", "bob", "carol"])
        self.assertEqual(set(rows[3][1:]), {""}, "a student cut short has a blank row until graded")
        result = self.grade(FakeToolchain(self.expected), who={"alice", "bob", "carol"})
        self.assertEqual((result.skipped, result.graded), (["alice", "bob"], ["carol"]))


    def test_no_student_begins_after_a_crash_and_the_ones_in_their_timing_finish(self):
        class Crashing(FakeToolchain):
            """carol's test run raises while bob, who gave her his place, is in his timing."""

            def __init__(self, expected):
                super().__init__(expected)
                self.bob_timing = threading.Event()

            def run_tests(self, student, lab, *args):
                if student == "carol":
                    self.bob_timing.wait(5)
                    raise RuntimeError("the machine went away")
                return super().run_tests(student, lab, *args)

            def time(self, plan_text, *args, **kwargs):
                if "/bob/" in plan_text:
                    self.bob_timing.set()
                    time.sleep(0.2)   # carol crashes meanwhile
                return super().time(plan_text, *args, **kwargs)

        crashing = Crashing(self.expected)
        with self.assertRaisesRegex(RuntimeError, "went away"):
            self.grade(crashing, who={"alice", "bob", "carol", "dave"})
        self.assertTrue(crashing.bob_timing.is_set(), "carol crashed before bob's timing")
        self.assertTrue(self.record("alice")["complete"] and self.record("bob")["complete"])
        self.assertNotIn("dave", {call[1] for call in crashing.calls}, "dave began after carol's crash")
        self.assertFalse((self.out / "students" / "dave.json").exists())
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            self.assertEqual([row[0] for row in csv.reader(handle)], ["student", "alice", "bob", "carol", "dave"])


class TestRecordsOnlyTheGraderWrites(GradingCase):
    def test_a_forged_complete_record_is_regraded_and_a_phantom_never_listed(self):
        self.grade(FakeToolchain(self.expected), who={"alice"})
        students_dir = self.out / "students"
        forged = json.loads((students_dir / "alice.json").read_text(encoding="utf-8"))
        forged["student"], forged["total"] = "dave", 190.0
        (students_dir / "dave.json").write_text(json.dumps(forged), encoding="utf-8")  # same signature, other body
        phantom = dict(forged, student="mallory")
        (students_dir / "mallory.json").write_text(json.dumps(phantom), encoding="utf-8")
        unsigned = dict(forged)
        unsigned.pop("signature")
        (students_dir / "bob.json").write_text(json.dumps(unsigned), encoding="utf-8")
        again = FakeToolchain(self.expected)
        result = self.grade(again, who={"alice", "bob", "dave"})
        self.assertEqual((result.skipped, sorted(result.graded)), (["alice"], ["bob", "dave"]))
        self.assertNotEqual(self.record("dave")["total"], 190.0)
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            self.assertEqual([row[0] for row in csv.reader(handle)], ["student", "alice", "bob", "dave"])

    def test_a_record_whose_body_was_edited_is_not_believed(self):
        self.grade(FakeToolchain(self.expected), who={"dave"})
        path = self.out / "students" / "dave.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        record["total"] = 190.0
        path.write_text(json.dumps(record), encoding="utf-8")
        result = self.grade(FakeToolchain(self.expected), who={"dave"})
        self.assertEqual(result.graded, ["dave"])


class TestLibraryReductions(GradingCase):
    def test_a_library_header_is_refused_by_name_where_the_policy_refuses_it(self):
        # alice's labs with a library header added to three regions (the fake compiler reads the #include)
        student = Path(self.tmp.name) / "class" / "lib"
        shutil.copytree(SUBMISSIONS / "alice", student)
        includes = {"05_sequential": "cub/device/device_reduce.cuh", "09_shuffle": "cooperative_groups/reduce.h",
                    "11_single_pass": "cooperative_groups/reduce.h"}
        for folder, header in includes.items():
            path = next((student / "labs" / folder).iterdir())
            text = path.read_text(encoding="utf-8").replace(
                "// ==== BEGIN STUDENT CODE ====\n", f"// ==== BEGIN STUDENT CODE ====\n}}\n#include <{header}>\nnamespace {{\n")
            path.write_text(text, encoding="utf-8")
        options = Options(labs=self.manifest.labs, jobs=2)
        Grader(self.manifest, Policy.load(GRADING / "policy.toml"), FakeToolchain({}), self.out, options,
               log=self.log.append).grade_class([("lib", student)])
        labs = self.record("lib")["labs"]
        self.assertEqual(labs["05_sequential"]["verdict"], "COMPILE_ERROR")
        self.assertEqual(labs["05_sequential"]["detail"], "uses <cub/device/device_reduce.cuh>: CUB is a library "
                                                          "reduction; lab 05 is your own reduction (policy [compile] allow_cccl)")
        self.assertEqual(labs["05_sequential"]["compile"]["refused"], ["cub/device/device_reduce.cuh"])
        self.assertEqual({(f["kind"], f["lab"]) for f in self.record("lib")["flags"]},
                         {("refused_header", "05_sequential"), ("refused_header", "09_shuffle")})
        self.assertFalse(labs["05_sequential"]["compile"]["ok"])
        self.assertEqual(labs["09_shuffle"]["verdict"], "COMPILE_ERROR")
        self.assertIn("uses <cooperative_groups/reduce.h>", labs["09_shuffle"]["detail"])
        self.assertEqual(labs["11_single_pass"]["verdict"], "PASSED", "the bonus labs may use cg::reduce")
        self.assertEqual(labs["11_single_pass"]["compile"]["refused"], [])
        self.assertEqual(labs["06_first_add"]["verdict"], "PASSED")


class TestCompileView(GradingCase):
    def test_a_file_outside_the_compile_view_is_named_with_the_rule_and_flagged(self):
        # What the real toolchain hands back for `asm(".incbin \"/etc/passwd\"")` (test_compile.py compiles it
        # for real): the assembler's error, located in its temporary file, and the name it did not find.
        class Reaching(FakeToolchain):
            def compile(self, student, lab, source, module, timeout, refuse=()):
                if lab.folder != "01_host_sum":
                    return super().compile(student, lab, source, module, timeout, refuse)
                said = "/tmp/ccX.s: Assembler messages:\n/tmp/ccX.s:5: Error: file not found: /etc/passwd\n"
                return CompileRun(ProcessResult(1, "", said, False, 0.5, ["nvcc"], timeout), outside=("/etc/passwd",))

        self.grade(Reaching(self.expected), who={"alice"})
        record = self.record("alice")
        lab = record["labs"]["01_host_sum"]
        self.assertEqual(lab["verdict"], "COMPILE_ERROR")
        self.assertEqual(lab["detail"], f"does not compile: {RULE}: \"/etc/passwd\" is outside it ({DOC})")
        self.assertIn(lab["detail"].removeprefix("does not compile: "), lab["compile"]["output"])
        self.assertNotIn("ccX.s", lab["compile"]["output"], "the assembler's temporary file is not quoted")
        self.assertIn({"kind": "outside_view", "lab": "01_host_sum", "detail": lab["detail"].split(": ", 1)[1]},
                      record["flags"])
        self.assertEqual(record["labs"]["02_atomic"]["verdict"], "PASSED", "the other labs are graded as before")


class TestSomeLabs(GradingCase):
    def test_regrading_some_labs_keeps_the_others(self):
        self.grade(FakeToolchain(self.expected), who={"dave"})
        first = self.record("dave")
        options = Options(labs=[lab for lab in self.manifest.labs if lab.folder == "06_first_add"], jobs=2, force=True)
        fixed = dict(self.expected["dave"], **{"06_first_add": {"verdict": "PASSED", "why": "fixed"}})
        grader = Grader(self.manifest, Policy.load(None), FakeToolchain({"dave": fixed}), self.out, options,
                        log=self.log.append)
        grader.grade_class([s for s in students() if s[0] == "dave"])
        second = self.record("dave")
        self.assertEqual(list(second["labs"]), list(first["labs"]))
        self.assertEqual(second["labs"]["06_first_add"]["verdict"], "PASSED")
        self.assertEqual(second["labs"]["01_host_sum"], first["labs"]["01_host_sum"])
        self.assertEqual(second["total"], first["total"] + 20.0)
        self.assertFalse(list((self.out / "students").glob("*.previous")))
        with open(self.out / "gradebook.csv", encoding="utf-8") as handle:
            self.assertEqual(len(handle.readline().split(",")), len(self.manifest.labs) + 2)


if __name__ == "__main__":
    unittest.main()
