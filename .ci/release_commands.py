#!/usr/bin/env python3
"""CI: every command the release's texts quote works in a release. Finds each command of the
release's Markdown (grading/grader_tests/quoted_commands.py: shell blocks and `inline` commands)
and checks, on this machine, as much of it as runs without a GPU:

- `bash tools/test.sh [PRESET [ARGS]]`: the preset resolves in the release (tools/test.sh
  --dry-run); with CTest arguments, `ctest --preset PRESET ARGS -N` selects at least one test;
- `ctest ...`: with -N, it selects at least one test (run in build/student without --preset);
- `cmake --preset/--build --preset/--workflow --preset P`: P is a preset of that kind there;
  `-DNAME=VALUE`, alone or in such a command: the student preset configures with it, in a scratch
  tree, and CMake uses the variable;
- `build/student/...` and a bare `reduction_bench`: the program is an output of the release's
  student build (built here if it is not yet); every --option is in its --help; a benchmark command
  without placeholders passes `--dry-run`; the lab test runner lists a test for its filter;
- `python3 SCRIPT ...`, `bash SCRIPT ...`: the script is in the release, its --help works and
  names every --option; `python3 -m unittest` folders exist; `$EDITOR FILE`: FILE exists;
- `nvcc ...`: runs (when nvcc is here); `compute-sanitizer [--tool T] PROGRAM ...`: PROGRAM as
  above; `ncu`, and compute-sanitizer named without a program, are tools of the CUDA Toolkit.
What a GPU adds (the timings, the sanitizer and profiler runs themselves) is listed at the end.

    python3 .ci/release_commands.py [--release DIR]   # default: a fresh release (--no-modules)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP_CODE = json.loads((REPO / "grading" / "contract.json").read_text(encoding="utf-8"))["skip_code"]
sys.path.insert(0, str(REPO / "grading"))

from grader_tests.quoted_commands import Quoted, placeholders, quoted_commands  # noqa: E402

BUILD = "build/student"
BARE_PROGRAMS = {"reduction_bench": "common/bench/reduction_bench",
                 "reduction_variance_demo": "common/bench/reduction_variance_demo"}
# Shell scripts whose --help only prints (plot.sh passes it to an argparse program); Python
# scripts (argparse) all have one.
HELPFUL_SCRIPTS = {"tools/plot.sh"}
# Options whose value is a file or folder the command writes, not one it reads.
OUTPUT_OPTIONS = {"--out", "--csv", "--json", "-o"}
# Options of compute-sanitizer and ncu that take a value (`--tool racecheck`).
TOOL_VALUE_OPTIONS = {"--tool", "--section", "--print-limit", "--error-exitcode", "--kernel-name", "--metrics"}
NEEDS_GPU = {"reduction_bench": "the timing itself (a GPU lab, CUB and the read roof)",
             "profile_lab.py": "Nsight Compute on a GPU", "compute-sanitizer": "the sanitizer run on a GPU",
             "ncu": "Nsight Compute on a GPU", "grade.py": "the graded run (GPU labs need a GPU)"}


@dataclass
class Verdict:
    quoted: Quoted
    problem: str = ""       # empty: works as far as this machine can tell
    remains: str = ""       # what only a GPU machine (or a tool not installed here) can check


class Release:
    """A release folder, its student build (configured once) and what was learned of it."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.presets = json.loads((self.root / "CMakePresets.json").read_text(encoding="utf-8"))
        self.helps: dict[str, subprocess.CompletedProcess] = {}
        self.built = False   # whether this check has run the student build (once at most)

    def run(self, command: list[str], cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
        return subprocess.run(command, cwd=cwd or self.root, capture_output=True, text=True, timeout=timeout)

    def preset_names(self, kind: str) -> set[str]:
        return {p["name"] for p in self.presets.get(kind, []) if not p.get("hidden")}

    def configure(self) -> str:
        if (self.root / BUILD / "CMakeCache.txt").is_file():
            return ""
        done = self.run(["cmake", "--preset", "student"])
        return "" if done.returncode == 0 else "cmake --preset student failed:\n" + done.stdout[-1500:] + done.stderr[-1500:]

    def build_output(self, relative: str) -> str:
        """The problem with BUILD/relative, or "" when the student build makes it. The first call
        brings the whole student tree up to date (a no-op after ci.release_run's README commands)."""
        if not self.built:
            self.built = True
            done = self.run(["cmake", "--build", BUILD], timeout=3600)
            if done.returncode != 0:
                return f"the release's student build fails: {(done.stdout + done.stderr)[-600:].strip()}"
        return "" if (self.root / relative).exists() else f"{relative} is no output of the release's student build"

    def help_text(self, program: list[str]) -> subprocess.CompletedProcess:
        key = " ".join(program)
        if key not in self.helps:
            self.helps[key] = self.run([*program, "--help"], timeout=120)
        return self.helps[key]


def options_of(words: list[str]) -> list[str]:
    return sorted({word.split("=", 1)[0] for word in words if word.startswith("--")})


def unknown_options(release: Release, program: list[str], words: list[str]) -> str:
    shown = release.help_text(program)
    if shown.returncode != 0 and "no Python 3 with matplotlib" in shown.stderr:
        return ""  # tools/plot.sh on a machine without matplotlib: the script is there, its options unread
    if shown.returncode != 0:
        return f"`{' '.join(program)} --help` exits {shown.returncode}: {(shown.stdout + shown.stderr)[-300:]}"
    text = shown.stdout + shown.stderr
    missing = [option for option in options_of(words)
               if option != "--help" and not re.search(re.escape(option) + r"\b", text)]
    return f"{', '.join(missing)}: not an option of {' '.join(program)} (see its --help)" if missing else ""


def selects_tests(release: Release, command: list[str], cwd: Path) -> str:
    done = release.run([*command, "-N"], cwd=cwd)
    found = re.search(r"^Total Tests: (\d+)$", done.stdout, re.MULTILINE)
    if done.returncode != 0 or found is None or int(found.group(1)) == 0:
        return (f"`{' '.join(command)} -N` selects no test: exit {done.returncode}, "
                f"{found.group(0) if found else 'no test list'} {done.stderr[-300:].strip()}")
    return ""


def configures_with(release: Release, definitions: list[str]) -> str:
    with tempfile.TemporaryDirectory(prefix="configure-", dir=release.root) as scratch:
        done = release.run(["cmake", "--preset", "student", "-B", scratch, *definitions], timeout=900)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        error = re.search(r"CMake Error.*?\n(?:.*\S.*\n){0,2}", output)
        return (f"the student preset does not configure with {' '.join(definitions)}: "
                f"{' '.join((error.group(0) if error else output[-400:]).split())}")
    if "Manually-specified variables were not used" in output:
        return f"CMake does not use {' '.join(definitions)} in the release (a name that no CMakeLists.txt reads)"
    return ""


def check_test_sh(release: Release, words: list[str]) -> str:
    done = release.run(["bash", "tools/test.sh", "--dry-run", *words])
    if done.returncode != 0:
        return f"`bash tools/test.sh {' '.join(words)}`: {done.stderr.strip() or done.stdout.strip()}"
    if "ctest --preset" in done.stdout and not placeholders(words):  # a test preset: its tests
        return selects_tests(release, ["ctest", "--preset", *words], release.root)
    return ""


def check_cmake(release: Release, words: list[str]) -> str:
    kinds = {"--build": "buildPresets", "--workflow": "workflowPresets"}
    kind = kinds.get(words[0], "configurePresets")
    if "--preset" in words:
        name = words[words.index("--preset") + 1]
        if name not in release.preset_names(kind):
            return f"no {kind[:-7]} preset `{name}` in the release's CMakePresets.json ({', '.join(sorted(release.preset_names(kind)))})"
    definitions = [word for word in words if word.startswith("-D")]
    return configures_with(release, definitions) if definitions else ""


def check_build_program(release: Release, words: list[str]) -> str:
    relative = f"{BUILD}/{BARE_PROGRAMS[words[0]]}" if words[0] in BARE_PROGRAMS else words[0]
    if not relative.startswith(BUILD + "/"):
        return f"{relative}: not in the release's student build ({BUILD}/)"
    if placeholders([relative]):
        return f"{relative}: a path with a placeholder, not a program"
    problem = release.build_output(relative)
    if problem or len(words) == 1:
        return problem
    name = Path(relative).name
    if name == "reduction_lab_tests":
        for word in words[1:]:
            if word.startswith("--lab=") and (problem := release.build_output(word.split("=", 1)[1])):
                return problem
        done = release.run([relative, *words[1:], "--gtest_list_tests"])
        listed = [line for line in done.stdout.splitlines() if line.startswith("  ")]
        return "" if done.returncode in (0, SKIP_CODE) and listed else f"`{' '.join(words)}` runs no test: {done.stdout[-300:]}"
    problem = unknown_options(release, [relative], words[1:])
    if not problem and name == "reduction_bench" and not placeholders(words):
        done = release.run([relative, *words[1:], "--dry-run"])
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        problem = "" if done.returncode == 0 else f"--dry-run: {' '.join(errors) or done.stdout[-400:].strip()}"
    return problem


def check_script(release: Release, words: list[str]) -> str:
    interpreter, args = words[0], words[1:]
    if interpreter == "python3" and args[:1] == ["-m"]:
        folders = [args[i + 1] for i, word in enumerate(args[:-1]) if word in ("-s", "-t")]
        missing = [folder for folder in folders if not (release.root / folder).is_dir()]
        return f"{', '.join(missing)}: no such folder in the release" if missing else ""
    if not args or not (release.root / args[0]).is_file():
        return f"{args[0] if args else interpreter}: no such script in the release"
    if len(args) == 1:
        return ""  # the script named: it is there
    if interpreter == "bash" and args[0] == "tools/test.sh":
        return check_test_sh(release, args[1:])
    if interpreter == "bash" and args[0] not in HELPFUL_SCRIPTS:
        return ""  # a script with no --help of its own: running it to ask could start its work
    return unknown_options(release, [interpreter, args[0]], args[1:])


def foreign_build_trees(words: list[str]) -> str:
    """Build trees a release has no preset for (`build/solutions`), named as an input."""
    named = [word for index, word in enumerate(words)
             if word.startswith("build/") and not word.startswith(BUILD)
             and (index == 0 or words[index - 1] not in OUTPUT_OPTIONS)]
    return f"{', '.join(named)}: a build tree the release does not make (its one build is {BUILD})" if named else ""


def check_words(release: Release, words: list[str]) -> tuple[str, str]:
    """(problem, what remains for a GPU) for one simple command."""
    if problem := foreign_build_trees(words):
        return problem, ""
    if re.fullmatch(r"[\w./-]+\.(sh|py)", words[0]):  # `grading/x.sh --stages aa`: run by its interpreter
        words = ["bash" if words[0].endswith(".sh") else "python3", *words]
    first = words[0]
    remains = next((why for key, why in NEEDS_GPU.items() if any(key in Path(w).name for w in words[:2])), "")
    if first.startswith("-D"):
        return configures_with(release, words), ""
    if first in ("bash", "python3"):
        return check_script(release, words), remains
    if first == "ctest":
        cwd = release.root if {"--preset", "--test-dir"} & set(words) else release.root / BUILD
        return selects_tests(release, words, cwd), ""
    if first == "cmake":
        return check_cmake(release, words[1:]), ""
    if first == "$EDITOR":
        return ("" if (release.root / words[1]).is_file() else f"{words[1]}: no such file in the release"), ""
    if first == "nvcc":
        nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not Path(nvcc).is_file():
            return "", "nvcc is not installed here"
        done = release.run([nvcc, *words[1:]], timeout=900)
        return ("" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-500:]}"), ""
    if first in ("compute-sanitizer", "ncu"):
        rest = words[1:]
        while rest and rest[0].startswith("-"):  # the tool's own options, then the program it runs
            rest = rest[2:] if rest[0] in TOOL_VALUE_OPTIONS else rest[1:]
        return (check_build_program(release, rest) if rest else ""), remains or f"{first} is a CUDA Toolkit tool"
    if first.startswith("build/") or first in BARE_PROGRAMS:
        return check_build_program(release, words), remains
    return f"`{first}`: not a command this check knows", ""


def check(release: Release, quoted: Quoted) -> Verdict:
    verdict = Verdict(quoted)
    try:
        words = shlex.split(quoted.text)
    except ValueError as exc:
        verdict.problem = f"does not parse as a shell command ({exc})"
        return verdict
    parts, current = [], []
    for word in words + ["&&"]:
        if word == "&&":
            parts.append(current)
            current = []
        else:
            current.append(word)
    for part in filter(None, parts):
        problem, remains = check_words(release, part)
        verdict.problem = verdict.problem or problem
        verdict.remains = verdict.remains or remains
    return verdict


def check_release(root: Path, log=print) -> list[Verdict]:
    """Checks every quoted command of the release at root; logs one line per command."""
    release = Release(root)
    problem = release.configure()
    if problem:
        raise RuntimeError(problem)
    verdicts = []
    for quoted in quoted_commands(root):
        verdict = check(release, quoted)
        verdicts.append(verdict)
        state = f"BROKEN: {verdict.problem}" if verdict.problem else "ok" + (f" (a GPU adds: {verdict.remains})"
                                                                            if verdict.remains else "")
        log(f"release_commands: {quoted.where()}: `{quoted.text}`: {state}", flush=True)
    return verdicts


def report(verdicts: list[Verdict], prefix: str) -> int:
    """Prints the broken commands again, last, and a count; returns the exit status (1: broken)."""
    broken = [v for v in verdicts if v.problem]
    for verdict in broken:
        print(f"{prefix}: BROKEN {verdict.quoted.where()}: `{verdict.quoted.text}`: {verdict.problem}")
    remaining = [v for v in verdicts if v.remains and not v.problem]
    print(f"{prefix}: {len(verdicts)} quoted commands: {len(broken)} broken, {len(verdicts) - len(broken)} work "
          f"in the release as far as a machine without a GPU can tell; {len(remaining)} of them need a GPU (or a "
          "CUDA Toolkit tool) for the rest: the timings, the sanitizer and the profiler runs", flush=True)
    return 1 if broken else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", type=Path, help="a release folder to check (default: a fresh one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reduction-release-") as tmp:
        root = args.release
        if root is None:
            root = Path(tmp) / "release"
            subprocess.run([sys.executable, str(REPO / "grading" / "release.py"), "--no-modules", "--out", str(root)],
                           check=True)
        return report(check_release(root), "release_commands")


if __name__ == "__main__":
    sys.exit(main())
