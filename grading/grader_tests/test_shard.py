"""grader_tests/shard.py: the N shards CTest runs (grader.unit.1 to .N) are the whole suite, each test
class in exactly one of them, whatever N."""

import unittest

from grader_tests import shard


class ShardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.suite = shard.discover()
        cls.classes = shard.test_classes(cls.suite)

    def test_the_shards_cover_every_test_once(self):
        self.assertIn(f"{__name__}.ShardTest", self.classes)
        for count in (1, 2, 6, 7):
            with self.subTest(count=count):
                shards = [shard.shard_of(self.classes, index, count) for index in range(1, count + 1)]
                names = [name for names in shards for name in names]
                self.assertEqual(sorted(names), sorted(self.classes), "every class in one shard")
                tests = sum(len(self.classes[name]) for name in names)
                self.assertEqual(tests, self.suite.countTestCases())
                sizes = [len(names) for names in shards]
                self.assertLessEqual(max(sizes) - min(sizes), 1, "classes dealt evenly")

    def test_a_class_s_tests_stay_together(self):
        names = shard.shard_of(self.classes, 1, 3)
        self.assertTrue(all(test.__class__.__qualname__ == name.rsplit(".", 1)[1]
                            for name in names for test in self.classes[name]))

    def test_a_shard_outside_one_to_n_is_refused(self):
        for index, count in ((0, 6), (7, 6), (1, 0)):
            with self.subTest(index=index, count=count), self.assertRaises(ValueError):
                shard.shard_of(self.classes, index, count)
        self.assertEqual(shard.main(["7", "6"]), 2)
        self.assertEqual(shard.main(["x"]), 2)


if __name__ == "__main__":
    unittest.main()
