#!/usr/bin/env python3
"""grade.py with the simulated toolchain of the grader tests (helpers.FakeToolchain: no nvcc, no GPU,
the example class's planned outcomes), for the tests whose grader runs in other processes: the
workers of --gpus, the tasks of a Slurm array, and the --slurm submitter itself. Same arguments as
grade.py; --build-dir is only a folder name here (the manifest is the fake one).

When SIMULATED_GRADE_LOG names a folder, each grading process writes there which students it
compiled (with its Slurm job and array task), so a test sees who graded whom without reading the
grader's progress lines."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # grading/

from grader import cli
from grader.run import job  # noqa: E402
from grader.contract import JOB_OPTION  # noqa: E402
from grader_tests.helpers import FakeToolchain, expected_class, fake_manifest  # noqa: E402


def record_calls(toolchain: FakeToolchain, argv: list[str], folder: str) -> None:
    graded = sorted({call[1] for call in toolchain.calls if call[0] == "compile"})
    merge = "--merge" in argv or (JOB_OPTION in argv and job.load(Path(argv[argv.index(JOB_OPTION) + 1])).merge)
    entry = {"argv": argv, "task": os.environ.get("SLURM_ARRAY_TASK_ID", ""), "job": os.environ.get("SLURM_JOB_ID", ""),
             "graded": graded, "merge": merge}
    (Path(folder) / f"{entry['job'] or 'local'}-{os.getpid()}.json").write_text(json.dumps(entry), encoding="utf-8")


def build_dir(argv: list[str]) -> str:
    """The --build-dir of the command line, or of the job file a --gpus worker gets."""
    if JOB_OPTION in argv:
        return job.load(Path(argv[argv.index(JOB_OPTION) + 1])).build_dir
    return argv[argv.index("--build-dir") + 1] if "--build-dir" in argv else "build"


def main(argv: list[str]) -> int:
    build = build_dir(argv)
    manifest = fake_manifest(Path(build))
    if "--slurm" in argv:
        from grader.run import slurm
        return slurm.main(argv, manifest=manifest)
    if "--gpus" in argv or any(a.startswith("--gpus=") for a in argv):
        return cli.main(argv, manifest=manifest, worker_command=[sys.executable, __file__])
    toolchain = FakeToolchain(expected_class()["students"])
    try:
        return cli.main(argv, toolchain=toolchain, manifest=manifest)
    finally:
        if os.environ.get("SIMULATED_GRADE_LOG"):
            record_calls(toolchain, argv, os.environ["SIMULATED_GRADE_LOG"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
