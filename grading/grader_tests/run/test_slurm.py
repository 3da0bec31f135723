"""grade.py --slurm without a cluster: shard planning, the job scripts, the settings and their checks, and
dry runs over the example class (the real cluster run is slurm_cluster.sh)."""

import argparse
import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class
from grader.run import job, slurm, slurm_queue
from grader.contract import ExitStatus
from grader.stages.engine import Grader, Options
from grader.manifest import GraderError
from grader.policy import Policy
from grader.settings import SlurmSettings

CLASS_DIR = tempfile.TemporaryDirectory()
SUBMISSIONS = write_example_class(Path(CLASS_DIR.name) / "example")
ROSTER = sorted(expected_class()["students"])


def tearDownModule():
    CLASS_DIR.cleanup()


def settings(**changes) -> SlurmSettings:
    args = argparse.Namespace(**{name: None for name in ("tasks", "partition", "account", "time", "merge_time",
                                                         "gpus_per_task", "cpus_per_task")}, sbatch_arg=None)
    for name, value in changes.items():
        setattr(args, name, value)
    return slurm.resolve_settings(Policy.load(GRADING / "policy.toml").slurm, args)


class TestShards(unittest.TestCase):
    def test_a_fresh_class_fills_the_tasks_and_every_student_is_in_one_shard(self):
        roster = [f"s{i:02d}" for i in range(10)]
        shards = slurm.plan_shards(roster, roster, 4)
        self.assertEqual((shards.count, shards.indices), (4, [0, 1, 2, 3]))
        owners = [[k for k in shards.indices if i % shards.count == k] for i in range(len(roster))]
        self.assertTrue(all(len(owner) == 1 for owner in owners))

    def test_few_unfinished_students_get_one_task_each_and_no_idle_task(self):
        roster = [f"s{i:02d}" for i in range(10)]
        shards = slurm.plan_shards(roster, ["s03", "s07"], 4)
        self.assertEqual((shards.count, shards.indices, shards.array_spec()), (10, [3, 7], "3,7"))

    def test_more_unfinished_than_tasks_submits_only_the_shards_that_hold_one(self):
        roster = [f"s{i:02d}" for i in range(10)]
        shards = slurm.plan_shards(roster, ["s00", "s02", "s04", "s06", "s08"], 4)
        self.assertEqual((shards.count, shards.indices), (4, [0, 2]))

    def test_a_complete_class_needs_no_task(self):
        self.assertEqual(slurm.plan_shards(ROSTER, [], 4).indices, [])


class TestSettings(unittest.TestCase):
    def test_the_policy_gives_the_defaults_and_the_command_line_wins(self):
        default = settings()
        self.assertEqual((default.tasks, default.gpus_per_task, default.partition), (4, 1, ""))
        chosen = settings(tasks=12, partition="gpu", gpus_per_task=0, sbatch_arg=["--mem=64G"])
        self.assertEqual((chosen.tasks, chosen.partition, chosen.gpus_per_task, chosen.sbatch_args),
                         (12, "gpu", 0, ["--mem=64G"]))

    def test_values_that_would_break_a_sbatch_line_are_refused(self):
        for bad in ({"partition": "gpu\n#SBATCH --uid=0"}, {"time": "1 day"}, {"tasks": 0}, {"gpus_per_task": -1},
                    {"sbatch_arg": ["mem=4G"]}, {"sbatch_arg": ["--mem=4G\nrm -rf ~"]}):
            with self.subTest(bad=bad), self.assertRaises(GraderError):
                settings(**bad)

    def test_an_unknown_key_in_the_slurm_section_is_an_error(self):
        with self.assertRaisesRegex(GraderError, "slurm.gpus"):
            Policy.from_dict({"slurm": {"gpus": 2}})


class TestScripts(unittest.TestCase):
    def script(self, **changes) -> str:
        return slurm.task_script(["python3", "/repo/grading/grade.py"], Path("/out/slurm/job.json"), Path("/class"),
                                 Path("/out"), slurm.Shards(6, [1, 4]), settings(**changes))

    def test_each_task_grades_its_shard_of_the_job(self):
        text = self.script()
        self.assertIn("#SBATCH --array=1,4\n", text)
        self.assertIn('/grade.py --job /out/slurm/job.json --shard "$SLURM_ARRAY_TASK_ID/6" --jobs "$(nproc)"', text)
        self.assertIn("#SBATCH --output=/out/slurm/logs/grade-%A_%a.out", text)

    def test_gpus_are_requested_only_when_asked(self):
        self.assertIn("#SBATCH --gpus-per-task=1\n", self.script())
        self.assertIn("#SBATCH --ntasks=1\n", self.script())  # --gpus-per-task needs a task count
        self.assertNotIn("gpu", self.script(gpus_per_task=0).lower())

    def test_partition_account_and_extra_options_reach_both_jobs(self):
        chosen = settings(partition="h200", account="cs101", sbatch_arg=["--qos=short"])
        merge = slurm.merge_script(["grade"], Path("/out/slurm/merge-job.json"), Path("/out"), chosen)
        for text in (self.script(partition="h200", account="cs101", sbatch_arg=["--qos=short"]), merge):
            for line in ("#SBATCH --partition=h200", "#SBATCH --account=cs101", "#SBATCH --qos=short"):
                self.assertIn(line + "\n", text)
        self.assertIn("grade --job /out/slurm/merge-job.json\n", merge)
        self.assertIn("#SBATCH --time=00:30:00", merge)
        self.assertNotIn("gpus", merge)

    def test_the_scripts_are_valid_bash(self):
        for text in (self.script(), slurm.merge_script(["grade"], Path("/o/slurm/merge-job.json"), Path("/o"), settings())):
            checked = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True)
            self.assertEqual(checked.returncode, 0, checked.stderr)

    def test_paths_slurm_would_misread_are_refused(self):
        for bad in ("/my class", "/out%j"):
            with self.subTest(path=bad), self.assertRaises(GraderError):
                slurm.merge_script(["grade"], Path(bad) / "merge-job.json", Path(bad), settings())


class TestWait(unittest.TestCase):
    def test_wait_ends_with_the_merge_jobs_status_and_says_what_it_means(self):
        with tempfile.TemporaryDirectory() as folder:
            logs = Path(folder)
            state = slurm.Submitted(seed=1, array_job="10", merge_job="11")
            for status, words in ((0, ""), (ExitStatus.UNFINISHED, "some students are unfinished"),
                                  (ExitStatus.REFUSED, "folders of the class folder were refused")):
                (logs / "merge-11.status").write_text(f"{status}\n", encoding="ascii")
                buffer = io.StringIO()
                with mock.patch.object(slurm_queue, "queued", return_value=set()), contextlib.redirect_stdout(buffer):
                    self.assertEqual(slurm_queue.wait_for(state.array_job, state.merge_job, logs), status)
                self.assertIn(words, buffer.getvalue())


class TestDryRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name) / "out"
        self.manifest = fake_manifest(Path(self.tmp.name) / "build")

    def tearDown(self):
        self.tmp.cleanup()

    def dry_run(self, *extra) -> tuple[int, str]:
        buffer = io.StringIO()
        argv = ["--slurm", str(SUBMISSIONS), "--build-dir", str(Path(self.tmp.name) / "build"), "--out", str(self.out),
                "--dry-run", *extra]
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            status = slurm.main(argv, manifest=self.manifest)
        return status, buffer.getvalue()

    def grade(self, who: list[str]) -> None:
        options = Options(labs=self.manifest.labs, jobs=2)
        Grader(self.manifest, Policy.load(GRADING / "policy.toml"), FakeToolchain(expected_class()["students"]),
               self.out, options, log=lambda text: None).grade_class([(name, SUBMISSIONS / name) for name in who],
                                                                     ROSTER)

    def test_a_fresh_class_is_sharded_over_the_tasks(self):
        status, output = self.dry_run("--tasks", "3", "--seed", "5")
        self.assertEqual(status, 0, output)
        self.assertIn("6 to grade", output)
        text = (self.out / "slurm" / "grade.sbatch").read_text(encoding="utf-8")
        self.assertIn("#SBATCH --array=0,1,2\n", text)
        self.assertIn("merge-job.json", (self.out / "slurm" / "merge.sbatch").read_text(encoding="utf-8"))
        task, merge = (job.load(self.out / "slurm" / name) for name in (slurm.JOB_FILE, slurm.MERGE_JOB_FILE))
        self.assertEqual((task.seed, task.merge, task.build, merge.merge), (5, False, False, True))
        self.assertEqual((task.submissions, task.out), (str(SUBMISSIONS.resolve()), str(self.out.resolve())))
        self.assertIn("--dependency=afterany:", output)
        self.assertTrue((self.out / ".grader-key").is_file(), "the key is made before any task runs")

    def test_a_resubmission_grades_only_the_unfinished_students(self):
        self.grade([name for name in ROSTER if name != "dave"])
        status, output = self.dry_run("--tasks", "3")
        self.assertEqual(status, 0, output)
        self.assertIn("5 complete, 1 to grade", output)
        text = (self.out / "slurm" / "grade.sbatch").read_text(encoding="utf-8")
        self.assertIn(f"#SBATCH --array={ROSTER.index('dave')}\n", text)
        self.assertIn(f'"$SLURM_ARRAY_TASK_ID/{len(ROSTER)}"', text)

    def test_a_record_that_is_not_signed_by_this_output_folder_counts_as_unfinished(self):
        self.grade(ROSTER)
        path = self.out / "students" / "alice.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["total"] = 999
        path.write_text(json.dumps(data), encoding="utf-8")
        status, output = self.dry_run()
        self.assertEqual(status, 0, output)
        self.assertIn("5 complete, 1 to grade", output)

    def test_a_complete_class_is_only_merged(self):
        self.grade(ROSTER)
        (self.out / "slurm").mkdir(parents=True)
        (self.out / "slurm" / "grade.sbatch").write_text("stale", encoding="utf-8")
        status, output = self.dry_run()
        self.assertEqual(status, 0, output)
        self.assertIn("only the merge", output)
        self.assertNotIn("--dependency", output)
        self.assertFalse((self.out / "slurm" / "grade.sbatch").exists())

    def test_the_seed_of_the_last_submission_is_kept(self):
        (self.out / "slurm").mkdir(parents=True)
        (self.out / "slurm" / slurm.STATE_FILE).write_text(json.dumps({"seed": 31337}), encoding="utf-8")
        self.dry_run()
        self.assertEqual(job.load(self.out / "slurm" / slurm.JOB_FILE).seed, 31337)

    def test_without_sbatch_it_says_where_to_run_it(self):
        with mock.patch.dict(os.environ, {"PATH": self.tmp.name}):
            buffer = io.StringIO()
            with contextlib.redirect_stderr(buffer):
                status = slurm.main(["--slurm", str(SUBMISSIONS), "--build-dir", "b", "--out", str(self.out)],
                                    manifest=self.manifest)
        self.assertEqual(status, 2)
        self.assertIn("sbatch not found", buffer.getvalue())


if __name__ == "__main__":
    unittest.main()
