"""The pipeline as declared stages (grader/stages/): each stage alone on a record, and the grader
running exactly the declared stages, in order, for every student."""

import tempfile
import unittest
from pathlib import Path

from grader import stages
from grader.stages.engine import Grader, Options
from grader.policy import Policy
from grader.outputs.records import LabRecord, StudentRecord
from grader.stages.base import Stage
from grader.judge.verdicts import COMPILE_ERROR, MISSING, NOT_RUN, PASSED
from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class


class Recorder(Stage):
    """A stage that notes who passed through it, then runs the real one."""
    order: list = []

    def __init__(self, real: Stage):
        super().__init__(real.g)
        self.real, self.name = real, real.name

    def run(self, who, record, work):
        Recorder.order.append((record.student, self.name))
        self.real.run(who, record, work)


class TestStages(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.manifest = fake_manifest(self.root / "build")
        self.events = []

    def tearDown(self):
        self.tmp.cleanup()

    def grader(self, outcomes=None, gpu=True) -> Grader:
        return Grader(self.manifest, Policy.load(GRADING / "policy.toml"), FakeToolchain(outcomes or {}, gpu=gpu),
                      self.root / "out", Options(labs=self.manifest.labs, jobs=2), events=self.events.append)

    def record(self, verdicts: dict[str, str | None]) -> StudentRecord:
        record = StudentRecord(student="ana")
        for lab in self.manifest.labs:
            record.labs[lab.folder] = LabRecord(lab.folder, lab.file, lab.module, verdict=verdicts.get(lab.folder))
        return record

    def test_the_declared_order_is_compile_test_sanitize_time(self):
        self.assertEqual([stage.name for stage in stages.PIPELINE], ["compile", "test", "sanitize", "time"])

    def test_score_alone_gives_points_from_the_verdicts_only(self):
        first, second = (lab.folder for lab in self.manifest.labs[:2])
        record = self.record({first: PASSED, second: COMPILE_ERROR})
        record.benchmark.status = "skipped (--no-bench)"
        stages.Score(self.grader()).run((1, 1, "ana"), record, self.root)
        self.assertGreater(record.labs[first].score.correctness, 0)
        self.assertEqual(record.labs[first].score.performance or 0, 0)   # nothing was timed
        self.assertEqual(record.labs[second].score.total, 0)
        self.assertEqual(record.total, sum(entry.score.total or 0 for entry in record.labs.values()))

    def test_test_alone_without_a_gpu_marks_gpu_labs_not_run_and_runs_nothing(self):
        grader = self.grader(gpu=False)
        gpu_labs = [lab.folder for lab in self.manifest.labs if not lab.host]
        record = self.record({lab.folder: (MISSING if lab.host else None) for lab in self.manifest.labs})
        stages.Test(grader).run((1, 1, "ana"), record, self.root)
        self.assertEqual({record.labs[folder].verdict for folder in gpu_labs}, {NOT_RUN})
        self.assertFalse([call for call in grader.tools.calls if call[0] != "plan"], grader.tools.calls)

    def test_the_grader_runs_every_declared_stage_in_order_for_each_student(self):
        class_dir = write_example_class(self.root / "class")
        names = sorted(expected_class()["students"])[:3]
        grader = self.grader(expected_class()["students"])
        Recorder.order = []
        grader.stages = [Recorder(stage) for stage in grader.stages]
        result = grader.grade_class([(name, class_dir / name) for name in names])
        for name in names:
            self.assertEqual([what for who, what in Recorder.order if who == name],
                             ["compile", "test", "sanitize", "time"])
        self.assertEqual({tuple(record.step_seconds) for record in result.records},
                         {("compile", "test", "sanitize", "time")})


if __name__ == "__main__":
    unittest.main()
