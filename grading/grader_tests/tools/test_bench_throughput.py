"""grading/tools/bench_throughput.py's judgments: mismatches against the expected verdicts and against
students graded alone, the ratio deviation, the choice of solo students and the PASS/FAIL lines.
Gradings come from the simulated toolchain (no nvcc, no GPU); CTest grader.bench_throughput_smoke
runs the script itself on a tiny class."""

import contextlib
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING, FakeToolchain, fake_manifest, maker
from grader.stages.engine import Grader, Options
from grader.policy import Policy

from tools import bench_throughput as bench


def grade(class_dir: Path, out: Path, expected: dict, who=None, gpu=True) -> None:
    manifest = fake_manifest(out.parent / "build")
    students = [(p.name, p) for p in sorted(class_dir.iterdir()) if p.is_dir() and (who is None or p.name in who)]
    Grader(manifest, Policy.load(GRADING / "policy.toml"), FakeToolchain(expected["students"], gpu=gpu), out,
           Options(labs=manifest.labs, jobs=2), log=lambda text: None).grade_class(students)


def edit(out: Path, name: str, change) -> None:
    path = out / "students" / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


class TestComparisons(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        with contextlib.redirect_stdout(io.StringIO()):
            cls.expected = maker().write_class("synthetic", root / "class", students=8, seed=3)
        cls.names = sorted(cls.expected["students"])
        cls.labs = cls.expected["labs"]
        cls.clean = root / "clean"
        grade(root / "class", cls.clean, cls.expected)
        cls.solo_name = cls.names[0]
        cls.solo = root / "solo"
        grade(root / "class", cls.solo, cls.expected, who={cls.solo_name})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        self.out = Path(self.scratch.name) / "run"
        shutil.copytree(self.clean, self.out)

    def tearDown(self):
        self.scratch.cleanup()

    def mismatches(self, no_gpu=False):
        return bench.expected_mismatches("one-gpu", self.expected, self.out, self.names, self.labs, no_gpu)

    def test_each_run_done_writes_the_summary_so_far_with_where_its_time_went(self):
        summary = bench.Summary("2026-11-27", "host", ["0: NVIDIA H200"], "NVIDIA H200", 3, 2, len(self.names),
                                self.labs, True)
        run = bench.Run("one-gpu", str(self.out), self.names, ["grade.py"], wall_s=16.0, returncode=0)
        bench.run_done(summary, self.out, run)
        text = (self.out / "summary.md").read_text(encoding="utf-8")
        self.assertIn("PARTIAL", text)
        self.assertIn("one-gpu", text)
        self.assertEqual(summary.seconds_per_student["one-gpu"], 2.0)
        self.assertEqual([result.students for result in summary.breakdowns["one-gpu"]], [len(self.names)])
        self.assertIn("stage      students", text)
        saved = json.loads((self.out / "summary.json").read_text(encoding="utf-8"))
        self.assertFalse(saved["complete"])
        summary.complete = True
        self.assertNotIn("PARTIAL", "\n".join(bench.report(summary)))

    def test_a_faithful_grading_has_no_mismatch(self):
        self.assertEqual(self.mismatches(), [])

    def test_a_changed_verdict_and_a_missing_record_are_mismatches(self):
        edit(self.out, self.names[1], lambda d: d["labs"]["02_atomic"].update(verdict="WRONG_ANSWER"))
        (self.out / "students" / f"{self.names[2]}.json").unlink()
        found = self.mismatches()
        self.assertTrue(any(m.student == self.names[1] and "02_atomic" in m.what for m in found), found)
        self.assertIn(bench.Mismatch("one-gpu", self.names[2], "no complete record"), found)

    def test_a_grading_with_a_gpu_is_not_what_a_machine_without_one_gives(self):
        self.assertNotEqual(self.mismatches(no_gpu=True), [])

    def test_the_same_grading_alone_matches(self):
        mismatches, performance, deviation = bench.solo_comparison(
            "one-gpu", bench.load_records(self.out), bench.load_records(self.solo))
        self.assertEqual((mismatches, performance), ([], []))
        self.assertTrue(deviation)
        self.assertEqual(set(deviation.values()), {0.0})

    def test_ratio_and_points_differences_are_found(self):
        name = self.solo_name

        def change(data):
            lab = data["labs"]["05_sequential"]
            lab["benchmark"]["ratio"] = round(lab["benchmark"]["ratio"] * 1.05, 4)
            lab["score"]["performance"] = 1.0
            data["labs"]["02_atomic"]["score"]["correctness"] = 5.0
        edit(self.out, name, change)
        mismatches, performance, deviation = bench.solo_comparison(
            "one-gpu", bench.load_records(self.out), bench.load_records(self.solo))
        self.assertEqual([m.what.split(":")[0] for m in mismatches], ["02_atomic"])
        self.assertEqual([m.what.split(":")[0] for m in performance], ["05_sequential"])
        self.assertAlmostEqual(deviation["05_sequential"], 0.05, places=3)


class TestChoicesAndTargets(unittest.TestCase):
    def test_solo_students_cover_the_kinds(self):
        expected = maker().expected_verdicts("synthetic", students=60, seed=1)
        chosen = bench.pick_solo(expected, 4)
        self.assertEqual(len(chosen), 4)
        kinds = {e["kind"] for name in chosen for e in expected["students"][name].values()}
        self.assertGreaterEqual(len(kinds), 4)
        self.assertEqual(chosen, bench.pick_solo(expected, 4))

    def summary(self, per_student, speedup=None, deviation=None):
        summary = bench.Summary("2026-11-22", "host", ["0: NVIDIA H200", "1: NVIDIA H200"], "NVIDIA H200", 1, 2, 60,
                                ["02_atomic"], True)
        summary.seconds_per_student = {"one-gpu": per_student}
        summary.speedup = speedup
        summary.ratio_deviation = deviation or {}
        return summary

    def statuses(self, summary, runs=("one-gpu", "multi"), no_gpu=False, gpus=2):
        return [t.status for t in bench.judge(summary, dict.fromkeys(runs), no_gpu, gpus)]

    def test_targets_pass_and_fail_at_their_limits(self):
        self.assertEqual(self.statuses(self.summary(8.0, 1.8, {"02_atomic": 0.03})), ["PASS"] * 5)
        self.assertEqual(self.statuses(self.summary(8.1, 1.79, {"02_atomic": 0.031}))[2:], ["FAIL"] * 3)

    def test_what_was_not_measured_says_why(self):
        statuses = self.statuses(self.summary(3.0), runs=("one-gpu",), no_gpu=True)
        self.assertTrue(all(s.startswith("not measured (no GPU") for s in statuses[2:]), statuses)
        self.assertIn("two GPUs", self.statuses(self.summary(3.0, 3.5), gpus=4)[3])

    def test_a_mismatch_fails_the_verdict_lines(self):
        summary = self.summary(3.0)
        summary.solo_mismatches.append(bench.Mismatch("multi", "s001", "02_atomic: TIMEOUT, alone PASSED"))
        self.assertEqual(self.statuses(summary)[:2], ["PASS", "FAIL"])
        self.assertTrue(any("02_atomic: TIMEOUT" in line for line in bench.report(summary)))


class TestPolicies(unittest.TestCase):
    def test_a_policy_file_that_is_not_there_is_a_usage_error_before_any_grading(self):
        with tempfile.TemporaryDirectory() as folder:
            for option in ("--policy", "--also-policy"):
                stderr = io.StringIO()
                with self.assertRaises(SystemExit) as ended, contextlib.redirect_stderr(stderr):
                    bench.main(["--build-dir", folder, option, str(Path(folder) / "missing.toml")])
                self.assertEqual(ended.exception.code, 2)
                self.assertIn("no policy file", stderr.getvalue())
                self.assertEqual(list(Path(folder).iterdir()), [], "nothing written")


if __name__ == "__main__":
    unittest.main()
