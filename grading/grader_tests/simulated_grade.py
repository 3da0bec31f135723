#!/usr/bin/env python3
"""grade.py on the simulated toolchain (helpers.FakeToolchain, no nvcc, no GPU) for the example class:
what the Slurm test's jobs run (--grade-command), and its own --slurm submitter.

The build folder is only a name (helpers.fake_manifest). When SIMULATED_GRADE_LOG names a folder,
each run writes there which students it compiled, so the test sees which task graded whom without
reading the grader's progress lines.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader_tests.helpers import FakeToolchain, expected_class, fake_manifest  # noqa: E402


def build_dir(argv: list[str]) -> Path:
    for index, arg in enumerate(argv):
        if arg == "--build-dir" and index + 1 < len(argv):
            return Path(argv[index + 1])
        if arg.startswith("--build-dir="):
            return Path(arg.split("=", 1)[1])
    return Path("unused")


def main(argv: list[str]) -> int:
    manifest = fake_manifest(build_dir(argv))
    if "--slurm" in argv:
        from grader import slurm
        return slurm.main(argv, manifest=manifest)
    from grader import cli
    toolchain = FakeToolchain(expected_class()["students"])
    try:
        return cli.main(argv, toolchain=toolchain, manifest=manifest)
    finally:
        log = os.environ.get("SIMULATED_GRADE_LOG")
        if log:
            graded = sorted({call[1] for call in toolchain.calls if call[0] == "compile"})
            task = os.environ.get("SLURM_ARRAY_TASK_ID", "")
            entry = {"argv": argv, "task": task, "job": os.environ.get("SLURM_JOB_ID", ""), "graded": graded}
            name = f"{entry['job'] or 'local'}-{os.getpid()}.json"
            (Path(log) / name).write_text(json.dumps(entry), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
