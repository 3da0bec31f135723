#!/usr/bin/env python3
"""Grade reduction-labs submissions (a class, or your own labs/ with --self). See grading/README.md."""

import faulthandler
import signal
import sys
from pathlib import Path

if sys.version_info < (3, 11):
    sys.exit("grade.py needs Python 3.11 or newer (it reads the policy with tomllib)")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grader.cli import main  # noqa: E402


def dispatch(argv: list[str]) -> int:
    """--slurm schedules the grading on a Slurm cluster (grader/run/slurm.py); anything else grades here."""
    if "--slurm" in argv:
        from grader.run import slurm
        return slurm.main(argv)
    return main(argv)


if __name__ == "__main__":
    # `kill -USR1 PID` prints every thread's stack on stderr: where a grading that seems stuck waits.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    sys.exit(dispatch(sys.argv[1:]))
