"""Typed events (grader/outputs/events.py): the only progress protocol; the console text is rendered from them."""

import os
import unittest

from grader.outputs import events as ev
from grader.contract import EVENTS_VERSION

WHO = (3, 40, "José María")
EXAMPLES = [ev.Note(line="inputs: seed 1"), ev.ClassStarted(students=40), ev.Refused(where="/c", name="x\u202e", why="a control character"),
            ev.StudentStarted(*WHO), ev.StudentSkipped(*WHO, record="/o/students/j.json"),
            ev.StudentSkipped(*WHO, why=ev.StudentSkipped.ELSEWHERE), ev.StudentWarning(*WHO, problem="no cgroup"),
            ev.LabVerdict(*WHO, lab="02_atomic", verdict="WRONG_ANSWER", detail="n = 1\n  wrong"),
            ev.Retried(*WHO, lab="02_atomic", note="run again alone: PASSED"),
            ev.SanitizerFinding(*WHO, lab="07_last_warp", tool="racecheck", count=2, hazard=True, what="Race"),
            ev.TimingStarted(*WHO, labs=("02_atomic", "10_two_step")),
            ev.StudentDone(*WHO, points="50", maximum="190", steps={"compile": 1.25}, verdicts=("PASSED", "MISSING"))]


class TestWire(unittest.TestCase):
    def test_every_kind_comes_back_as_it_went(self):
        self.assertEqual({type(event) for event in EXAMPLES}, set(ev.KINDS.values()), "an example of every kind")
        for event in EXAMPLES:
            with self.subTest(kind=event.kind):
                self.assertEqual(ev.decode(ev.encode(event)), event)

    def test_a_line_of_another_version_or_kind_or_not_json_is_refused(self):
        line = ev.encode(EXAMPLES[7])
        for bad in (line.replace(f'"v": {EVENTS_VERSION}', f'"v": {EVENTS_VERSION + 1}'),
                    line.replace('"lab_verdict"', '"lab_verdit"'), line.replace('"lab":', '"lab_name":'),
                    "[student 3/40] ana  lab 02_atomic  PASSED", ""):
            with self.subTest(bad=bad[:40]), self.assertRaises(ev.EventError):
                ev.decode(bad)

    def test_json_lines_on_a_descriptor_reach_the_reader_whole(self):
        read_end, write_end = os.pipe()
        sink = ev.JsonLines(write_end)
        for event in EXAMPLES:
            sink(event)
        sink.close()
        with os.fdopen(read_end, encoding="utf-8") as stream:
            self.assertEqual([ev.decode(line) for line in stream], EXAMPLES)


if __name__ == "__main__":
    unittest.main()
