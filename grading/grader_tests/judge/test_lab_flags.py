"""The flags a finished record implies (lab_flags.py): each rule from the fields the grader fills,
none for an honest lab, none the record already carries, and the same for a record graded before
flags were recorded."""

import unittest

from grader.judge.flags import add_flag
from grader.judge.lab_flags import implied_flags, missing_flags, record_flags
from grader.outputs.records import CompileResult, LabBenchmark, LabRecord, SanitizerResult, StudentRecord, TestRun
from grader.judge.resources import RETRIED
from grader.judge.submission import OUTSIDE_REGION_NOTE, splice
from grader.judge.verdicts import COMPILE_TIMED_OUT

SKELETON = ("#include <x>\nconstexpr int kBlock = 256;\n// ==== BEGIN STUDENT CODE ====\nint f() { return 0; }\n"
            "// ==== END STUDENT CODE ====\n")


def lab(folder="02_atomic", verdict="PASSED", **parts) -> LabRecord:
    return LabRecord(folder, "atomic.cu", "lab02_atomic", verdict=verdict, **parts)


def kinds(record: StudentRecord) -> list[tuple[str, str]]:
    return [(flag.kind, flag.lab) for flag in implied_flags(record)]


class Rules(unittest.TestCase):
    def test_an_honest_lab_implies_nothing(self):
        honest = lab(sanitizer=SanitizerResult("run", [{"tool": "memcheck", "status": "clean", "count": 0}]),
                     benchmark=LabBenchmark(rows=[{"status": "ok"}], ratio=1.0),
                     notes=["time 1.00 x the reference's"])
        self.assertEqual(kinds(StudentRecord("a", labs={"02_atomic": honest})), [])

    def test_an_edit_outside_the_region_is_flagged_from_the_splices_note(self):
        _, notes = splice(SKELETON, SKELETON.replace("256", "1024"), "atomic.cu")
        self.assertTrue(notes[0].startswith(OUTSIDE_REGION_NOTE))
        record = StudentRecord("a", labs={"02_atomic": lab(notes=notes)})
        flag = implied_flags(record)[0]
        self.assertEqual((flag.kind, flag.lab), ("edit_outside_region", "02_atomic"))
        self.assertIn("2 diff line(s)", flag.detail)
        self.assertNotIn("1024", flag.detail, "the detail is the grader's words, not the student's text")

    def test_refused_headers_timeouts_and_labs_not_run(self):
        record = StudentRecord("a", labs={
            "05_sequential": lab("05_sequential", "COMPILE_ERROR", compile=CompileResult(refused=["cub/cub.cuh"])),
            "06_first_add": lab("06_first_add", "TIMEOUT", detail="one call did not finish within 20 s " + "x " * 100),
            "07_last_warp": lab("07_last_warp", "COMPILE_ERROR", detail=f"{COMPILE_TIMED_OUT} 120 s"),
            "08_complete_unroll": lab("08_complete_unroll", "NOT_RUN"),
            "09_shuffle": lab("09_shuffle", "COMPILE_ERROR", detail="does not compile: error")})
        self.assertEqual(kinds(record), [("refused_header", "05_sequential"), ("timeout", "06_first_add"),
                                         ("timeout", "07_last_warp"), ("not_graded", "08_complete_unroll")])
        self.assertLessEqual(len(implied_flags(record)[1].detail), 122)

    def test_tampering_with_the_harness_is_flagged_from_the_checkers_counts(self):
        record = StudentRecord("a", labs={
            "01_host_sum": lab("01_host_sum", "COMPILE_ERROR", tests=TestRun(check={"refused": "02_atomic"})),
            "02_atomic": lab(verdict="WRONG_ANSWER", tests=TestRun(check={"forged": 3, "after_end": 0, "malformed": 2})),
            "03_shared_atomic": lab("03_shared_atomic", "RUNTIME_ERROR", tests=TestRun(check={"malformed": 1}))})
        flags = implied_flags(record)
        self.assertEqual([(f.kind, f.lab) for f in flags],
                         [("harness_tamper", "01_host_sum"), ("harness_tamper", "02_atomic")])
        self.assertIn("3 line(s) without the run's token", flags[1].detail)

    def test_sanitizer_findings_times_refused_and_retries(self):
        record = StudentRecord("a", labs={
            "02_atomic": lab(sanitizer=SanitizerResult("run", [
                {"tool": "memcheck", "status": "hazards", "count": 4},
                {"tool": "racecheck", "status": "incomplete", "count": 1, "note": "no clean summary"}])),
            "06_first_add": lab("06_first_add", benchmark=LabBenchmark(contradicted=True, note="the clock says 800 us")),
            "07_last_warp": lab("07_last_warp", benchmark=LabBenchmark(impossible=True)),
            "08_complete_unroll": lab("08_complete_unroll", benchmark=LabBenchmark(rows=[{"status": "UNVERIFIED"}])),
            "09_shuffle": lab("09_shuffle", notes=[f"the first test run failed for a resource (out of memory) {RETRIED} "
                                                   "GPU; run again alone: PASSED"])})
        self.assertEqual(kinds(record), [("sanitizer_hazard", "02_atomic"), ("sanitizer_unreadable", "02_atomic"),
                                         ("time_contradicted", "06_first_add"), ("time_impossible", "07_last_warp"),
                                         ("time_unverified", "08_complete_unroll"), ("retried_alone", "09_shuffle")])


class Recording(unittest.TestCase):
    def test_a_kind_the_record_carries_is_not_added_again(self):
        record = StudentRecord("a", labs={"02_atomic": lab(verdict="TIMEOUT", detail="stopped"),
                                          "06_first_add": lab("06_first_add", benchmark=LabBenchmark(impossible=True))})
        add_flag(record.flags, "time_impossible", "06_first_add", "below the roof, in the timing's words")
        self.assertEqual([(f.kind, f.lab) for f in missing_flags(record)], [("timeout", "02_atomic")])
        record_flags(record)
        record_flags(record)
        self.assertEqual([(f["kind"], f["lab"], f["detail"]) for f in record.flags],
                         [("time_impossible", "06_first_add", "below the roof, in the timing's words"),
                          ("timeout", "02_atomic", "stopped")])

    def test_one_sanitizer_flag_covers_both_sanitizer_kinds(self):
        record = StudentRecord("a", labs={"02_atomic": lab(sanitizer=SanitizerResult(
            "run", [{"tool": "racecheck", "status": "incomplete", "count": 1}]))})
        add_flag(record.flags, "sanitizer_hazard", "02_atomic", "racecheck: its log was garbled")
        self.assertEqual(missing_flags(record), [])


if __name__ == "__main__":
    unittest.main()
