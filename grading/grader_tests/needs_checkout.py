#!/usr/bin/env python3
"""Runs a test command that reads this source tree through git (a release, a copy of the tracked
files) where git can read it as a checkout; elsewhere prints the reason and exits with the skip code
(grading/contract.json), which CTest reports as skipped (SKIP_RETURN_CODE), instead of failing.

    python3 grading/grader_tests/needs_checkout.py COMMAND [ARG...]
"""

import subprocess
import sys
from pathlib import Path

GRADING = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(GRADING))

from student_release.checkout import checkout_problem  # noqa: E402
from grader.contract import SKIP_CODE  # noqa: E402

SKIPPED = SKIP_CODE


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    problem = checkout_problem(GRADING.parent)
    if problem:
        print(f"SKIPPED: this test reads the source tree through git, and {problem}", flush=True)
        return SKIPPED
    return subprocess.run(argv).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
