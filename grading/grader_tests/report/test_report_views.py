"""The class report's views without a browser: every flag in "Needs attention" (derived for a
record graded before flags), the summary and the leaderboard's figure as their tables, ties as
ties, a replay command for every failing verdict, the student's copy free of classmates, machine
paths and the class seed, and every linked file inside report/. examples/check_report.py checks
the same in a browser on whole gradings."""

from __future__ import annotations

import re
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.judge.flags import add_flag
from grader.manifest import Lab
from grader.outputs.records import LabBenchmark, LabRecord, LabScore, SanitizerResult, StudentRecord
from grader.report.site import write_site
from grader.report.site.stats import histogram, lab_summaries
from grader_tests.report.test_report_site import Elements

LABS = [Lab("02_atomic", "atomic.cu", "lab02_atomic"), Lab("05_sequential", "sequential.cu", "lab05_sequential")]
SEED = "4242424242424242424"
OUT_WORK = "/srv/grading/out"


def timed(ratio: float, verdict: str = "PASSED", **parts) -> LabRecord:
    rows = [{"type": t, "n": "16777216", "median_us": f"{50 * ratio:.3f}", "gbps": "1200", "status": "ok",
             "ratio_to_ref": f"{ratio}"} for t in ("float", "int")]
    return LabRecord("x", "x.cu", "x", verdict=verdict, benchmark=LabBenchmark(rows=rows, ratio=ratio, statistic="median"),
                     score=LabScore(10.0, 10.0, 10.0, 10.0, 20.0, 20.0), **parts)


def student(name: str, atomic: LabRecord, sequential: LabRecord, flags=None) -> StudentRecord:
    labs = {}
    for folder, entry in (("02_atomic", atomic), ("05_sequential", sequential)):
        entry.folder, entry.file = folder, folder.split("_", 1)[1] + ".cu"
        entry.source = f"{OUT_WORK}/work/{name}/src/{folder}/{entry.file}"
        labs[folder] = entry
    total = sum(e.score.total or 0 for e in labs.values())
    record = StudentRecord(name, complete=True, date="2026-11-25", seed=SEED, sandbox="bubblewrap (test)",
                           submission=f"/home/ta/class/{name}", labs=labs, total=total, max_total=40.0,
                           gpu_name="TEST GPU", machine={"gpu": True})
    for kind, lab in flags or []:
        add_flag(record.flags, kind, lab, f"{kind} seen")
    return record


def failing(verdict: str, detail: str) -> LabRecord:
    return LabRecord("x", "x.cu", "x", verdict=verdict, detail=detail, score=LabScore(0.0, 10.0, 0.0, 10.0, 0.0, 20.0))


class Views(unittest.TestCase):
    def setUp(self):
        self.out = Path(tempfile.mkdtemp(prefix="report-views-test-"))
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)
        self.records = [
            student("amy", timed(1.004), timed(1.2)),
            student("ben", timed(0.996), failing("WRONG_ANSWER", f"1 of 9 cases failed\n  replay: grade.py --seed {SEED}"),
                    flags=[("edit_outside_region", "02_atomic")]),
            student("cat", timed(3.0), failing("TIMEOUT", "one call did not finish within 20 s (during lab 05, "
                                                          "n = 7, seed = 99887766)")),
            student("dan", timed(1.0, sanitizer=SanitizerResult("run", [{"tool": "memcheck", "status": "hazards",
                                                                         "count": 3}], {"memcheck": 3})),
                    failing("COMPILE_ERROR", f"does not compile: {OUT_WORK}/work/dan/src/05_sequential/sequential.cu(3)")),
        ]
        self.names = ["amy", "ben", "cat", "dan", "eve"]
        (self.out / "gradebook.csv").write_text("student,total\n", encoding="utf-8")
        self.index = write_site(self.out, LABS, self.names, self.records)
        self.page = self.index.read_text(encoding="utf-8")
        self.tags = Elements(self.page).tags

    def read(self, path: str) -> str:
        return (self.out / "report" / path).read_text(encoding="utf-8")

    def rows(self, kind: str) -> list[dict]:
        return [attrs for tag, attrs in self.tags if tag == "tr" and attrs.get("data-kind") == kind]

    def test_needs_attention_has_every_flag_recorded_or_derived(self):
        self.assertEqual(len(self.rows("edit_outside_region")), 1, "recorded in ben's record")
        self.assertEqual(len(self.rows("sanitizer_hazard")), 1, "derived from dan's findings")
        self.assertEqual(len(self.rows("timeout")), 1, "derived from cat's verdict")
        self.assertEqual(len(self.rows("not_graded_yet")), 1, "eve has no record")
        self.assertEqual(self.page.count('class="note derived"'), 2, "cat's and dan's: their records carry no flag")
        self.assertLess(self.page.index('id="attention"'), self.page.index('id="summary"'))
        self.assertLess(self.page.index('id="summary"'), self.page.index('id="gradebook"'))

    def test_needs_attention_says_none_when_there_is_none(self):
        write_site(self.out, LABS, ["amy"], self.records[:1])
        self.assertIn('id="attention-none"', self.index.read_text(encoding="utf-8"))

    def test_the_summary_and_the_histogram_are_the_gradebooks_numbers(self):
        rows = {attrs["data-lab"]: attrs for tag, attrs in self.tags if tag == "tr" and "data-lab" in attrs}
        cells = [attrs for tag, attrs in self.tags if tag == "td" and "data-passed" in attrs]
        summaries = lab_summaries(self.records, LABS)
        self.assertEqual([(int(c["data-passed"]), int(c["data-graded"])) for c in cells],
                         [(s.passed, s.graded) for s in summaries])
        self.assertEqual((summaries[0].passed, summaries[1].passed), (4, 1))
        self.assertIn("02_atomic", rows)
        bins = [int(attrs["data-count"]) for tag, attrs in self.tags if tag == "rect" and "data-count" in attrs]
        self.assertEqual(bins, [b.count for b in histogram([r.total for r in self.records], 40.0)])
        self.assertEqual(sum(bins), 4)

    def test_the_leaderboard_ranks_unflagged_passes_its_figure_shows_the_same_values(self):
        dots = {(a["data-row"], a["data-student"]): a["data-value"] for t, a in self.tags if t == "circle"}
        self.assertEqual(dots, {("02_atomic", "amy"): "1.00", ("02_atomic", "cat"): "3.00",
                                ("05_sequential", "amy"): "1.20"},
                         "ben (flagged) and dan (a sanitizer finding) are not ranked; 1.004 shows as 1.00")
        table = re.search(r'<table class="sortable leaderboard" data-lab="02_atomic">.*?</table>', self.page).group(0)
        ratios = re.findall(r'class="num ratio" data-value="([\d.]+)"', table)
        self.assertEqual(ratios, ["1.00", "3.00"])
        self.assertIn('id="not-ranked"', self.page)

    def test_ties_share_a_rank(self):
        records = [student(name, timed(ratio), timed(1.0)) for name, ratio in (("a", 1.001), ("b", 0.999), ("c", 1.2))]
        page = write_site(self.out, LABS, ["a", "b", "c"], records).read_text(encoding="utf-8")
        table = re.search(r'<table class="sortable leaderboard" data-lab="02_atomic">.*?</table>', page).group(0)
        self.assertEqual(re.findall(r'<td class="num rank" data-value="(\d+)">\d+( <span class="tie">tie</span>)?', table),
                         [("1", ' <span class="tie">tie</span>'), ("1", ' <span class="tie">tie</span>'), ("3", "")])

    def test_every_failing_verdict_has_a_sandboxed_replay_command(self):
        for name, labs in (("ben", ["05"]), ("cat", ["05"]), ("dan", ["02", "05"])):
            page = self.read(f"students/{name}.html")
            for lab in labs:
                self.assertIn(f"--student={name} --labs {lab} --seed {SEED} --build-dir build/solutions --out replay "
                              "--force --require-sandbox", page)
            self.assertNotIn("/home/ta/class/" + name + " ", page.split("Lab by lab")[1])
        self.assertNotIn("--labs 02", self.read("students/amy.html"))

    def test_the_students_copy_has_no_classmate_no_machine_path_no_seed(self):
        for record in self.records:
            page = self.read(f"handouts/{record.student}.html")
            links = [a["href"] for t, a in Elements(page).tags if t == "a"]
            self.assertTrue(all(link.startswith("#") for link in links), links)
            for secret in (SEED, OUT_WORK, "/home/ta", "99887766", "$CLASS"):
                self.assertNotIn(secret, page, record.student)
            for other in self.names:
                if other != record.student:
                    self.assertNotRegex(page, rf"\b{other}\b", record.student)
        dan = self.read("handouts/dan.html")
        self.assertIn("labs/05_sequential/sequential.cu(3)", dan, "a machine path becomes the student's own path")
        self.assertIn("python3 grading/grade.py --self --build-dir build/student --out build/self-check --labs 05", dan)

    def test_the_graders_clock_is_shown_with_the_timings(self):
        clock = [{"type": "float", "n": 16777216, "claimed_us": 50.0, "excess_us": 812.5, "reference_excess_us": 4.1,
                  "allowed_us": 36.6, "problem": "800 us a call beyond its claim"}]
        entry = timed(0.5)
        entry.benchmark.contradicted, entry.benchmark.clock = True, clock
        record = student("fay", entry, timed(1.0))
        write_site(self.out, LABS, ["fay"], [record])
        page = self.read("students/fay.html")
        self.assertIn("contradicts the times claimed", page)
        for value in ("812.5", "4.1", "36.6", "800 us a call beyond its claim"):
            self.assertIn(f">{value}</td>", page)
        self.assertIn('data-kind="time_contradicted"', page, "a flag the record's fields imply")
        self.assertIn("fay (02_atomic)</a>", self.index.read_text(encoding="utf-8"), "a refused time is not ranked")

    def test_what_the_report_links_lives_inside_it(self):
        hrefs = [a["href"] for t, a in self.tags if t == "a"]
        self.assertIn("files/gradebook.csv", hrefs)
        self.assertTrue((self.out / "report" / "files" / "gradebook.csv").is_file())
        self.assertFalse([h for h in hrefs if h.startswith(("..", "/")) or "://" in h], "no link leaves report/")


if __name__ == "__main__":
    unittest.main()
