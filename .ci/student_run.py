#!/usr/bin/env python3
"""CI: a student who solved every lab gets a clean test run. Copies the tracked files of this
repository (git ls-files) to a temporary folder, puts each solution's STUDENT CODE region into
the skeleton under labs/ (the way a student's file looks), and runs the student workflow there
(configure, build, ctest --preset student). It must pass 100%; GPU tests skip without a GPU,
and its last lines say which tests did not run and why (tools/skip_summary.sh). Then every
`bash tools/test.sh student... ARGS` that the texts quote (README.md, docs/student/README.md, docs/,
labs/*/README.md) runs there with -N: it must exit 0 and select at least one test, so a lab text
cannot send a student to a preset, label or test name that does not exist.

    python3 .ci/student_run.py [--keep DIR]
"""
import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "grading"))

from grader.judge.submission import split_regions  # noqa: E402


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


# `bash tools/test.sh student-large -L lab02 -V`, in a code block or in `inline code`: the preset
# and its CTest arguments (options and their values; a comment or the closing backtick ends them).
QUOTED_TEST_COMMAND = re.compile(r"bash tools/test\.sh (student[\w-]*)((?: +-[A-Za-z]+(?: +[^\s`#-][^\s`#]*)?)+)")


def quoted_test_commands(tree: Path) -> dict[tuple[str, ...], list[str]]:
    """{(preset, *ctest arguments): the files that quote it}, for the student presets' commands
    with CTest arguments (a bare `bash tools/test.sh student` is the workflow this script ran)."""
    texts = [tree / "README.md", tree / "docs" / "student" / "README.md", *sorted(tree.glob("docs/*.md")),
             *sorted(tree.glob("labs/*/README.md"))]
    commands: dict[tuple[str, ...], list[str]] = {}
    for text in texts:
        for preset, args in QUOTED_TEST_COMMAND.findall(text.read_text(encoding="utf-8")):
            if "NN" not in args:  # `-L labNN`: a pattern for the reader, not a command
                commands.setdefault((preset, *args.split()), []).append(text.relative_to(tree).as_posix())
    return commands


def list_tests(tree: Path, command: tuple[str, ...]) -> tuple[tuple[str, ...], subprocess.CompletedProcess]:
    return command, subprocess.run(["bash", "tools/test.sh", *command, "-N"], cwd=tree, capture_output=True, text=True)


def check_quoted_test_commands(tree: Path) -> list[str]:
    """Each quoted command, listing only (-N): the problems, empty when each selects a test. The
    first runs alone (its build step brings the tree up to date); the rest find nothing to build and
    only list, so they run side by side (30 of them took 59 s one after another on an H200 host)."""
    quoted = quoted_test_commands(tree)
    commands = sorted(quoted)
    runs = [list_tests(tree, commands[0])] if commands else []
    with ThreadPoolExecutor(max_workers=8) as pool:
        runs += pool.map(lambda command: list_tests(tree, command), commands[1:])
    problems = []
    for command, run in runs:
        found = re.search(r"^Total Tests: (\d+)$", run.stdout, re.MULTILINE)
        shown = " ".join(command)
        if run.returncode != 0 or found is None or int(found.group(1)) == 0:
            problems.append(f"`bash tools/test.sh {shown}` ({', '.join(sorted(set(quoted[command])))}) selects no test: "
                            f"exit {run.returncode}, {found.group(0) if found else 'no test list'}\n"
                            + (run.stdout + run.stderr)[-1500:])
        else:
            print(f"student_run: `bash tools/test.sh {shown}` selects {found.group(1)} test(s)", flush=True)
    if not problems and not quoted:
        problems.append("no `bash tools/test.sh student... ARGS` command found in the READMEs")
    return problems


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
        log = tree / "student-workflow.log"
        began = time.monotonic()
        with open(log, "w", encoding="utf-8") as kept:
            workflow = subprocess.Popen(["cmake", "--workflow", "--preset", "student"], cwd=tree, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for line in workflow.stdout:
                print(line, end="", flush=True)
                kept.write(line)
            status = workflow.wait()
        print(f"student_run: the workflow took {time.monotonic() - began:.0f} s", flush=True)
        # "100% tests passed" counts skipped tests as passed: say what did not run, last.
        summary = subprocess.run(["bash", str(tree / "tools" / "skip_summary.sh"), str(log),
                                  str(tree / "build" / "student")], capture_output=True, text=True).stdout.strip()
        began = time.monotonic()
        problems = check_quoted_test_commands(tree) if status == 0 else []
        print(f"student_run: the quoted commands took {time.monotonic() - began:.0f} s", flush=True)
        for problem in problems:
            print(f"student_run: {problem}")
        print(f"student_run: the student workflow on solved labs {'passed' if status == 0 else 'FAILED'}; "
              f"{summary or 'no test step ran'}")
        return status or (1 if problems else 0)


if __name__ == "__main__":
    sys.exit(main())
