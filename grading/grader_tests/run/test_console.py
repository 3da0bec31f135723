"""The console of a grading (grader/run/console.py): the events' lines, and the class's progress."""

import dataclasses
import unittest

from grader.outputs import events as ev
from grader.run.console import Console
from grader_tests.outputs.test_events import EXAMPLES, WHO


class TestConsole(unittest.TestCase):
    def lines(self, events, **options) -> list[str]:
        said: list[str] = []
        console = Console(said.append, **options)
        for event in events:
            console(event)
        return said

    def test_the_console_lines_are_the_grader_s_lines(self):
        self.assertEqual(EXAMPLES[7].text(), "[student 3/40] José María  lab 02_atomic  WRONG_ANSWER  (n = 1 wrong)")
        long = dataclasses.replace(EXAMPLES[7], detail="x" * 200).text()
        self.assertTrue(long.endswith("x" * ev.DETAIL_SHOWN + "...)"), long)
        self.assertEqual(EXAMPLES[9].text(), "[student 3/40] José María  lab 07_last_warp  racecheck: 2 finding(s): Race")
        self.assertEqual(EXAMPLES[11].text(), "[student 3/40] José María  total 50 / 190  (compile 1.2 s)")
        self.assertIsNone(ev.StudentSkipped(*WHO, why=ev.StudentSkipped.MEANWHILE).text())

    def test_progress_counts_every_student_done_or_skipped(self):
        said = self.lines([ev.ClassStarted(students=2), ev.StudentSkipped(1, 2, "a", record="r"),
                           ev.StudentDone(2, 2, "b", verdicts=("WRONG_ANSWER",))])
        self.assertEqual(said[-1][:len("[progress] 2/2 students")], "[progress] 2/2 students", said)
        self.assertIn("1 labs of 1 students", said[-1])

    def test_workers_that_see_every_student_count_each_once(self):
        events = [ev.ClassStarted(students=2), ev.StudentSkipped(1, 2, "a", why=ev.StudentSkipped.ELSEWHERE),
                  ev.StudentDone(1, 2, "a"), ev.StudentSkipped(1, 2, "a", record="r"), ev.StudentDone(2, 2, "b"),
                  ev.StudentSkipped(2, 2, "b", why=ev.StudentSkipped.MEANWHILE)]
        progress = [line for line in self.lines(events, once_per_student=True) if line.startswith("[progress]")]
        self.assertEqual([line.split(",")[0] for line in progress],
                         ["[progress] 1/2 students", "[progress] 2/2 students"])


if __name__ == "__main__":
    unittest.main()
