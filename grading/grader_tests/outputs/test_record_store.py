"""The student records (grader/outputs/record_store.py): the only reader and writer, signed and versioned."""

import json
import tempfile
import unittest
from pathlib import Path

from grader.outputs import signing
from grader.contract import RECORD_VERSION
from grader.outputs.record_store import VERSION_KEY, RecordStore, observed
from grader.outputs.records import StudentRecord


class TestRecordStore(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name)
        self.store = RecordStore(self.out, signing.load_key(self.out))

    def tearDown(self):
        self.tmp.cleanup()

    def rewrite(self, name: str, change) -> None:
        path = self.store.path(name)
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data), encoding="utf-8")

    def test_a_saved_record_loads_as_it_was_with_its_version(self):
        record = StudentRecord(student="José María", complete=True, seed="7", notes=["a note"])
        self.store.save(record)
        self.assertEqual(json.loads(self.store.path(record.student).read_text(encoding="utf-8"))[VERSION_KEY],
                         RECORD_VERSION)
        self.assertEqual(self.store.load(record.student), record)
        self.assertEqual(self.store.complete(["nobody", record.student]), [record])

    def test_an_edited_record_another_version_or_another_student_s_is_no_record(self):
        for name, change in (("ana", lambda d: d.update(total=999)),
                             ("bo", lambda d: d.update({VERSION_KEY: RECORD_VERSION + 1})),
                             ("cy", lambda d: d.update(student="dee"))):
            with self.subTest(name=name):
                self.store.save(StudentRecord(student=name, complete=True))
                data = json.loads(self.store.path(name).read_text(encoding="utf-8"))
                change(data)
                if name != "ana":   # signed again, as a grader of this key would: still refused
                    data = signing.sign(self.store.key, data)
                self.store.path(name).write_text(json.dumps(data), encoding="utf-8")
                self.assertIsNone(self.store.load(name))

    def test_an_incomplete_record_loads_but_is_not_complete(self):
        self.store.save(StudentRecord(student="ana", complete=False))
        self.assertIsNotNone(self.store.load("ana"))
        self.assertEqual(self.store.complete(["ana"]), [])

    def test_complete_reads_a_file_again_only_when_its_bytes_changed(self):
        self.store.save(StudentRecord(student="ana", complete=True, total=1.0))
        self.store.save(StudentRecord(student="bo", complete=True, total=2.0))
        first = self.store.complete(["ana", "bo"])
        again = self.store.complete(["ana", "bo"])
        self.assertIs(again[0], first[0], "an unchanged file: the record read before")
        self.assertIs(again[1], first[1])
        self.store.save(StudentRecord(student="ana", complete=True, total=3.0))   # regraded
        ana, bo = self.store.complete(["ana", "bo"])
        self.assertEqual(ana.total, 3.0)
        self.assertIs(bo, first[1])

    def test_complete_drops_a_kept_record_whose_file_is_forged_or_gone(self):
        self.store.save(StudentRecord(student="ana", complete=True, total=1.0))
        self.store.save(StudentRecord(student="bo", complete=True, total=2.0))
        self.assertEqual(len(self.store.complete(["ana", "bo"])), 2)
        self.rewrite("ana", lambda d: d.update(total=9.0))   # not signed again: no record
        self.store.path("bo").unlink()
        self.assertEqual(self.store.complete(["ana", "bo"]), [])
        self.store.save(StudentRecord(student="bo", complete=True, total=2.0))   # written again, same bytes
        self.assertEqual([r.total for r in self.store.complete(["ana", "bo"])], [2.0])

    def test_an_observer_reads_edited_records_of_this_version_only(self):
        self.store.save(StudentRecord(student="ana", complete=True))
        self.store.save(StudentRecord(student="bo", complete=True))
        self.rewrite("ana", lambda d: d.update(total=5.0))
        self.rewrite("bo", lambda d: d.update({VERSION_KEY: 0}))
        seen = observed(self.out)
        self.assertEqual(list(seen), ["ana"])
        self.assertEqual(seen["ana"].total, 5.0)


if __name__ == "__main__":
    unittest.main()
