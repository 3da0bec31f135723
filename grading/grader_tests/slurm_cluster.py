"""The checks of slurm_cluster.sh, run once its Slurm is up (SLURM_CONF set): grade.py --slurm grades
the example class on the simulated toolchain (simulated_grade.py) as a 3-task array and a merge.

1. The same class graded in one process with the same seed gives the same files, CSV columns,
   gradebook, timings, JUnit outcomes and per-lab verdicts and points; each task graded exactly
   its shard (positions i % 3 == k), every student once.
2. A GPU request on this node without GPUs is refused at submission: a clear error, nothing queued.
3. Resume: one student's record deleted, the same command grades only that student (one task)
   and leaves the other records untouched; with everything complete it only merges.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader_tests.helpers import expected_class, write_example_class  # noqa: E402

HERE = Path(__file__).resolve().parent
WRAPPER = HERE / "simulated_grade.py"
SEED = 4242
TASKS = 3
FAILURES: list[str] = []


def check(condition: bool, what: str) -> None:
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def run(argv: list[str], calls: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if calls is not None:
        calls.mkdir(parents=True, exist_ok=True)
        env["SIMULATED_GRADE_LOG"] = str(calls)
    started = time.monotonic()
    try:
        completed = subprocess.run([sys.executable, str(WRAPPER), *argv], capture_output=True, text=True, env=env,
                                   timeout=timeout)
    except subprocess.TimeoutExpired as exc:  # e.g. jobs that never start: fail the checks, not the script
        partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        completed = subprocess.CompletedProcess(exc.cmd, 124, partial, f"timed out after {timeout} s")
    print(f"$ grade {shlex.join(argv)}  -> {completed.returncode} in {time.monotonic() - started:.1f} s")
    tail = (completed.stdout + completed.stderr).strip().splitlines()[-8:]  # the summary, not every lab
    print("".join(f"  {line}\n" for line in tail), end="", flush=True)
    return completed


def graded_by_job(calls: Path) -> list[dict]:
    """What each process of a Slurm job compiled (simulated_grade.py writes one file per process)."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(calls.glob("*.json"))
            if json.loads(path.read_text(encoding="utf-8"))["job"]]


def files(out: Path) -> set[str]:
    """The outputs a one-process grading writes too (the merge adds plots/, checked on their own)."""
    skip = ("work/", "slurm/", ".grader-key", "plots/")
    return {str(path.relative_to(out)) for path in out.rglob("*")
            if path.is_file() and not str(path.relative_to(out)).startswith(skip)}


def read_csv(path: Path, drop: tuple[str, ...] = ()) -> tuple[list[str], list[dict]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = [{k: v for k, v in row.items() if k not in drop} for row in reader]
        return list(reader.fieldnames or []), rows


def lab_results(out: Path, student: str) -> dict:
    data = json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
    return {folder: (lab["verdict"], lab["score"]["correctness"], lab["score"]["performance"])
            for folder, lab in data["labs"].items()}


def junit_outcomes(out: Path) -> list[tuple]:
    root = ET.parse(out / "junit.xml").getroot()
    return sorted((case.get("classname"), case.get("name"), tuple(sorted(child.tag for child in case)))
                  for case in root.iter("testcase"))


def compare(single: Path, sharded: Path, roster: list[str], label: str) -> None:
    check(files(single) == files(sharded), f"{label}: the same output files as one process "
          f"(only in one: {sorted(files(single) ^ files(sharded))})")
    if not files(single) <= files(sharded):
        return
    for name, drop in (("gradebook.csv", ()), ("timings.csv", ("date",))):
        one, many = read_csv(single / name, drop), read_csv(sharded / name, drop)
        check(one[0] == many[0], f"{label}: {name} has the same columns")
        check(one[1] == many[1], f"{label}: {name} has the same rows")
    check(junit_outcomes(single) == junit_outcomes(sharded), f"{label}: junit.xml has the same cases and outcomes")
    drawn = sorted(path.name for path in (sharded / "plots").glob("*.png"))
    if importlib.util.find_spec("matplotlib"):  # the jobs run this Python (--grade-command)
        check("by_lab.png" in drawn and all(f"student_{name}.png" in drawn for name in roster),
              f"{label}: the merge drew the plots, one per student among them ({len(drawn)} PNG)")
    else:
        print(f"      {label}: no plots to check: matplotlib is not installed for {sys.executable}")
    for student in roster:
        check(lab_results(single, student) == lab_results(sharded, student),
              f"{label}: {student}: the same verdict and points per lab")


def show_logs(logs: Path) -> None:
    for log in sorted(logs.glob("*.out")):
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        print(f"---- {log.name}, last lines:\n" + "\n".join(lines[-6:]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, required=True)
    work = parser.parse_args().work
    work.mkdir(parents=True)
    submissions = write_example_class(work / "class")
    roster = sorted(expected_class()["students"])
    build, single, sharded = work / "build", work / "single", work / "sharded"
    grade_command = shlex.join([sys.executable, str(WRAPPER)])
    slurm = ["--slurm", str(submissions), "--build-dir", str(build), "--out", str(sharded), "--tasks", str(TASKS),
             "--seed", str(SEED), "--gpus-per-task", "0", "--cpus-per-task", "1", "--time", "00:05:00",
             "--grade-command", grade_command, "--wait"]

    print("== one process (the reference)")
    reference = run([str(submissions), "--build-dir", str(build), "--out", str(single), "--seed", str(SEED),
                     "--no-build"])
    check(reference.returncode == 0, "the one-process grading succeeds")

    first_submission(work, slurm, single, sharded, roster)
    resume_after_a_lost_record(work, slurm, single, sharded, roster)

    print("== everything complete: only the merge")
    third = run(slurm, work / "calls-3")
    check(third.returncode == 0 and "only the merge" in third.stdout, "only the merge is submitted")
    entries = graded_by_job(work / "calls-3")
    check(len(entries) == 1 and entries[0]["merge"] and not entries[0]["graded"],
          "one job ran, the merge, and it graded nobody")

    if FAILURES:
        show_logs(sharded / "slurm" / "logs")
    print(f"\n{'FAILED: ' + str(len(FAILURES)) + ' check(s)' if FAILURES else 'all checks passed'}")
    return 1 if FAILURES else 0


def first_submission(work: Path, slurm: list[str], single: Path, sharded: Path, roster: list[str]) -> None:
    print(f"== grade.py --slurm: {TASKS} tasks and a merge")
    started = time.monotonic()
    first = run(slurm, work / "calls-1")
    check(first.returncode == 0, "the merge job ends with status 0: every student complete")
    check(f"{TASKS} task(s)" in first.stdout, f"the array has {TASKS} tasks")
    jobs = graded_by_job(work / "calls-1")
    tasks = {entry["task"]: entry["graded"] for entry in jobs if entry["task"]}
    check(sorted(tasks) == [str(k) for k in range(TASKS)], f"one run per array task (tasks {sorted(tasks)})")
    for task, graded in tasks.items():
        shard = [name for i, name in enumerate(roster) if i % TASKS == int(task)]
        check(graded == shard, f"task {task} graded its shard {shard} (it graded {graded})")
    check(sorted(s for graded in tasks.values() for s in graded) == roster, "every student graded once")
    check(any(entry["merge"] and not entry["task"] for entry in jobs), "the merge job ran")
    compare(single, sharded, roster, "sharded")
    print(f"   (submission to merged outputs: {time.monotonic() - started:.1f} s)")


def resume_after_a_lost_record(work: Path, slurm: list[str], single: Path, sharded: Path, roster: list[str]) -> None:
    victim = roster[3]
    print(f"== a GPU request on a node without GPUs; then resume after deleting {victim}'s record")
    (sharded / "students" / f"{victim}.json").unlink()
    shutil.rmtree(sharded / "plots", ignore_errors=True)  # the resumed merge must draw them again
    kept = {name: (sharded / "students" / f"{name}.json").read_bytes() for name in roster if name != victim}
    gpu = run([*slurm[:-1], "--gpus-per-task", "1"], work / "calls-gpu")
    check(gpu.returncode == 2 and "sbatch refused" in gpu.stderr, "sbatch refuses --gpus-per-task here: status 2")
    check("--gpus-per-task=1" in (sharded / "slurm" / "grade.sbatch").read_text(encoding="utf-8"),
          "the script asked for the GPU")
    queue = subprocess.run(["squeue", "--noheader", "--me"], capture_output=True, text=True).stdout.strip()
    check(queue == "", f"nothing is left queued ({queue!r})")
    second = run(slurm, work / "calls-2")
    check(second.returncode == 0, "the resumed submission ends complete")
    check("gpus" not in (sharded / "slurm" / "grade.sbatch").read_text(encoding="utf-8"),
          "no GPU request unless asked")
    check("1 task(s)" in second.stdout, "the array is sized down to one task")
    graded = [entry["graded"] for entry in graded_by_job(work / "calls-2") if entry["task"]]
    check(graded == [[victim]], f"only {victim} is graded again ({graded})")
    check(all((sharded / "students" / f"{name}.json").read_bytes() == data for name, data in kept.items()),
          "the other students' records are untouched")
    compare(single, sharded, roster, "resumed")


if __name__ == "__main__":
    sys.exit(main())
