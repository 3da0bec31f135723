"""A class graded in pieces (--shard K/N, --gpus workers) and merged (--merge) gives the same outputs,
verdicts and points as one run, grades every student exactly once, and resumes what is left."""

import contextlib
import csv
import io
import json
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader.contract import ExitStatus
from grader_tests.helpers import GRADING, expected_class, fake_manifest, FakeToolchain, write_example_class
from grader import cli

SIMULATED = [sys.executable, str(GRADING / "grader_tests" / "simulated_grade.py")]
OUTPUT_FILES = ["gradebook.csv", "junit.xml", "timings.csv", "timings.json"]
TOTAL_LINE = re.compile(r"\[student \d+/\d+\] (\S+)  total ")


def totals(text: str) -> list[str]:
    """The students whose grading ended in this output (each worker's "total" line, relayed)."""
    return [match.group(1) for match in map(TOTAL_LINE.search, text.splitlines()) if match]


class ShardingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.build = self.root / "build"
        self.submissions = write_example_class(self.root / "class")
        self.names = sorted(p.name for p in self.submissions.iterdir() if p.is_dir())
        self.expected = expected_class()["students"]

    def tearDown(self):
        self.tmp.cleanup()

    def run_cli(self, out: Path, *extra: str, workers: bool = False) -> tuple[int, str]:
        argv = [str(self.submissions), "--build-dir", str(self.build), "--out", str(out), "--seed", "7",
                "--no-sanitizer", "--no-plots", *extra]
        text = io.StringIO()
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            if workers:
                status = cli.main(argv, manifest=fake_manifest(self.build), worker_command=SIMULATED)
            else:
                status = cli.main(argv, toolchain=FakeToolchain(self.expected), manifest=fake_manifest(self.build))
        return status, text.getvalue()

    def grades(self, out: Path) -> dict:
        grades = {}
        for name in self.names:
            data = json.loads((out / "students" / f"{name}.json").read_text(encoding="utf-8"))
            grades[name] = {folder: (lab["verdict"], lab["score"]["correctness"], lab["score"]["performance"])
                            for folder, lab in data["labs"].items()}
        return grades

    def assert_same_outputs(self, single: Path, pieces: Path):
        self.assertEqual(self.grades(pieces), self.grades(single))
        for name in OUTPUT_FILES:
            self.assertTrue((pieces / name).is_file(), name)
        for name in ("gradebook.csv", "timings.csv"):
            with open(single / name, newline="") as a, open(pieces / name, newline="") as b:
                self.assertEqual(next(csv.reader(b)), next(csv.reader(a)), f"{name} columns")
        with open(single / "gradebook.csv", newline="") as a, open(pieces / "gradebook.csv", newline="") as b:
            self.assertEqual(list(csv.reader(b)), list(csv.reader(a)))
        self.assertEqual(sorted(p.name for p in (pieces / "gradescope").iterdir()), self.names)

    def test_shards_then_merge_equal_one_run(self):
        single, pieces = self.root / "single", self.root / "pieces"
        self.assertEqual(self.run_cli(single)[0], ExitStatus.OK)
        status, text = self.run_cli(pieces, "--shard", "0/2")
        self.assertEqual(status, ExitStatus.OK, text)
        status, text = self.run_cli(pieces, "--merge")
        self.assertEqual(status, ExitStatus.UNFINISHED, text)
        left = [name for i, name in enumerate(self.names) if i % 2 == 1]
        self.assertIn(", ".join(left), text)
        self.assertEqual(self.run_cli(pieces, "--shard", "1/2")[0], ExitStatus.OK)
        status, text = self.run_cli(pieces, "--merge")
        self.assertEqual(status, ExitStatus.OK, text)
        self.assert_same_outputs(single, pieces)
        # The class report of the pieces: every student a row and a page, as after one run.
        for out in (single, pieces):
            page = (out / "report" / "index.html").read_text(encoding="utf-8")
            self.assertEqual(page.count('<tr data-name="'), len(self.names), out)
            self.assertEqual(sorted(p.stem for p in (out / "report" / "students").glob("*.html")), sorted(self.names))

    def test_a_shard_grades_only_its_students(self):
        out = self.root / "shard"
        status, text = self.run_cli(out, "--shard", "2/3")
        self.assertEqual(status, ExitStatus.OK, text)
        graded = sorted(p.stem for p in (out / "students").glob("*.json"))
        self.assertEqual(graded, [name for i, name in enumerate(self.names) if i % 3 == 2])

    def test_bad_shards_are_usage_errors(self):
        for shard in ("2/2", "1", "-1/3", "a/b"):
            self.assertEqual(self.run_cli(self.root / "bad", f"--shard={shard}")[0], ExitStatus.USAGE, shard)

    def test_workers_on_two_gpus_grade_each_student_once_and_merge(self):
        single, workers = self.root / "single", self.root / "workers"
        self.assertEqual(self.run_cli(single)[0], ExitStatus.OK)
        status, text = self.run_cli(workers, "--gpus", "0,1", workers=True)
        self.assertEqual(status, ExitStatus.OK, text)
        self.assertEqual(sorted(totals(text)), self.names, text)
        self.assertIn("[gpu 0]", text)
        self.assertIn(f"[progress] {len(self.names)}/{len(self.names)} students", text)
        self.assert_same_outputs(single, workers)
        # --force: every student graded again, still once each, although both workers see every one.
        status, text = self.run_cli(workers, "--gpus", "0,1", "--force", workers=True)
        self.assertEqual(status, ExitStatus.OK, text)
        self.assertEqual(sorted(totals(text)), self.names, text)
        # Resuming: a lost record is graded again, and only it.
        (workers / "students" / f"{self.names[0]}.json").unlink()
        status, text = self.run_cli(workers, "--gpus", "0,1", workers=True)
        self.assertEqual(status, ExitStatus.OK, text)
        self.assertEqual(totals(text), [self.names[0]], text)

    def test_a_refused_folder_ends_a_gpus_grading_with_its_status_once_and_its_workers_with_0(self):
        (self.submissions / "copycat").symlink_to(self.submissions / self.names[0])
        status, text = self.run_cli(self.root / "refused", "--gpus", "0,1", workers=True)
        self.assertEqual(status, ExitStatus.REFUSED, text)   # a worker's 6 would be "1 worker(s) failed"
        self.assertNotIn("worker(s) failed", text)
        self.assertEqual(sorted(totals(text)), self.names, text)
        self.assertEqual(text.count('"copycat" refused: a symbolic link'), 1, text)   # the warning, by the parent
        self.assertEqual(text.count('refused: "copycat": a symbolic link'), 1, text)  # the end's list, by the merge

    def fake_nvidia_smi(self, listing: str, status: int = 0) -> str:
        """A PATH whose only nvidia-smi prints `listing` and exits with `status`: --gpus all asks
        nvidia-smi -L, so the test decides what this machine has, whatever it really has."""
        folder = self.root / f"bin-{len(list(self.root.glob('bin-*')))}"
        folder.mkdir()
        script = folder / "nvidia-smi"
        script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{listing}EOF\nexit {status}\n", encoding="utf-8")
        script.chmod(0o755)
        return str(folder)

    def test_gpus_all_without_a_gpu_is_a_clear_usage_error(self):
        no_device = self.fake_nvidia_smi("No devices were found\n", status=6)   # what a driver without a GPU says
        nothing_listed = self.fake_nvidia_smi("")
        no_tool = str(self.root / "empty-bin")                                   # no nvidia-smi at all
        Path(no_tool).mkdir()
        for path in (no_device, nothing_listed, no_tool):
            with self.subTest(path=path), mock.patch.dict(os.environ, {"PATH": path}):
                status, text = self.run_cli(self.root / "none", "--gpus", "all", workers=True)
                self.assertEqual(status, ExitStatus.USAGE, text)
                self.assertIn("--gpus all", text)

    def test_gpus_all_starts_one_worker_per_gpu_nvidia_smi_lists(self):
        two = self.fake_nvidia_smi("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n"
                                   "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-1111-1111-1111-111111111111)\n")
        with mock.patch.dict(os.environ, {"PATH": two + os.pathsep + os.environ.get("PATH", "")}):
            status, text = self.run_cli(self.root / "all", "--gpus", "all", workers=True)
        self.assertEqual(status, ExitStatus.OK, text)
        self.assertIn("[gpu 0]", text)
        self.assertIn("[gpu 1]", text)
        self.assertEqual(sorted(totals(text)), self.names, text)


if __name__ == "__main__":
    unittest.main()
