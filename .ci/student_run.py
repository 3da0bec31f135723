#!/usr/bin/env python3
"""CI: a student who solved every lab gets a clean test run. Copies the tracked files of this
repository (git ls-files) to a temporary folder, puts each solution's STUDENT CODE region into
the skeleton under labs/ (the way a student's file looks), and runs the student workflow there
(configure, build, ctest --preset student). It must pass 100%; GPU tests skip without a GPU.

    python3 .ci/student_run.py [--keep DIR]
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "grading"))

from grader.submission import split_regions  # noqa: E402


def copy_tracked(repo: Path, target: Path) -> None:
    """The tracked files as they are in the working tree (what a commit of them would hold)."""
    names = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in names.decode().split("\0"):
        source = repo / name
        if name and source.is_file():   # a tracked file deleted in the working tree is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def solve_labs(tree: Path) -> list[str]:
    """Each labs/ file with its solution's student region; returns the files it filled."""
    filled = []
    for solution in sorted((tree / "solutions").glob("*/*")):
        skeleton = tree / "labs" / solution.relative_to(tree / "solutions")
        if not skeleton.is_file():
            continue
        parts = split_regions(skeleton.read_text(encoding="utf-8"), str(skeleton))
        region = split_regions(solution.read_text(encoding="utf-8"), str(solution)).region
        skeleton.write_text(parts.before + region + parts.after, encoding="utf-8")
        filled.append(skeleton.relative_to(tree).as_posix())
    return filled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in DIR (kept) instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reduction-solved-") as tmp:
        tree = args.keep or Path(tmp)
        tree.mkdir(parents=True, exist_ok=True)
        copy_tracked(REPO, tree)
        filled = solve_labs(tree)
        if not filled:
            print("student_run: no lab to fill (no solutions/ here)", file=sys.stderr)
            return 1
        print(f"student_run: {len(filled)} labs filled with the solutions' regions in {tree}", flush=True)
        status = subprocess.run(["cmake", "--workflow", "--preset", "student"], cwd=tree).returncode
        print(f"student_run: the student workflow on solved labs {'passed' if status == 0 else 'FAILED'}")
        return status


if __name__ == "__main__":
    sys.exit(main())
