"""The launchers (grader/run/launch.py): each runs a GradingJob and returns one typed ClassOutcome."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path

from grader.outputs import events as ev
from grader.run import job, slurm
from grader.contract import ExitStatus
from grader.run.local_run import LocalLauncher
from grader.policy import Policy
from grader.settings import SlurmSettings
from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class


class TestLaunchers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.manifest = fake_manifest(root / "build")
        self.job = job.GradingJob(build_dir=str(root / "build"), out=str(root / "out"),
                                  submissions=str(write_example_class(root / "class")), build=False, seed=5)
        self.policy = Policy.load(GRADING / "policy.toml")
        self.said: list = []

    def tearDown(self):
        self.tmp.cleanup()

    def local(self, **changes):
        launcher = LocalLauncher(self.manifest, self.policy, self.said.append,
                                 FakeToolchain(expected_class()["students"]))
        with contextlib.redirect_stdout(io.StringIO()):
            return launcher.run(job.replace(self.job, **changes))

    def test_a_merge_before_any_grading_is_unfinished_and_after_it_complete(self):
        self.assertEqual(self.local(merge=True).status, ExitStatus.UNFINISHED)
        self.assertEqual(self.local().status, ExitStatus.OK)
        self.assertEqual(self.local(merge=True).status, ExitStatus.OK)
        done = [event.student for event in self.said if isinstance(event, ev.StudentDone)]
        self.assertEqual(sorted(done), sorted(expected_class()["students"]))

    def test_slurm_submits_the_job_and_says_the_seed_it_kept(self):
        settings = SlurmSettings(tasks=2, time="", merge_time="", gpus_per_task=0, cpus_per_task=0)
        launcher = slurm.SlurmLauncher(settings, ["grade"], dry_run=True, manifest=self.manifest)
        with contextlib.redirect_stdout(io.StringIO()):
            outcome = launcher.run(self.job)
        self.assertEqual((outcome.status, outcome.seed), (ExitStatus.OK, 5))
        self.assertEqual(job.load(Path(self.job.out) / "slurm" / slurm.JOB_FILE).seed, 5)


if __name__ == "__main__":
    unittest.main()
