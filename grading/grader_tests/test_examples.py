"""The example and attack classes: what examples/make_examples.py writes from the recipes, the
README tables it keeps, and the attack class's coverage (check_class.py: test_examples_check_class.py)."""

import json
import os
import tempfile
import unittest
from pathlib import Path

from grader_tests.examples_fixtures import checker, maker, written
from grader.judge.verdicts import VERDICTS as ALL_VERDICTS
from class_files.names import HASHED

VERDICTS = set(ALL_VERDICTS)
attacks = maker.attack_class


class TestExampleClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch, cls.out, cls.expected = written("example")

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def test_expected_verdicts_are_written_beside_the_students(self):
        on_disk = json.loads((self.out / maker.EXPECTED_FILE).read_text(encoding="utf-8"))
        self.assertEqual(on_disk, self.expected)
        self.assertEqual(on_disk, maker.expected_verdicts("example"))
        self.assertEqual(checker.class_students(self.out), sorted(maker.CLASS))

    def test_each_file_is_the_skeleton_with_the_recipes_region(self):
        labs = dict(maker.course_labs())
        for name, student in maker.CLASS.items():
            for folder, file in labs.items():
                path = self.out / name / ("labs" if student.layout == "labs" else "") / folder / file
                if folder in student.missing:
                    self.assertFalse(path.exists(), path)
                    continue
                text = path.read_text(encoding="utf-8")
                if folder in student.planted:
                    region = maker.planted_region(name, folder, file, student.planted[folder])
                elif folder in student.skeleton:
                    region = maker.region_of(maker.REPO / "labs" / folder / file)
                else:
                    region = maker.solution_region(folder)
                self.assertIn(region.strip(), text, f"{name}/{folder}")
            for relative in student.extra_files:
                self.assertTrue((self.out / name / relative).is_file(), f"{name}/{relative}")

    def test_the_recipes_give_the_verdicts_of_the_table(self):
        for name, student in maker.CLASS.items():
            row = self.expected["students"][name]
            for folder, planted in student.planted.items():
                self.assertEqual(row[folder]["verdict"], planted.verdict, f"{name}/{folder}")
                self.assertEqual(row[folder]["accept"][0]["verdict"], planted.verdict)
            for folder in student.missing:
                self.assertEqual(row[folder]["verdict"], "MISSING")

    def test_every_verdict_is_exercised(self):
        verdicts = {entry["verdict"] for labs in self.expected["students"].values() for entry in labs.values()}
        self.assertEqual(verdicts, {"PASSED", "WRONG_ANSWER", "RUNTIME_ERROR", "TIMEOUT", "COMPILE_ERROR", "MISSING"})

    def test_every_hand_written_region_is_used(self):
        used = {(name, folder) for name, s in maker.CLASS.items() for folder, p in s.planted.items() if p.hand_written}
        on_disk = {(p.parent.name, p.stem) for p in maker.REGIONS.glob("*/*")}
        self.assertEqual(on_disk, used)

    def test_writing_refuses_a_folder_it_did_not_write(self):
        with tempfile.TemporaryDirectory() as scratch:
            (Path(scratch) / "precious.txt").write_text("keep me\n")
            with self.assertRaises(SystemExit):
                maker.write_class("example", Path(scratch))
            self.assertTrue((Path(scratch) / "precious.txt").is_file())


class TestReadmeTables(unittest.TestCase):
    def test_the_readme_tables_are_the_ones_make_examples_writes(self):
        for path, text in maker.readme_texts().items():
            self.assertEqual(path.read_text(encoding="utf-8"), text,
                             f"{path.name} is out of date: run python3 examples/make_examples.py --readme")


class TestAttackClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch, cls.out, cls.expected = written("attacks")

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def attackers(self, kind=None):
        return {k: a for k, a in attacks.ATTACKERS.items() if a.kind != "victim" and kind in (None, a.kind)}

    def test_enough_attackers_cover_every_item(self):
        self.assertGreaterEqual(len(self.attackers()), 15)
        self.assertGreaterEqual(len(self.attackers("cpu")), 8)
        covered = {item for a in self.attackers().values() for item in a.items}
        self.assertEqual(covered, set(attacks.ATTACK_ITEMS))
        victims = [k for k, a in attacks.ATTACKERS.items() if a.kind == "victim"]
        self.assertIn("aaron", victims)
        self.assertIn("zoe", victims)
        names = sorted(a.folder or k for k, a in attacks.ATTACKERS.items())
        honest = {a.folder or k for k, a in attacks.ATTACKERS.items()
                  if all(hand_in.region == "reference" for hand_in in a.labs.values())}
        self.assertTrue(set(names[names.index("zoe") + 1:]) <= honest,
                        "a victim is graded after every attacker whose code is not the reference's")
        self.assertIn("zoe", honest)
        # A victim graded beside the attacker that holds what classmates share (students go in name order).
        for hog in ("gpuhog", "slots", "cpu_burner"):
            self.assertEqual(names[names.index(hog) + 1], f"{hog}_victim")

    def test_kind_says_whether_a_gpu_is_needed(self):
        for key, attacker in self.attackers().items():
            needs_gpu = any(not maker.decided_without_gpu(folder, {o.verdict for o in hand_in.outcomes})
                            for folder, hand_in in attacker.labs.items())
            self.assertEqual(attacker.kind, "gpu" if needs_gpu else "cpu", key)

    def test_outcomes_are_verdicts_and_points_the_policy_knows(self):
        for name, row in self.expected["students"].items():
            for folder, entry in row.items():
                for outcome in entry["accept"] + entry["without_gpu"]:
                    self.assertIn(outcome["verdict"], VERDICTS, f"{name}/{folder}")
                    if outcome["verdict"] not in ("PASSED", "NOT_RUN"):
                        self.assertEqual((outcome["correctness"], outcome["performance"]), ([0, 0], [0, 0]))
        for name in ("aaron", "zoe"):
            for folder, entry in self.expected["students"][name].items():
                self.assertEqual(len(entry["accept"]), 1, f"a victim's outcome is fixed: {name}/{folder}")

    def test_the_attacks_on_the_clock_must_be_seen(self):
        """Item 27's attackers pass their tests and must lose every performance point because the
        grader saw the attack (a flag), not because they are slow."""
        for key, attacker in self.attackers().items():
            if 27 not in attacker.items:
                continue
            for folder, hand_in in attacker.labs.items():
                passing = [o for o in hand_in.outcomes if o.verdict == "PASSED"]
                self.assertTrue(passing, f"{key}/{folder}")
                for outcome in passing:
                    self.assertEqual(outcome.performance, 0, f"{key}/{folder}")
                    self.assertTrue(set(outcome.flags) & {"time_contradicted", "time_unverified"}, f"{key}/{folder}")

    def test_every_region_file_is_handed_in_and_every_attack_has_its_file(self):
        wanted = set()
        for key, attacker in attacks.ATTACKERS.items():
            for folder, hand_in in attacker.labs.items():
                if hand_in.region in ("own", "reference+own") and not hand_in.link and not hand_in.folder_link:
                    wanted.add((key, folder))
        on_disk = {(p.parent.name, p.stem) for p in maker.ATTACK_REGIONS.glob("*/*")}
        self.assertEqual(on_disk, wanted)

    def test_each_attacker_hands_in_only_the_labs_it_attacks(self):
        labs = dict(maker.course_labs())
        for key, attacker in attacks.ATTACKERS.items():
            folder_name = attacker.folder or key
            root = self.out / folder_name
            if attacker.folder_link:
                self.assertTrue(root.is_symlink(), key)
                self.assertEqual(os.readlink(root), attacker.folder_link)
                continue
            handed = {p.name for p in (root / "labs").iterdir()} if (root / "labs").is_dir() else set()
            self.assertEqual(handed, set(attacker.labs), key)
            for folder, hand_in in attacker.labs.items():
                path = root / "labs" / folder / labs[folder]
                if hand_in.folder_link:
                    self.assertTrue((root / "labs" / folder).is_symlink())
                elif hand_in.link:
                    self.assertTrue(path.is_symlink())
                else:
                    own = maker.attack_region(key, folder, labs[folder], hand_in)
                    self.assertIn(own.strip(), path.read_text(encoding="utf-8"), f"{key}/{folder}")

    def test_hostile_names_are_written_as_they_are(self):
        for attacker in attacks.ATTACKERS.values():
            if attacker.folder and not attacker.folder_link:
                self.assertTrue((self.out / attacker.folder).is_dir(), attacker.folder)
        self.assertIn("bell\x07ding", os.listdir(self.out))
        self.assertTrue(any(HASHED in checker.student_file_name(a.folder) for a in attacks.ATTACKERS.values()
                            if a.folder), "a name too long for its %XX file name")
        litter = self.out / "litter" / "labs" / "01_host_sum"
        self.assertTrue(any("\n" in p.name for p in litter.iterdir()))
        self.assertEqual(sum(1 for _ in (self.out / "litter" / "junk").rglob("*.txt")), 2000)


if __name__ == "__main__":
    unittest.main()
