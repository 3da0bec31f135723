"""Whether git can read a folder as a checkout: the release takes labs/ as committed (release.py),
CI copies the tracked files (.ci/student_run.py). A copy of the tree without .git, a machine
without git, or a checkout git refuses (another owner's: "dubious ownership") cannot; the tests
that need one say so and skip (grader_tests/needs_checkout.py, test_release.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def checkout_problem(repo: Path) -> str | None:
    """Why git cannot read `repo` as the top folder of a checkout with a commit here; None when it can."""
    if shutil.which("git") is None:
        return "git is not installed"
    for question in (["rev-parse", "--show-toplevel"], ["rev-parse", "--verify", "--quiet", "HEAD"]):
        try:
            answer = subprocess.run(["git", "-C", str(repo), *question], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"git could not run in {repo} ({exc})"
        if answer.returncode != 0:
            said = (answer.stderr.strip().splitlines() or ["no commit"])[-1]
            return f"{repo} is not a git checkout git can read ({said})"
        if question[1] == "--show-toplevel" and Path(answer.stdout.strip()).resolve() != Path(repo).resolve():
            return f"{repo} is not the top of a git checkout (git's top is {answer.stdout.strip()})"
    return None
