#!/usr/bin/env python3
"""Build the reduction-labs student distribution and check it for leaked solutions. See grading/README.md."""

import sys
from pathlib import Path

if sys.version_info < (3, 11):
    sys.exit("release.py needs Python 3.11 or newer")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from student_release.build import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
