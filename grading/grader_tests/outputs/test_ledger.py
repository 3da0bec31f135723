"""The grading's ledger (outputs/ledger.py) and the per-stage breakdown computed from it
(tools/stage_breakdown.py): what a grading writes, what the reader keeps, and the arithmetic of
GPU-busy and idle seconds."""

import json
import tempfile
import unittest
from collections import Counter
from pathlib import Path

from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class
from grader.outputs.ledger import ALONE, LEDGER_FILE, Closed, Grading, Ledger, Opened, Span, StageTime, read
from grader.policy import Policy
from grader.stages.engine import Grader, Options
from tools.stage_breakdown import at_once, breakdown, breakdowns, lines, shared_bands, union_seconds


class LedgerFileTest(unittest.TestCase):
    def test_the_reader_keeps_the_last_grading_and_skips_what_it_cannot_read(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "sub" / LEDGER_FILE
            first = Ledger(path, "run1", "main")
            first.span("compile", "amy", False, 0.0, 1.0)
            first.close()
            second = Ledger(path, "run2", "worker-gpu1", prepared_s=1.25)
            second.span("test", "ben", True, second._t0 + 0.5, 2.0)
            second.stage("test", "ben", 3.0, None)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write("not json\n" + json.dumps({"v": 99, "kind": "span"}) + "\n"
                             + json.dumps({"v": 1, "kind": "span", "stage": "test"}) + "\n")
            grading = read(path)
        self.assertEqual(grading.opened.run, "run2")
        self.assertEqual(grading.opened.worker, "worker-gpu1")
        self.assertEqual(grading.opened.prepared_s, 1.25)
        self.assertEqual(grading.spans, [Span("test", "ben", True, 0.5, 2.0)])
        self.assertEqual(grading.stages, [StageTime("test", "ben", 3.0, None)])
        self.assertIsNone(grading.closed, "the second grading never closed (cut off)")

    def test_a_ledger_of_before_its_preparing_was_kept_reads_as_not_known(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / LEDGER_FILE
            path.write_text(json.dumps({"v": 1, "kind": "opened", "run": "r", "worker": "main", "started": ""}) + "\n",
                            encoding="utf-8")
            grading = read(path)
        self.assertIsNone(grading.opened.prepared_s)
        self.assertNotIn("preparing", lines(breakdown(grading))[0])

    def test_a_ledger_without_a_path_writes_nothing(self):
        ledger = Ledger(None, "", "")
        ledger.span("test", "amy", True, 0.0, 1.0)
        ledger.close()   # no error, no file


class BreakdownTest(unittest.TestCase):
    def test_union_of_overlapping_and_separate_intervals(self):
        self.assertEqual(union_seconds([]), 0.0)
        self.assertEqual(union_seconds([(0, 4), (2, 6), (8, 9), (8.5, 8.7)]), 7.0)
        self.assertEqual(union_seconds([(5, 6), (0, 1), (1, 2)]), 3.0)

    def test_gpu_busy_idle_and_stage_sums(self):
        grading = Grading(Opened("r", "main", "", 2.5),
                          spans=[Span("compile", "amy", False, 0.0, 3.0), Span("test", "amy", True, 3.0, 4.0),
                                 Span("test", "amy", True, 5.0, 4.0), Span("time", "amy", False, 9.0, 1.0),
                                 Span("time", "amy", True, 10.0, 2.0), Span(ALONE, "amy", True, 12.5, 1.0)],
                          stages=[StageTime("compile", "amy", 3.0, 20.0), StageTime("test", "amy", 6.0, 7.5),
                                  StageTime("time", "amy", 3.5, None)],
                          closed=Closed(16.0, 2.0))
        result = breakdown(grading)
        rows = {row.stage: row for row in result.rows}
        self.assertEqual((result.wall_s, result.gpu_busy_s, result.gpu_idle_s), (16.0, 9.0, 7.0))
        self.assertEqual((rows["test"].runs, rows["test"].run_s, rows["test"].gpu_s), (2, 8.0, 6.0))
        self.assertEqual((rows["compile"].cpu_s, rows["compile"].gpu_s), (20.0, 0.0))
        self.assertIsNone(rows["time"].cpu_s, "one unmeasured student makes the stage's CPU time unmeasured")
        self.assertEqual(rows["time"].gpu_s, 2.0, "the host lab's timing turn holds no GPU")
        self.assertNotIn("sanitize", rows, "a stage nothing ran in has no row")
        self.assertEqual(result.students, 1)
        text = "\n".join(lines(result))
        self.assertIn("idle 7.0 s (44% of the wall), after 2.5 s of preparing", text)
        self.assertEqual(result.timing_s, 3.0, "the host and the device timing turns")
        self.assertEqual((result.host_timing_s, result.device_timing_s), (1.0, 2.0))
        self.assertIn("timing turns ran 3.0 s (19% of the wall; host part 1.0 s, device part 2.0 s)", text)

    def test_the_seconds_at_each_number_of_shared_gpu_runs(self):
        self.assertEqual(at_once([(0, 4), (2, 6), (3, 5), (8, 9)]), {1: 4.0, 2: 2.0, 3: 1.0})
        spans = [Span("test", "amy", True, 0.0, 4.0), Span("sanitize", "ben", True, 2.0, 4.0),
                 *[Span("sanitize", "cal", True, 2.5, 1.0) for _ in range(3)],   # 5 at once from 2.5 to 3.5
                 Span("time", "amy", True, 7.0, 1.0), Span(ALONE, "ben", True, 9.0, 2.0),   # exclusive: no band
                 Span("compile", "dan", False, 0.0, 9.0)]                                     # no GPU: no band
        bands = shared_bands(Grading(Opened("r", "main", ""), spans=spans))
        self.assertEqual(bands, {"1": 4.0, "2": 1.0, "3-4": 0.0, "5+": 1.0})
        self.assertEqual(sum(bands.values()), union_seconds([(0, 4), (2, 6)]))


class GradingLedgerTest(unittest.TestCase):
    def test_a_pipelined_grading_writes_every_run_and_every_students_stages(self):
        expected = expected_class()["students"]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            manifest = fake_manifest(root / "build")
            submissions = write_example_class(root / "example")
            students = [(p.name, p) for p in sorted(submissions.iterdir()) if p.is_dir()]
            toolchain = FakeToolchain(expected)
            options = Options(labs=manifest.labs, jobs=4, seed=7, in_flight=3)
            Grader(manifest, Policy.load(GRADING / "policy.toml"), toolchain, root / "out", options,
                   log=lambda text: None).grade_class(students)
            ledgers = list((root / "out" / "work" / ".run").glob(f"**/{LEDGER_FILE}"))
            self.assertEqual(len(ledgers), 1)
            grading = read(ledgers[0])
            found = breakdowns(root / "out")
        names = {name for name, _ in students}
        self.assertIsNotNone(grading.closed)
        self.assertGreaterEqual(grading.opened.prepared_s, 0.0)
        stages = Counter(stage.stage for stage in grading.stages)
        self.assertEqual(stages, {stage: len(names) for stage in ("compile", "test", "sanitize", "time")})
        spans = Counter(span.stage for span in grading.spans)
        calls = Counter(call[0] for call in toolchain.calls)
        self.assertEqual(spans["compile"], calls["compile"])
        self.assertEqual(spans["test"] + spans["sanitize"] + spans.get(ALONE, 0), calls["tests"] + calls["sanitizer"])
        host = {lab.folder for lab in manifest.labs if lab.host}
        for span in grading.spans:
            self.assertLessEqual(span.start_s + span.seconds, grading.closed.seconds + 1e-3)
            if span.stage == "compile":
                self.assertFalse(span.gpu)
        gpu_tests = sum(1 for call in toolchain.calls if call[0] == "tests" and call[2] not in host)
        alone_on_gpu = sum(1 for span in grading.spans if span.stage == ALONE and span.gpu)   # a run again alone
        on_gpu = sum(1 for span in grading.spans if span.stage == "test" and span.gpu)
        self.assertLessEqual(gpu_tests - alone_on_gpu, on_gpu)
        self.assertLessEqual(on_gpu, gpu_tests)
        self.assertEqual({span.student for span in grading.spans}, names)
        self.assertEqual(len(found), 1)
        self.assertEqual(found[0].students, len(names))
        self.assertLessEqual(found[0].gpu_busy_s, found[0].wall_s)


if __name__ == "__main__":
    unittest.main()
