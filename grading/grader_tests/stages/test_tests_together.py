"""One test run over a student's GPU labs (run_tests.py): a lab whose part of it passed is PASSED
from it; every other lab runs alone, as in a grading of one run per lab, so a verdict other than
PASSED, and any retry, comes from a run of that lab only. The records are a grading's of one run
per lab (but the program output beside a lab that passed in the shared run: it is every lab's)."""

import json
import shutil

from grader.judge.call_limit import CallLimit
from grader.policy import Policy
from grader_tests.helpers import GRADING, FakeToolchain
from grader_tests.stages.test_classmates import ClassCase

LABS = ("01_host_sum", "02_atomic", "03_shared_atomic", "04_interleaved", "05_sequential")
GPU_LABS = LABS[1:]


class Together(FakeToolchain):
    test_together = True


def outcome(verdict):
    return {"verdict": verdict, "why": ""}


def together(on=True) -> Policy:
    policy = Policy.load(GRADING / "policy.toml")
    policy.tests.together = on
    return policy


class TestsTogether(ClassCase):
    def grade(self, toolchain, students, in_flight, policy=None, labs=LABS, bench=False):
        return super().grade(toolchain, students, in_flight, policy or together(), labs, bench)

    def test_the_policy_turns_it_on(self):
        tools = Together({})
        self.grade(tools, self.students("amy"), in_flight=1, labs=LABS, policy=together(False))
        self.assertEqual(sorted(self.calls_of(tools, "amy")), sorted(("tests", "amy", folder) for folder in LABS))

    def calls_of(self, tools, student):
        return [call for call in tools.calls if call[0].startswith("tests") and call[1] == student]

    def test_a_student_who_passes_everything_has_one_run_of_the_gpu_labs_and_the_host_lab_alone(self):
        tools = Together({})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=LABS)
        self.assertEqual(sorted(self.calls_of(tools, "amy")),
                         [("tests", "amy", "01_host_sum"), ("tests_labs", "amy", GPU_LABS)])
        for folder in LABS:
            self.assertEqual(labs["amy"][folder]["verdict"], "PASSED", folder)
        self.assertEqual(labs["amy"]["02_atomic"]["tests"]["program_output"], "", "the shared run's output is no lab's")
        self.assertIn("says hello", labs["amy"]["01_host_sum"]["tests"]["program_output"])

    def test_a_shared_run_that_ended_in_a_lab_vouches_for_nothing_and_the_others_share_one_more(self):
        tools = Together({"amy": {"03_shared_atomic": outcome("WRONG_ANSWER"), "04_interleaved": outcome("TIMEOUT")}})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=LABS)
        shared = [call[2] for call in self.calls_of(tools, "amy") if call[0] == "tests_labs"]
        self.assertEqual(shared, [GPU_LABS, ("02_atomic", "03_shared_atomic", "05_sequential")],
                         "04's timeout ended the first shared run inside its part: the others share a second")
        alone = sorted(call[2] for call in self.calls_of(tools, "amy") if call[0] == "tests")
        self.assertEqual(alone, ["01_host_sum", "03_shared_atomic", "04_interleaved"])
        self.assertEqual({folder: labs["amy"][folder]["verdict"] for folder in LABS},
                         {"01_host_sum": "PASSED", "02_atomic": "PASSED", "03_shared_atomic": "WRONG_ANSWER",
                          "04_interleaved": "TIMEOUT", "05_sequential": "PASSED"})

    def test_the_shared_run_has_the_short_call_limit_and_a_lab_alone_the_full_one(self):
        tools = Together({"amy": {"04_interleaved": outcome("TIMEOUT")}})
        policy = together()
        policy.tests.call_timeout_s, policy.tests.shared_call_timeout_s = 20.0, 2.0
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=LABS, policy=policy)
        self.assertEqual(sorted(set(tools.call_limits)),
                         [("01_host_sum", CallLimit(20.0, 2.0)), ("04_interleaved", CallLimit(20.0, 2.0)),
                          ("tests_labs", CallLimit(2.0, 2.0))])
        self.assertEqual(labs["amy"]["04_interleaved"]["verdict"], "TIMEOUT", "the verdict is the alone run's")
        self.assertIn("20 s", labs["amy"]["04_interleaved"]["detail"])

    def test_a_shared_limit_above_the_call_limit_is_the_call_limit(self):
        tools = Together({})
        policy = together()
        policy.tests.call_timeout_s, policy.tests.shared_call_timeout_s = 5.0, 30.0
        self.grade(tools, self.students("amy"), in_flight=1, labs=LABS, policy=policy)
        self.assertEqual(sorted(set(tools.call_limits)), [("01_host_sum", CallLimit(5.0, 2.0)),
                                                          ("tests_labs", CallLimit(5.0, 2.0))])

    def test_a_floor_below_the_shared_limit_grows_in_the_shared_run_too(self):
        tools = Together({})
        policy = together()
        policy.tests.call_timeout_s, policy.tests.call_floor_s, policy.tests.shared_call_timeout_s = 20.0, 0.5, 2.0
        self.grade(tools, self.students("amy"), in_flight=1, labs=LABS, policy=policy)
        self.assertEqual(sorted(set(tools.call_limits)), [("01_host_sum", CallLimit(20.0, 0.5)),
                                                          ("tests_labs", CallLimit(2.0, 0.5))])

    def test_a_second_shared_run_that_does_not_end_cleanly_leaves_every_lab_alone(self):
        tools = Together({"amy": {"03_shared_atomic": outcome("TIMEOUT"), "04_interleaved": outcome("TIMEOUT")}})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=LABS)
        shared = [call[2] for call in self.calls_of(tools, "amy") if call[0] == "tests_labs"]
        self.assertEqual(shared, [GPU_LABS, ("02_atomic", "04_interleaved", "05_sequential")], "two shared runs at most")
        alone = sorted(call[2] for call in self.calls_of(tools, "amy") if call[0] == "tests")
        self.assertEqual(alone, list(LABS), "neither shared run ended cleanly: none of their parts stands")
        self.assertEqual({folder: labs["amy"][folder]["verdict"] for folder in LABS},
                         {"01_host_sum": "PASSED", "02_atomic": "PASSED", "03_shared_atomic": "TIMEOUT",
                          "04_interleaved": "TIMEOUT", "05_sequential": "PASSED"})

    def test_a_wrong_answer_ends_nothing_and_runs_alone(self):
        tools = Together({"amy": {"03_shared_atomic": outcome("WRONG_ANSWER")}})
        labs = self.grade(tools, self.students("amy"), in_flight=1, labs=LABS)
        alone = sorted(call[2] for call in self.calls_of(tools, "amy") if call[0] == "tests")
        self.assertEqual(alone, ["01_host_sum", "03_shared_atomic"])
        self.assertEqual(labs["amy"]["03_shared_atomic"]["verdict"], "WRONG_ANSWER")

    def test_one_gpu_lab_runs_alone(self):
        tools = Together({})
        self.grade(tools, self.students("amy"), in_flight=1, labs=LABS[:2])
        self.assertEqual(sorted(self.calls_of(tools, "amy")),
                         [("tests", "amy", "01_host_sum"), ("tests", "amy", "02_atomic")])

    def test_the_records_are_those_of_one_run_per_lab(self):
        outcomes = {"amy": {"02_atomic": outcome("RUNTIME_ERROR"), "05_sequential": outcome("WRONG_ANSWER")},
                    "ben": {"04_interleaved": outcome("TIMEOUT")}, "cyd": {}}
        records, students = [], self.students("amy", "ben", "cyd")
        for tools in (Together(outcomes), FakeToolchain(outcomes)):
            shutil.rmtree(self.out, ignore_errors=True)
            # one student at a time: a run again alone beside classmates depends on how runs overlap
            labs = self.grade(tools, students, in_flight=1, labs=LABS)
            for name, student in labs.items():   # where a lab's run was the shared one, its own time and output are not
                for folder, lab in student.items():
                    shown, _ = lab["tests"].pop("program_output"), lab["tests"].pop("seconds")
                    if tools.test_together and name == "cyd" and folder != "01_host_sum":
                        self.assertEqual(shown, "", folder)
            records.append({"labs": labs, "flags": [
                json.loads((self.out / "students" / f"{name}.json").read_text(encoding="utf-8"))["flags"]
                for name in ("amy", "ben", "cyd")]})
        self.assertEqual(records[0], records[1])
