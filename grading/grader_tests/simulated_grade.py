#!/usr/bin/env python3
"""grade.py with the simulated toolchain of the grader tests (helpers.FakeToolchain: no nvcc, no GPU,
the example class's planned outcomes), for the tests whose grader runs in other processes: the
workers of --gpus, the tasks of a Slurm array. Same arguments as grade.py; --build-dir is only a
folder name here (the manifest is the fake one)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # grading/

from grader import cli  # noqa: E402
from grader_tests.helpers import FakeToolchain, expected_class, fake_manifest  # noqa: E402


def main(argv: list[str]) -> int:
    build = argv[argv.index("--build-dir") + 1] if "--build-dir" in argv else "build"
    if "--gpus" in argv or any(a.startswith("--gpus=") for a in argv):
        return cli.main(argv, manifest=fake_manifest(Path(build)), worker_command=[sys.executable, __file__])
    return cli.main(argv, toolchain=FakeToolchain(expected_class()["students"]), manifest=fake_manifest(Path(build)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
