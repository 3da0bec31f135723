"""examples/check_class.py on made-up gradings of the example and attack classes: a faultless grading
holds, and each kind of fault it must see fails the check that names it."""

import csv
import html
import io
import json
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from unittest import mock

from grader_tests.examples_fixtures import checker, maker, written
from class_files.csv_cells import csv_cell


def fake_grading(class_dir: Path, out: Path, cpu_only: bool = False) -> None:
    """What a faultless grader would write for the class (only what check_class reads): each
    lab's first accepted outcome, with the first flag it asks for, under the student's real name; the
    folders to refuse refused."""
    expected = json.loads((class_dir / maker.EXPECTED_FILE).read_text(encoding="utf-8"))
    (out / "students").mkdir(parents=True)
    rows, refused, suites = [], [], []
    for name, labs in expected["students"].items():
        why = expected.get("attackers", {}).get(name, {}).get("refused")
        if why:
            refused.append({"name": checker.shown(name), "why": f"its name cannot be a student's: {why}", "refused": True})
            continue
        record, total, blank = {"student": name, "complete": True, "labs": {}, "flags": []}, 0.0, False
        for folder, entry in labs.items():
            outcome = (entry["without_gpu"] if cpu_only else entry["accept"])[0]
            correctness = outcome["correctness"][0] if outcome["correctness"] else None
            performance = outcome["performance"][0] if outcome["performance"] else None
            lab_total = None if correctness is None else correctness + (performance or 0)
            blank |= lab_total is None
            total += lab_total or 0
            record["labs"][folder] = {"verdict": outcome["verdict"], "detail": outcome.get("names", ""), "score": {
                "correctness": correctness, "performance": performance, "total": lab_total}}
            if outcome.get("flags"):
                record["flags"].append({"kind": outcome["flags"][0], "lab": folder, "detail": "seen"})
        record["total"] = None if blank else total
        file_name = checker.student_file_name(name)
        (out / "students" / f"{file_name}.json").write_text(json.dumps(record), encoding="utf-8")
        (out / "gradescope" / file_name).mkdir(parents=True)
        (out / "gradescope" / file_name / "results.json").write_text(json.dumps({"extra_data": {"student": name}}),
                                                                     encoding="utf-8")
        (out / "report" / "students").mkdir(parents=True, exist_ok=True)
        (out / "report" / "students" / f"{file_name}.html").write_text(f"<h1>{html.escape(name)}</h1>", encoding="utf-8")
        suites.append(f'<testsuite name="{html.escape(name)}"/>')
        cells = ["" if record["labs"][f]["score"]["total"] is None else f"{record['labs'][f]['score']['total']:g}"
                 for f in expected["labs"]]
        rows.append([csv_cell(name), *cells, "" if record["total"] is None else f"{record['total']:g}"])
    with (out / "gradebook.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *expected["labs"], "total"])
        writer.writerows(rows)
    (out / "junit.xml").write_text(f"<testsuites>{''.join(suites)}</testsuites>", encoding="utf-8")
    (out / "refused-folders.json").write_text(json.dumps(refused), encoding="utf-8")


class GradingCheckCase(unittest.TestCase):
    """A class written once (`kind`), and an empty output folder per test for a made-up grading."""
    kind = "attacks"

    @classmethod
    def setUpClass(cls):
        cls.scratch, cls.class_dir, _ = written(cls.kind)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name) / "out"

    def tearDown(self):
        self.tmp.cleanup()


class TestCheckClass(GradingCheckCase):
    def failures(self, cpu_only=False, secret=None, key_secret=None):
        checks = checker.check(self.class_dir, self.out, cpu_only, secret, None, key_secret=key_secret)
        with redirect_stdout(io.StringIO()):
            checker.print_report(checks)
        return [c.what for c in checks if not c.ok]

    def edit_record(self, name, change):
        path = self.out / "students" / f"{name}.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        change(record)
        path.write_text(json.dumps(record), encoding="utf-8")

    def test_a_faultless_grading_passes_with_and_without_a_gpu(self):
        fake_grading(self.class_dir, self.out)
        self.assertEqual(self.failures(), [])
        other = Path(self.tmp.name) / "cpu"
        fake_grading(self.class_dir, other, cpu_only=True)
        self.out = other
        self.assertEqual(self.failures(cpu_only=True), [])

    def test_a_forged_pass_and_a_changed_victim_fail(self):
        fake_grading(self.class_dir, self.out)

        def forged(record):
            record["labs"]["01_host_sum"] = {"verdict": "PASSED", "score": {"correctness": 10, "performance": 0,
                                                                           "total": 10}}
            record["total"] = 10
        self.edit_record("forger", forged)
        self.edit_record("zoe", lambda record: record["labs"]["02_atomic"]["score"].update(performance=3.0))
        failures = self.failures()
        self.assertIn("forger 01_host_sum", failures)
        self.assertIn("zoe 02_atomic", failures)
        self.assertTrue(any(failure.startswith("victims unchanged: aaron, zoe") for failure in failures), failures)

    def test_the_right_verdict_for_another_reason_fails_where_the_reason_is_named(self):
        fake_grading(self.class_dir, self.out)
        self.assertEqual(self.failures(), [])
        self.edit_record("overrunner", lambda record: record["labs"]["10_two_step"].update(
            detail="1 of 90 cases failed; first: lab 10_two_step, n = 1000003\n  expected 5, got 6"))
        self.assertEqual(self.failures(), ["overrunner 10_two_step"])

    def test_a_lab_that_must_be_flagged_fails_without_its_flag(self):
        fake_grading(self.class_dir, self.out)
        wanted = self.class_dir / maker.EXPECTED_FILE
        accept = json.loads(wanted.read_text(encoding="utf-8"))["students"]["early_worker"]["10_two_step"]["accept"]
        self.assertEqual(accept[0]["flags"], ["time_contradicted", "time_unverified"])

        def flag(*flags):
            self.edit_record("early_worker", lambda record: record.update(flags=list(flags)))
            return self.failures()
        self.assertEqual(flag({"kind": "time_unverified", "lab": "10_two_step", "detail": ""}), [])
        self.assertEqual(flag(), ["early_worker 10_two_step"])   # no points, but the grader saw nothing
        self.assertEqual(flag({"kind": "time_contradicted", "lab": "02_atomic", "detail": ""},
                              {"kind": "timeout", "lab": "10_two_step", "detail": ""}), ["early_worker 10_two_step"])

    def test_a_phantom_a_formula_and_a_missing_student_fail(self):
        fake_grading(self.class_dir, self.out)
        (self.out / "students" / "phantom.json").write_text('{"student": "phantom", "total": 190, "labs": {}}')
        with (self.out / "gradebook.csv").open("a", encoding="utf-8") as handle:
            handle.write("=1+1,10\n")
        (self.out / "students" / "netcat.json").unlink()
        failures = self.failures()
        self.assertIn("roster: exactly the class folder's students", failures)
        self.assertIn("gradebook: no formula cells", failures)
        self.assertIn("netcat", failures)

    def test_refusals_real_names_and_the_exit_status_are_checked(self):
        fake_grading(self.class_dir, self.out)
        refused = self.out / "refused-folders.json"
        listed = json.loads(refused.read_text(encoding="utf-8"))
        self.assertEqual(sorted(item["name"] for item in listed), ["bell\\x07ding", "copycat", "student\\u202egnp.exe"])
        listed[0]["why"] = "hidden"
        listed.append({"name": "aaron", "why": "a symbolic link", "refused": True})
        refused.write_text(json.dumps(listed), encoding="utf-8")
        gradescope = self.out / "gradescope" / checker.student_file_name("王小明") / "results.json"
        gradescope.write_text(json.dumps({"extra_data": {"student": "%E7%8E%8B"}}), encoding="utf-8")
        failures = self.failures()
        self.assertIn(f"{listed[0]['name']} refused", failures)
        self.assertIn("refused-folders.json: only the folders to refuse", failures)
        self.assertIn("王小明 real name", failures)
        self.assertFalse(checker.check_exit_status(self.class_dir, 0).ok)
        self.assertTrue(checker.check_exit_status(self.class_dir, 6).ok)

    def test_secrets_in_a_report_fail(self):
        fake_grading(self.class_dir, self.out)
        line = sorted(checker.solution_lines())[0]
        self.edit_record("quoter", lambda record: record["labs"]["01_host_sum"].update(detail=f"error: {line}\nS3CRET-42"))
        self.assertIn("reports hold no secret", self.failures(secret="S3CRET-42"))
        self.edit_record("quoter", lambda record: record["labs"]["01_host_sum"].update(detail="S3CRET-42"))
        self.assertIn("reports hold no secret", self.failures(secret="S3CRET-42"))
        self.edit_record("quoter", lambda record: record["labs"]["01_host_sum"].update(detail="error: stray '@'"))
        self.assertNotIn("reports hold no secret", self.failures(secret="S3CRET-42"))

    def test_the_graders_session_key_in_a_report_fails(self):
        fake_grading(self.class_dir, self.out)
        self.assertNotIn("reports hold no secret", self.failures(key_secret="grader-key-77"))
        self.edit_record("keyring_reader", lambda record: record["labs"]["01_host_sum"].setdefault(
            "tests", {}).update(program_output="key 1a2b user;0;0;3f010000;reduction-labs-grader-key: grader-key-77"))
        self.assertIn("reports hold no secret", self.failures(key_secret="grader-key-77"))

    def test_a_student_may_quote_its_own_lines(self):
        fake_grading(self.class_dir, self.out)
        own = checker.own_lines(self.class_dir, "aaron") & checker.solution_lines()
        self.assertTrue(own, "aaron hands in the reference regions")
        self.edit_record("aaron", lambda record: record["labs"]["10_two_step"].update(detail="\n".join(sorted(own))))
        self.assertEqual(self.failures(), [])


class TestTheMainJobsCheck(GradingCheckCase):
    """check_class.py as the main job (tools/grade-example.sh) ends: on the example class, with
    --detect-gpu; this machine's GPU, or its absence, is stood in for."""
    kind = "example"

    def check(self, gpu: bool) -> tuple[int, list[str]]:
        with mock.patch.object(checker, "gpu_here", return_value=gpu), redirect_stdout(io.StringIO()) as text:
            status = checker.main([str(self.class_dir), str(self.out), "--detect-gpu", "--no-process-check"])
        return status, text.getvalue().splitlines()

    def test_without_a_gpu_it_checks_what_it_can_and_says_what_it_cannot(self):
        fake_grading(self.class_dir, self.out, cpu_only=True)
        not_run = sum(lab["verdict"] == "NOT_RUN" for path in (self.out / "students").glob("*.json")
                      for lab in json.loads(path.read_text(encoding="utf-8"))["labs"].values())
        self.assertGreater(not_run, 0)
        status, lines = self.check(gpu=False)
        self.assertEqual(status, 0, "\n".join(lines))
        self.assertRegex(lines[-1], rf"^(\d+) of \1 checks hold \(graded without a GPU: {not_run} GPU labs NOT_RUN, "
                                    r"as they must be; their verdicts, points and timings on a GPU are not checked here\)$")

    def test_with_a_gpu_a_grading_that_ran_no_gpu_lab_fails(self):
        fake_grading(self.class_dir, self.out, cpu_only=True)
        status, lines = self.check(gpu=True)
        self.assertEqual(status, 1)
        self.assertRegex(lines[-1], r"^\d+ of \d+ checks hold; \d+ FAILED$")

    def test_with_a_gpu_a_faultless_grading_holds_and_nothing_is_left_unchecked(self):
        fake_grading(self.class_dir, self.out)
        status, lines = self.check(gpu=True)
        self.assertEqual(status, 0, "\n".join(lines))
        self.assertRegex(lines[-1], r"^(\d+) of \1 checks hold$")


if __name__ == "__main__":
    unittest.main()
