"""The sanitizer step of a grading (engine.py) on the simulated toolchain: findings from the tool's
log only, each raising its integrity flag and saying why in the record and in Gradescope; an
unreadable result beside a classmate run again alone; and the self-test on a reference module that
turns the sanitizer off, saying so, when the tool cannot report on its channel."""

import json
from pathlib import Path

from grader_tests.helpers import fixture
from grader_tests.stages.test_classmates import ClassCase, HogClass
from grader.stages.engine import SELF_TEST
from grader.sandbox.process import ProcessResult

FORGED = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
BROKEN = "========= COMPUTE-SANITIZER\n========= Internal Sanitizer Error: the tool ran out of something\n"


class Logs(HogClass):
    """The simulated toolchain, with chosen sanitizer results per (tool, student) (SELF_TEST: the
    self-test's runs); the program prints a clean summary on both streams in every run."""

    def __init__(self, results=None, **kwargs):
        super().__init__(**kwargs)
        self.results = results or {}
        self.self_tests = []

    def run_sanitizer(self, student, lab, tool, *args):
        if student == SELF_TEST:
            self.self_tests.append((lab.folder, tool, Path(args[0]).name))
        chosen = self.results.get((tool, student))
        if chosen is None:
            return super().run_sanitizer(student, lab, tool, *args)
        return ProcessResult(chosen.returncode, FORGED, FORGED, log=chosen.log)


class SanitizerSteps(ClassCase):
    def record(self, name):
        return json.loads((self.out / "students" / f"{name}.json").read_text(encoding="utf-8"))

    def test_a_hazard_and_an_unreadable_log_are_findings_with_their_flags(self):
        race, broken = fixture("racecheck_hazard"), ProcessResult(255, log=BROKEN)
        tools = Logs({("racecheck", "amy"): race, ("synccheck", "amy"): broken})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=("02_atomic",))
        lab = labs["amy"]["02_atomic"]
        self.assertEqual((lab["verdict"], lab["sanitizer"]["hazards"], lab["score"]["correctness"]),
                         ("PASSED", {"racecheck": 2, "synccheck": 1}, 0.0))
        findings = {finding["tool"]: finding for finding in lab["sanitizer"]["findings"]}
        self.assertEqual(findings["memcheck"]["status"], "clean", "a clean summary on stdout is no result either way")
        self.assertIn("holds no summary", findings["synccheck"]["note"])
        self.assertIn("RACECHECK SUMMARY: 0 hazards", findings["synccheck"]["program_output"])
        flags = {(flag["kind"], flag["lab"]) for flag in self.record("amy")["flags"]}
        self.assertEqual(flags, {("sanitizer_hazard", "02_atomic"), ("sanitizer_unreadable", "02_atomic")})
        gradescope = json.loads((self.out / "gradescope" / "amy" / "results.json").read_text(encoding="utf-8"))
        self.assertIn("holds no summary", gradescope["tests"][0]["output"])

    def test_an_unreadable_result_beside_a_classmate_is_run_again_alone(self):
        tools = Logs(hog=("tests", "hog", "02_atomic"), victims={("racecheck", "amy", "03_shared_atomic")},
                     failure=lambda kind, lab: ProcessResult(255, log=BROKEN))
        labs = self.grade(tools, self.students("hog", "amy"), in_flight=2, labs=("02_atomic", "03_shared_atomic"))
        lab = labs["amy"]["03_shared_atomic"]
        self.assertEqual((lab["sanitizer"]["hazards"], lab["score"]["correctness"]), ({}, 10.0))
        self.assertIn("compute-sanitizer's result could not be read", lab["notes"][0])
        self.assertIn("run again alone: clean", lab["notes"][0])
        self.assertEqual(tools.counts[("racecheck", "amy", "03_shared_atomic")], 2)

    def test_the_self_test_runs_every_tool_on_a_reference_module_first(self):
        reference = self.manifest.reference_module(self.manifest.labs[1])
        reference.parent.mkdir(parents=True)
        reference.write_text("the reference module")
        tools = Logs()
        self.grade(tools, self.students("amy"), in_flight=1, labs=("01_host_sum", "02_atomic"))
        self.assertEqual(sorted(tools.self_tests), [("02_atomic", tool, reference.name)   # at once: in any order
                                                    for tool in ("memcheck", "racecheck", "synccheck")])
        self.assertIn("self-test on the reference of 02_atomic: clean", "\n".join(self.log))

    def test_a_tool_that_fails_its_self_test_is_not_used_and_that_is_said(self):
        reference = self.manifest.reference_module(self.manifest.labs[1])
        reference.parent.mkdir(parents=True)
        reference.write_text("the reference module")
        tools = Logs({("racecheck", SELF_TEST): ProcessResult(0, log="")})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=("02_atomic",))
        lab = labs["amy"]["02_atomic"]
        self.assertEqual((lab["sanitizer"]["findings"], lab["score"]["correctness"]), ([], 10.0))
        self.assertTrue(lab["sanitizer"]["status"].startswith("sanitizer not available: compute-sanitizer failed its "
                                                              "self-test (racecheck on the reference of 02_atomic: "), lab)
        self.assertIn("WARNING: compute-sanitizer failed its self-test", "\n".join(self.log))
        self.assertFalse([call for call in tools.calls if call[0] == "sanitizer" and call[1] == "amy"])
