"""One sanitizer run per tool over a student's passed GPU labs (sanitize.py): a clean run is each
lab's clean result; one whose tool found hazards is split into groups run at once, a clean group
vouching for its labs, and the labs of no clean run run alone under that tool; any other run is
thrown away and every lab runs alone. A finding is always one lab's, and the record is the one a grading of one run per lab writes (but the
program output beside a clean result: that run's is every lab's, so none is shown)."""

import json
import shutil

from grader_tests.helpers import FakeToolchain
from grader_tests.stages.test_classmates import ClassCase

LABS = ("01_host_sum", "02_atomic", "03_shared_atomic", "04_interleaved")
GPU_LABS = LABS[1:]
TOOLS = ("memcheck", "racecheck", "synccheck")


class Together(FakeToolchain):
    sanitize_together = True


class SanitizeTogether(ClassCase):
    def sanitizer_calls(self, tools, student):
        return [call for call in tools.calls if call[0].startswith("sanitizer") and call[1] == student]

    def test_a_clean_student_has_one_run_per_tool_and_every_lab_clean(self):
        tools = Together({})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=LABS)
        self.assertEqual(sorted(self.sanitizer_calls(tools, "amy")),
                         sorted(("sanitizer_labs", "amy", GPU_LABS, tool) for tool in TOOLS))
        for folder in GPU_LABS:
            findings = labs["amy"][folder]["sanitizer"]["findings"]
            self.assertEqual([(f["tool"], f["status"]) for f in findings], [(tool, "clean") for tool in TOOLS], folder)
            self.assertEqual(labs["amy"][folder]["score"]["correctness"], 10.0)

    def test_a_finding_splits_that_tool_s_run_into_groups_and_stays_with_its_lab(self):
        labs_run = ("01_host_sum", "02_atomic", "03_shared_atomic", "04_interleaved", "05_sequential",
                    "06_first_add", "07_last_warp")
        gpu = labs_run[1:]
        tools = Together({"amy": {"03_shared_atomic": {"verdict": "PASSED", "why": "", "hazards": ["racecheck"]}}})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=labs_run)
        calls = self.sanitizer_calls(tools, "amy")
        self.assertEqual(sorted(call[2] for call in calls if call[0] == "sanitizer_labs" and call[3] == "racecheck"),
                         sorted([gpu, gpu[:3], gpu[3:]]),
                         "groups of 3 (the square root of 6); the clean one (05-07) vouches")
        self.assertEqual(sorted(call for call in calls if call[0] == "sanitizer"),
                         sorted(("sanitizer", "amy", folder, "racecheck") for folder in gpu[:3]),
                         "the labs of no clean run run alone, the racy one among them")
        self.assertEqual(sorted(call[3] for call in calls if call[0] == "sanitizer_labs" and call[2] == gpu),
                         sorted(TOOLS), "the other tools' runs were clean: not split")
        self.assertEqual(labs["amy"]["03_shared_atomic"]["sanitizer"]["hazards"], {"racecheck": 2})
        for folder in gpu:
            if folder != "03_shared_atomic":
                self.assertEqual(labs["amy"][folder]["sanitizer"]["hazards"], {}, folder)
                self.assertEqual(labs["amy"][folder]["score"]["correctness"], 10.0, folder)

    def test_a_run_without_a_clean_summary_is_not_split(self):
        tools = Together({"amy": {"03_shared_atomic": {"verdict": "PASSED", "why": "", "hazards": ["memcheck"]}}})
        tools.unreadable_together = True
        self.grade(tools, self.students("amy"), in_flight=1, labs=LABS)
        calls = self.sanitizer_calls(tools, "amy")
        self.assertEqual(sorted(call[2] for call in calls if call[0] == "sanitizer_labs" and call[3] == "memcheck"),
                         [GPU_LABS])
        self.assertEqual(sorted(call[2] for call in calls if call[0] == "sanitizer" and call[3] == "memcheck"),
                         sorted(GPU_LABS))

    def test_one_passed_gpu_lab_runs_alone_under_each_tool(self):
        tools = Together({"amy": {"03_shared_atomic": {"verdict": "WRONG_ANSWER", "why": ""},
                                  "04_interleaved": {"verdict": "WRONG_ANSWER", "why": ""}}})
        self.grade(tools, self.students("amy"), in_flight=1, labs=LABS)
        self.assertEqual(sorted(self.sanitizer_calls(tools, "amy")),
                         sorted(("sanitizer", "amy", "02_atomic", tool) for tool in TOOLS))

    def test_the_records_are_those_of_one_run_per_lab(self):
        outcomes = {"amy": {"02_atomic": {"verdict": "PASSED", "why": "", "hazards": ["memcheck", "synccheck"]}},
                    "ben": {}}
        records, students = [], self.students("amy", "ben")
        for tools in (Together(outcomes), FakeToolchain(outcomes)):
            shutil.rmtree(self.out, ignore_errors=True)
            # one student at a time: a run again alone beside classmates depends on how runs overlap
            labs = self.grade(tools, students, in_flight=1, labs=LABS)
            for name, student in labs.items():   # the output of one run over every lab is no lab's: not shown
                for lab in student.values():
                    for finding in (lab.get("sanitizer") or {}).get("findings", []):
                        shown = finding.pop("program_output")
                        if tools.sanitize_together and name == "ben":   # every tool's one run was clean
                            self.assertEqual(shown, "")
            records.append({name: {folder: (lab["verdict"], lab["sanitizer"], lab["score"], lab["notes"])
                                   for folder, lab in student.items()} for name, student in labs.items()})
            flags = [json.loads((self.out / "students" / f"{name}.json").read_text(encoding="utf-8"))["flags"]
                     for name in ("amy", "ben")]
            records[-1]["flags"] = flags
        self.assertEqual(records[0], records[1])
