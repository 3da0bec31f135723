"""contract.json is the one home of what the grader's processes and languages agree on: each reader
of it (Python, the shell's tools/skip_code.sh) gets the same values, and they are well formed."""

import json
import subprocess
import unittest
from pathlib import Path

from grader import contract
from grader_tests.helpers import GRADING


class TestContract(unittest.TestCase):
    def test_the_shell_reads_the_skip_code_python_reads(self):
        said = subprocess.run(["bash", str(GRADING.parent / "tools" / "skip_code.sh")], capture_output=True, text=True)
        self.assertEqual((said.returncode, said.stdout.strip()), (0, str(contract.SKIP_CODE)), said.stderr)
        self.assertEqual(contract.SKIP_CODE, json.loads((GRADING / "contract.json").read_text())["skip_code"])

    def test_exit_statuses_are_distinct_and_none_is_the_skip_code(self):
        values = [status.value for status in contract.ExitStatus]
        self.assertEqual(len(values), len(set(values)))
        self.assertNotIn(contract.SKIP_CODE, values)
        self.assertEqual(contract.ExitStatus.OK, 0)

    def test_the_versions_are_positive_integers(self):
        for version in (contract.JOB_VERSION, contract.EVENTS_VERSION, contract.RECORD_VERSION, contract.REPORT_VERSION):
            self.assertIsInstance(version, int)
            self.assertGreaterEqual(version, 1)

    def test_every_verdict_has_one_letter_of_its_own_and_words(self):
        order = contract.VERDICT_ORDER
        self.assertEqual(set(contract.VERDICT_LETTERS), set(order))
        self.assertEqual(set(contract.VERDICT_WORDS), set(order))
        letters = list(contract.VERDICT_LETTERS.values()) + list(contract.VERDICT_MARKS.values())
        self.assertEqual(len(letters), len(set(letters)), "a letter or a mark stands for two things")
        self.assertTrue(all(len(letter) == 1 for letter in letters))

    def test_the_grader_uses_the_contracts_verdicts(self):
        from grader.judge import verdicts
        self.assertEqual(verdicts.VERDICTS, contract.VERDICT_ORDER)
        order = contract.VERDICT_ORDER
        self.assertEqual((verdicts.PASSED, verdicts.NOT_RUN), (order[0], order[-1]))
        self.assertTrue(verdicts.LEGEND.startswith("P passed, W wrong answer"))


class TestClassFiles(unittest.TestCase):
    def test_the_grader_and_the_plots_import_one_package_of_class_file_names(self):
        from class_files import names
        self.assertEqual((GRADING / "class_files").resolve(), (GRADING.parent / "plots" / "class_files").resolve())
        self.assertEqual(Path(names.__file__).resolve().parent, (GRADING.parent / "plots" / "class_files").resolve())


if __name__ == "__main__":
    unittest.main()
