"""The class outputs after one student (class_outputs.publish with `graded`): the class files from every
record, the Gradescope file of the graded student only, and the final publish writes them all."""

import csv
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.manifest import Lab
from grader.outputs import signing
from grader.outputs.record_store import RecordStore
from grader.report import class_outputs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "h100_example_class"
NAMES = ["alice", "carol", "dave", "frank"]


class TestPublishAfterOneStudent(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name)
        shutil.copytree(FIXTURE / "students", self.out / "students")
        shutil.copyfile(FIXTURE / "grader-key", self.out / signing.KEY_FILE)
        self.key = signing.load_key(self.out)
        self.store = RecordStore(self.out, self.key)
        first = self.store.complete(NAMES)[0]
        self.labs = [Lab(folder, entry.file, entry.module) for folder, entry in first.labs.items()]

    def tearDown(self):
        self.tmp.cleanup()

    def gradescope(self) -> list[str]:
        return sorted(path.parent.name for path in (self.out / "gradescope").glob("*/results.json"))

    def test_only_the_graded_student_s_gradescope_file_then_all_at_the_end(self):
        records = class_outputs.publish(self.out, self.labs, NAMES, self.key, graded={"carol"}, store=self.store)
        self.assertEqual([r.student for r in records], NAMES, "the class files still come from every record")
        self.assertEqual(self.gradescope(), ["carol"])
        gradebook = (self.out / "gradebook.csv").read_text(encoding="utf-8")
        for name in NAMES:
            self.assertIn(name, gradebook)
        class_outputs.publish(self.out, self.labs, NAMES, self.key, graded={"dave"}, store=self.store)
        self.assertEqual(self.gradescope(), ["carol", "dave"])
        class_outputs.publish(self.out, self.labs, NAMES, self.key, store=self.store)
        self.assertEqual(self.gradescope(), NAMES)
        score = json.loads((self.out / "gradescope" / "alice" / "results.json").read_text(encoding="utf-8"))["score"]
        self.assertEqual(score, self.store.load("alice").total)

    def test_a_record_forged_between_two_publishes_leaves_the_class_files(self):
        class_outputs.publish(self.out, self.labs, NAMES, self.key, graded={"carol"}, store=self.store)
        path = self.store.path("dave")
        data = json.loads(path.read_text(encoding="utf-8"))
        data["total"] = 1000.0   # not signed again
        path.write_text(json.dumps(data), encoding="utf-8")
        records = class_outputs.publish(self.out, self.labs, NAMES, self.key, graded={"alice"}, store=self.store)
        self.assertEqual([r.student for r in records], ["alice", "carol", "frank"])
        rows = {row["student"]: row for row in csv.DictReader((self.out / "gradebook.csv").read_text(encoding="utf-8").splitlines())}
        self.assertEqual(rows["dave"]["total"], "", "a roster row with no record: no points")
        self.assertEqual(rows["alice"]["total"], "230")


if __name__ == "__main__":
    unittest.main()
