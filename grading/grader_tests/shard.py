"""One shard of the grader's unit tests: `python -m grader_tests.shard K N` runs the K-th of N (1 to N).

CTest runs the N shards as tests of their own (grader.unit.K, grading/CMakeLists.txt), side by side
under `ctest -j`: the suite in one process took 220 s of a GPU machine's 294 s ctest (H200 host,
2026-11-28), the longest test of the run. A shard is every N-th test class of the suite in
unittest's own discovery order (sorted by module, then class), so that the shards cover the suite
whatever is added to it, each class whole (its setUpClass runs once, in one shard) and the classes
of one slow module spread over several shards.
"""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_classes(suite: unittest.TestSuite) -> dict[str, list[unittest.TestCase]]:
    """The suite's tests by their class ("module.Class"), in discovery order. A module that failed to
    import is a test of its own (unittest's _FailedTest) and keeps its own entry."""
    classes: dict[str, list[unittest.TestCase]] = {}
    pending = [suite]
    while pending:
        item = pending.pop(0)
        if isinstance(item, unittest.TestSuite):
            pending[0:0] = list(item)
            continue
        key = f"{type(item).__module__}.{type(item).__qualname__}"
        if type(item).__name__ == "_FailedTest":
            key = f"{key}:{item.id()}"
        classes.setdefault(key, []).append(item)
    return classes


def shard_of(classes: dict[str, list[unittest.TestCase]], index: int, count: int) -> list[str]:
    """The class names of shard `index` (1 to `count`): every count-th of them, sorted."""
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"shard {index} of {count}: want 1 <= K <= N")
    return [name for position, name in enumerate(sorted(classes)) if position % count == index - 1]


def discover() -> unittest.TestSuite:
    return unittest.TestLoader().discover(str(HERE), top_level_dir=str(HERE.parent))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not all(word.isdigit() for word in argv):
        print("usage: python -m grader_tests.shard K N   (the K-th of N shards, 1 <= K <= N)", file=sys.stderr)
        return 2
    index, count = int(argv[0]), int(argv[1])
    classes = test_classes(discover())
    try:
        names = shard_of(classes, index, count)
    except ValueError as exc:
        print(f"grader_tests.shard: {exc}", file=sys.stderr)
        return 2
    suite = unittest.TestSuite(test for name in names for test in classes[name])
    print(f"shard {index} of {count}: {len(names)} of {len(classes)} test classes, {suite.countTestCases()} tests",
          flush=True)
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
