"""examples/submissions is what examples/make_examples.py makes from the current labs and solutions."""

import importlib.util
import sys
import unittest

from grader_tests.helpers import EXAMPLES, expected_class


def load_maker():
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_examples"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class TestExamples(unittest.TestCase):
    def test_the_example_class_is_up_to_date(self):
        maker = load_maker()
        files, table = maker.build_class()
        on_disk = {path for path in maker.SUBMISSIONS.rglob("*") if path.is_file()}
        stale = sorted(str(p.relative_to(EXAMPLES)) for p, text in files.items()
                       if not p.is_file() or p.read_text(encoding="utf-8") != text)
        extra = sorted(str(p.relative_to(EXAMPLES)) for p in on_disk - set(files))
        self.assertEqual((stale, extra), ([], []), "the labs or solutions changed: run python3 examples/make_examples.py")
        self.assertEqual(table, expected_class(), "run python3 examples/make_examples.py")

    def test_every_verdict_is_exercised(self):
        verdicts = {entry["verdict"] for labs in expected_class()["students"].values() for entry in labs.values()}
        self.assertEqual(verdicts, {"PASSED", "WRONG_ANSWER", "RUNTIME_ERROR", "TIMEOUT", "COMPILE_ERROR", "MISSING"})


if __name__ == "__main__":
    unittest.main()
