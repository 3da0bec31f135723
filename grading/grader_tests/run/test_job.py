"""A GradingJob (grader/run/job.py): what every launcher hands on, as versioned JSON, checked once."""

import argparse
import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

from grader import cli
from grader.run import job
from grader.contract import JOB_FORMAT, JOB_VERSION, ExitStatus
from grader.manifest import GraderError


def a_job(**changes) -> job.GradingJob:
    return job.replace(job.GradingJob(build_dir="/b", out="/o", submissions="/class"), **changes)


class TestGradingJob(unittest.TestCase):
    def test_a_job_survives_its_file_field_for_field(self):
        original = a_job(labs=["02", "05"], students=["Doe, Jane"], seed=7, run="r1", sanitizer=False,
                         shard=(1, 3), jobs=4, in_flight=2, gpu="GPU-1234abcd")
        with tempfile.TemporaryDirectory() as folder:
            path = original.write(Path(folder) / "job.json")
            data = json.loads(path.read_text(encoding="utf-8"))
            self.assertEqual((data["format"], data["version"]), (JOB_FORMAT, JOB_VERSION))
            self.assertEqual(job.load(path), original)

    def test_another_version_an_unknown_field_or_a_wrong_type_is_refused_with_what_is_wrong(self):
        data = a_job().to_json()
        for change, words in (({"version": JOB_VERSION + 1}, "version"), ({"format": "x"}, "not a grading job"),
                              ({"colour": "red"}, "colour"), ({"sanitizer": "yes"}, "sanitizer"),
                              ({"jobs": 0}, "jobs"), ({"shard": [3, 3]}, "shard")):
            with self.subTest(change=change), self.assertRaisesRegex(GraderError, words):
                job.GradingJob.from_json({**data, **change})

    def test_a_class_or_a_self_check_never_both_and_no_merge_of_a_self_check(self):
        with self.assertRaises(GraderError):
            a_job(self_dir="/labs")
        with self.assertRaises(GraderError):
            job.GradingJob(build_dir="/b", out="/o", self_dir="/labs", merge=True).check()

    def test_graders_sharing_an_output_folder_each_have_a_folder_of_their_own(self):
        self.assertEqual(a_job().run_tag, "")
        self.assertEqual(a_job(shard=(2, 5)).run_tag, "shard-2-of-5")
        self.assertEqual(a_job(gpu="MIG-a/b").run_tag, "worker-gpuMIG-a-b")

    def test_the_command_line_makes_the_job_it_describes(self):
        parser = cli.build_parser()
        args = parser.parse_args(["/class", "--build-dir", "/b", "--out", "/o", "--labs", "02,05", "--no-bench",
                                  "--seed", "9", "--shard", "0/2", "--student", "ana", "--force"])
        made = cli.job_of(args, parser)
        self.assertEqual((made.labs, made.bench, made.seed, made.shard, made.students, made.force),
                         (["02", "05"], False, 9, (0, 2), ["ana"], True))
        self.assertEqual((made.submissions, made.out, made.build_dir), ("/class", "/o", "/b"))
        self.assertGreaterEqual(made.jobs, 1)

    def test_beside_a_job_file_only_where_it_runs_may_be_given(self):
        with tempfile.TemporaryDirectory() as folder:
            path = a_job(jobs=3).write(Path(folder) / "job.json")
            parser = cli.build_parser()
            placed = cli.job_of(parser.parse_args(["--job", str(path), "--shard", "1/4", "--jobs", "5"]), parser)
            self.assertEqual((placed.shard, placed.jobs), ((1, 4), 5))
            error = io.StringIO()
            with contextlib.redirect_stderr(error):
                status = cli.main(["--job", str(path), "--labs", "02"])
            self.assertEqual(status, ExitStatus.USAGE)
            self.assertIn("--labs", error.getvalue())

    def test_from_args_reads_what_a_parser_without_grade_py_s_own_options_has(self):
        parser = argparse.ArgumentParser()
        job.add_selection(parser)   # grade.py --slurm's parser: the selection, no --force or --student
        made = job.from_args(parser.parse_args(["--large"]), build_dir="/b", out="/o", submissions="/c")
        self.assertEqual((made.large, made.force, made.students, made.jobs), (True, False, None, None))


if __name__ == "__main__":
    unittest.main()
