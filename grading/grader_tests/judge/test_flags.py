"""The record's integrity flags: known kinds only, each flag once, and they survive a record's round trip."""

import unittest

from grader.judge.flags import KINDS, Flag, add_flag
from grader.outputs.records import StudentRecord


class FlagsTest(unittest.TestCase):
    def test_an_unknown_kind_is_refused(self):
        with self.assertRaises(ValueError):
            Flag("made_up_kind", "02_atomic", "x")

    def test_a_flag_is_added_once(self):
        flags: list[dict] = []
        add_flag(flags, "timeout", "02_atomic", "stopped after 60 s")
        add_flag(flags, "timeout", "02_atomic", "stopped after 60 s")
        add_flag(flags, "timeout", "05_sequential", "stopped after 60 s")
        self.assertEqual([f["lab"] for f in flags], ["02_atomic", "05_sequential"])

    def test_flags_survive_the_record_round_trip(self):
        record = StudentRecord("alice")
        add_flag(record.flags, "time_contradicted", "10_two_step", "the grader's clock measured 800 us a call")
        again = StudentRecord.from_json(record.to_json())
        self.assertEqual([Flag.from_json(f) for f in again.flags],
                         [Flag("time_contradicted", "10_two_step", "the grader's clock measured 800 us a call")])

    def test_every_kind_says_what_it_means(self):
        for kind, meaning in KINDS.items():
            self.assertRegex(kind, r"^[a-z_]+$")
            self.assertTrue(meaning.strip(), kind)


if __name__ == "__main__":
    unittest.main()
