"""program_output.py: what a report shows of a student's printing."""

import unittest

from grader.outputs.program_output import PROGRAM_OUTPUT_BYTES, program_output


class TestProgramOutput(unittest.TestCase):
    def test_nothing_printed_shows_nothing(self):
        self.assertEqual(program_output("", ""), "")
        self.assertEqual(program_output("\n", "  "), "")

    def test_each_stream_is_named(self):
        text = program_output("lab 04 banner", "a warning\n")
        self.assertEqual(text, "[stdout]\nlab 04 banner\n[stderr]\na warning")

    def test_terminal_escapes_and_other_controls_become_question_marks(self):
        text = program_output("red \x1b[31mtext\r over\u202egnirts\x00", "")
        self.assertEqual(text, "[stdout]\nred ?[31mtext? over?gnirts?")
        self.assertIn("µs", program_output("27.9 µs\ttab", ""))

    def test_a_flood_keeps_its_start_and_its_end_within_the_limit(self):
        flood = "first line\n" + "x" * 100_000 + "\nlast line"
        text = program_output(flood, "", limit=4096)
        self.assertTrue(text.startswith("[stdout]\nfirst line"))
        self.assertTrue(text.endswith("last line"))
        self.assertIn("characters left out", text)
        self.assertLess(len(text), 4096 + 100)
        self.assertLess(len(program_output(flood, flood)), PROGRAM_OUTPUT_BYTES + 200)


if __name__ == "__main__":
    unittest.main()
