#!/usr/bin/env python3
"""Grading throughput benchmark (issue 12): how fast grade.py grades a class, and whether grading
many students at once changes anything a student gets.

    python3 grading/tools/bench_throughput.py --build-dir build/solutions [--out DIR] [--students 60]
        [--class-seed 1] [--seed 20261122] [--solo 4] [--multi all] [--labs 01,02] [--no-sanitizer]

It writes the synthetic class (examples/make_examples.py --class synthetic) into OUT/class, then
grades it, every run into a fresh folder with the same input seed:
  (a) OUT/one-gpu:  grade.py --gpus <first GPU>        one GPU (one worker)
  (a') OUT/one-gpu-also: the same with --also-policy's policy, right after (a): two policies
      compared on one machine (e.g. [tests] together on and off)
  (b) OUT/multi:    grade.py --gpus all (or --multi)   only when the host has more than one GPU
  (c) OUT/solo/<s>: grade.py --student <s>, one at a time, without --gpus: a few students graded
      alone, the way grade.py always graded, to compare with (a) and (b)
and prints a table: wall seconds, seconds per student, the speedup of (b) over (a); verdict and
correctness-point mismatches against the class's expected_verdicts.json and against the solo
runs; the largest |ratio - solo ratio| / solo ratio per lab. The issue's targets (at most 8 s per
full student on one H200, at least 1.8x on two, ratios within 3% of a solo run) are PASS/FAIL lines,
never assertions. OUT/summary.json and OUT/summary.md keep all of it.

Without a GPU every GPU lab is NOT_RUN (the expected verdicts are then the ones a machine without
a GPU must give) and the times measure compiling and lab 01 only: the summary says so, and the
throughput targets are "not measured". Exit status: 0 when every verdict and correctness point is
as expected and as in the solo runs, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

GRADING = Path(__file__).resolve().parents[1]
REPO = GRADING.parent
sys.path.insert(0, str(GRADING))

from grader.run import job as jobs  # noqa: E402
from grader.contract import JOB_OPTION  # noqa: E402
from grader.outputs.record_store import observed  # noqa: E402
from grader.outputs.records import StudentRecord  # noqa: E402
from tools.stage_breakdown import breakdowns, lines as breakdown_lines  # noqa: E402
from tools.throughput_summary import Mismatch, Run, Summary, judge, report, write_summary  # noqa: E402
from grader.outputs.student_paths import record_path, student_file_name  # noqa: E402

GRADE = GRADING / "grade.py"
MARKER = ".bench-throughput"          # OUT holds a benchmark this script wrote (it may be emptied)


def _script(name: str):
    """An examples/ script as a module (they are scripts, not a package)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "examples" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


# ---------------------------------------------------------------------------------------------
# Comparing gradings


def load_records(out: Path) -> dict[str, StudentRecord]:
    """The complete records of a grading folder, as an observer reads them (record_store.observed)."""
    return observed(out)


def expected_mismatches(run: str, expected: dict, out: Path, names: list[str], labs: list[str],
                        no_gpu: bool) -> list[Mismatch]:
    """Every lab whose verdict or points are not one expected_verdicts.json accepts (check_class's
    rules; without a GPU its `without_gpu` outcomes), and every student without a complete record."""
    checker = _script("check_class")
    complete = load_records(out)
    found = []
    for name in names:
        if name not in complete:
            found.append(Mismatch(run, name, "no complete record"))
            continue
        row = {folder: entry for folder, entry in expected["students"][name].items() if folder in labs}
        record = checker.read_record(record_path(out, name))
        for check in checker.check_student(name, row, record, no_gpu):
            if not check.ok:
                found.append(Mismatch(run, name, f"{check.what}: {check.detail}"))
    return found


def solo_comparison(run: str, graded: dict[str, StudentRecord], solo: dict[str, StudentRecord]
                    ) -> tuple[list[Mismatch], list[Mismatch], dict[str, float]]:
    """(verdict or correctness-point mismatches, performance-point differences, the largest relative
    ratio difference per lab) of `graded` against the students graded alone."""
    mismatches, performance, deviation = [], [], {}
    for name, alone in sorted(solo.items()):
        record = graded.get(name)
        if record is None:
            mismatches.append(Mismatch(run, name, "graded alone but not in this run"))
            continue
        for folder, lab in alone.labs.items():
            other = record.labs.get(folder)
            if other is None or other.verdict != lab.verdict:
                mismatches.append(Mismatch(run, name, f"{folder}: {other.verdict if other else 'no entry'}, "
                                                      f"alone {lab.verdict}"))
                continue
            if other.score.correctness != lab.score.correctness:
                mismatches.append(Mismatch(run, name, f"{folder}: correctness {other.score.correctness}, "
                                                      f"alone {lab.score.correctness}"))
            if other.score.performance != lab.score.performance:
                performance.append(Mismatch(run, name, f"{folder}: performance {other.score.performance}, alone "
                                                       f"{lab.score.performance} (ratio {other.benchmark.ratio}, "
                                                       f"alone {lab.benchmark.ratio})"))
            if other.benchmark.ratio is not None and lab.benchmark.ratio:
                change = abs(other.benchmark.ratio - lab.benchmark.ratio) / lab.benchmark.ratio
                deviation[folder] = max(deviation.get(folder, 0.0), round(change, 4))
    return mismatches, performance, deviation


# ---------------------------------------------------------------------------------------------
# Running grade.py


def detect_gpus() -> list[str]:
    """'index: name' of each GPU nvidia-smi lists; none without a driver."""
    try:
        result = subprocess.run(["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:
        return []
    return [line.strip().replace(", ", ": ", 1) for line in result.stdout.splitlines() if line.strip()]


def grade_command(python: str, job: jobs.GradingJob, folder: Path, name: str, *launcher: str) -> list[str]:
    """grade.py on `job`, written as FOLDER/NAME.json (the GradingJob every run of it reads)."""
    return [python, str(GRADE), JOB_OPTION, str(job.write(folder / f"{name}.json")), *launcher]


def run_grade(run: Run, log, env=None) -> Run:
    log(f"\n== {run.name}: {' '.join(run.command)}")
    started = time.monotonic()
    Path(run.out).parent.mkdir(parents=True, exist_ok=True)
    with open(Path(run.out).parent / f"{Path(run.out).name}.log", "w", encoding="utf-8") as output:
        result = subprocess.run(run.command, stdout=output, stderr=subprocess.STDOUT, env=env)
    run.wall_s, run.returncode = round(time.monotonic() - started, 2), result.returncode
    log(f"   {run.wall_s:.1f} s, exit status {run.returncode} (output: {run.out}.log)")
    return run


def pick_solo(expected: dict, count: int) -> list[str]:
    """`count` students that cover as many kinds of lab as they can (the first of each kind first)."""
    remaining = dict(expected["students"])
    chosen, seen = [], set()
    while remaining and len(chosen) < count:
        def new_kinds(name):
            return len({entry.get("kind") for entry in remaining[name].values()} - seen)
        best = max(remaining, key=lambda name: (new_kinds(name), -list(expected["students"]).index(name)))
        seen |= {entry.get("kind") for entry in remaining.pop(best).values()}
        chosen.append(best)
    return sorted(chosen)


def fresh(out: Path) -> None:
    """An output folder that holds nothing, or only an earlier benchmark (which is removed)."""
    if out.exists() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SystemExit(f"error: {out} is not empty and is not a benchmark folder; choose another --out")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by grading/tools/bench_throughput.py; removed by its next run\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", type=Path, required=True, help="a configured and built instructor build "
                        "(BUILD/reduction_labs.json; e.g. build/solutions)")
    parser.add_argument("--out", type=Path, help="output folder, emptied first (default: BUILD/bench-throughput)")
    parser.add_argument("--students", type=int, default=60, help="students in the synthetic class (default 60)")
    parser.add_argument("--class-seed", type=int, default=1, help="the seed that mixes the class (default 1)")
    parser.add_argument("--seed", type=int, default=20261122, help="grade.py --seed: the inputs of every run")
    parser.add_argument("--solo", type=int, default=4, help="students graded alone to compare with (default 4)")
    parser.add_argument("--multi", default="all", help="grade.py --gpus of run (b) (default all)")
    parser.add_argument("--labs", help="grade.py --labs (default: every lab)")
    parser.add_argument("--no-sanitizer", action="store_true", help="grade.py --no-sanitizer")
    parser.add_argument("--policy", type=Path, help="grade.py --policy for every run (default: grading/policy.toml)")
    parser.add_argument("--also-policy", type=Path, help="one more one-GPU class run (one-gpu-also), right after "
                        "the first, with this policy: two policies compared on one machine in one benchmark")
    return parser


def selected_labs(labs: list[str], wanted: str | None) -> list[str]:
    if not wanted:
        return labs
    items = [item.strip() for item in wanted.split(",") if item.strip()]
    return [lab for lab in labs if any(item == lab or (item.isdigit() and int(item) == int(lab[:2])) for item in items)]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.students < 1 or args.solo < 0:
        parser.error("--students must be at least 1 and --solo at least 0")
    for policy in (args.policy, args.also_policy):
        if policy is not None and not policy.is_file():
            parser.error(f"no policy file {policy}")
    build = args.build_dir.resolve()
    if not (build / "reduction_labs.json").is_file():
        parser.error(f"{build} is not a built instructor build (no reduction_labs.json): "
                     "cmake --preset solutions && cmake --build --preset solutions")
    out = (args.out or build / "bench-throughput").resolve()
    fresh(out)
    log = lambda text: print(text, flush=True)  # noqa: E731
    python, gpus = sys.executable, detect_gpus()
    expected = _script("make_examples").write_class("synthetic", out / "class", students=args.students,
                                                    seed=args.class_seed)
    names, labs = sorted(expected["students"]), selected_labs(expected["labs"], args.labs)
    no_gpu = not gpus
    summary = Summary(datetime.date.today().isoformat(), f"{platform.node()} ({os.cpu_count()} cores)", gpus, "",
                      args.class_seed, args.seed, len(names), labs, not args.no_sanitizer)
    base = jobs.GradingJob(submissions=str(out / "class"), build_dir=str(build), out="", seed=args.seed, build=False,
                           labs=args.labs.split(",") if args.labs else None, sanitizer=not args.no_sanitizer,
                           policy=str(args.policy.resolve()) if args.policy else None)
    job_folder = out / "jobs"
    first = gpus[0].split(":")[0] if gpus else "0"
    pinned = dict(os.environ, CUDA_VISIBLE_DEVICES=first) if gpus else None

    def class_run(name: str, *launcher: str, policy: Path | None = None) -> Run:
        job = jobs.replace(base, out=str(out / name), **({"policy": str(policy.resolve())} if policy else {}))
        run = run_grade(Run(name, job.out, names, grade_command(python, job, job_folder, name, *launcher)), log)
        for result in breakdowns(Path(run.out)):   # as it goes: a cut-off benchmark still says where the time went
            log("\n".join(breakdown_lines(result)))
        return run_done(summary, out, run)

    runs = {"one-gpu": class_run("one-gpu", "--gpus", first)}
    if args.also_policy:
        runs["one-gpu-also"] = class_run("one-gpu-also", "--gpus", first, policy=args.also_policy)
        summary.notes.append(f"one-gpu-also: the class again on the same GPU, with {args.also_policy.name}")
    if len(gpus) > 1:
        runs["multi"] = class_run("multi", "--gpus", args.multi)
    else:
        summary.notes.append(f"{len(gpus)} GPU(s) on this host: (b) needs more than one")
    if no_gpu:
        summary.notes.append("no GPU on this machine: every GPU lab is NOT_RUN, the times are compiling and lab 01 "
                             "only, and the throughput targets are not measured")
    solo = []
    for name in pick_solo(expected, args.solo):
        job = jobs.replace(base, out=str(out / "solo" / student_file_name(name)), students=[name])
        command = grade_command(python, job, job_folder, f"solo-{student_file_name(name)}")
        solo.append(run_done(summary, out, run_grade(Run("solo", job.out, [name], command), log, pinned)))

    def merged(run: Run) -> int:   # grade.py on the run's job with merge set: its class outputs from the records
        job = jobs.replace(base, out=run.out, merge=True)
        command = grade_command(python, job, job_folder, f"merge-{run.name}")
        return subprocess.run(command, capture_output=True, text=True).returncode

    compare(summary, runs, solo, expected, labs, no_gpu, merged)
    figures(summary, runs, solo, gpus, args.multi)
    summary.complete = True

    print()
    print("\n".join(report(summary)))
    write_summary(out, summary)
    print(f"\nsummary: {out / 'summary.json'}, {out / 'summary.md'}")
    return 1 if summary.expected_mismatches or summary.solo_mismatches else 0


def run_done(summary: Summary, out: Path, run: Run) -> Run:
    """`run` into the summary, and the summary so far written (PARTIAL): a benchmark its time limit
    cuts off still leaves the runs it finished, their seconds per student and where the time went."""
    summary.runs.append(run)
    if run.name != "solo":
        summary.seconds_per_student[run.name] = round(run.wall_s / len(run.students), 3)
        summary.breakdowns[run.name] = breakdowns(Path(run.out))
    summary.complete = False
    write_summary(out, summary)
    return run


def compare(summary: Summary, runs: dict[str, Run], solo: list[Run], expected: dict, labs: list[str], no_gpu: bool,
            merged) -> None:
    """Each run against expected_verdicts.json, its merge (`merged(run)`: the exit status), and each
    class run against the solo runs."""
    for run in summary.runs:
        if run.returncode != 0:
            summary.expected_mismatches.append(Mismatch(run.name, ",".join(run.students)[:60],
                                                        f"grade.py exit status {run.returncode}"))
        summary.expected_mismatches += expected_mismatches(run.name, expected, Path(run.out), run.students, labs, no_gpu)
    for run in runs.values():
        status = merged(run)
        if status != 0:
            summary.expected_mismatches.append(Mismatch(run.name, "", f"grade.py --merge: exit status "
                                                        f"{status} (unfinished students)"))
    alone = {}
    for run in solo:
        alone.update(load_records(Path(run.out)))
    for run in runs.values():
        mismatches, performance, deviation = solo_comparison(run.name, load_records(Path(run.out)), alone)
        summary.solo_mismatches += mismatches
        summary.performance_differences += performance
        for lab, value in deviation.items():
            summary.ratio_deviation[lab] = max(value, summary.ratio_deviation.get(lab, 0.0))


def figures(summary: Summary, runs: dict[str, Run], solo: list[Run], gpus: list[str], multi: str) -> None:
    """Seconds per student, the speedup on several GPUs, and the targets judged from them."""
    for run in summary.runs:
        if run.name != "solo":
            summary.seconds_per_student[run.name] = round(run.wall_s / len(run.students), 3)
            summary.breakdowns[run.name] = breakdowns(Path(run.out))
    if solo:
        summary.seconds_per_student["solo"] = round(sum(run.wall_s for run in solo) / len(solo), 3)
    if "multi" in runs and runs["multi"].wall_s > 0:
        summary.speedup = round(runs["one-gpu"].wall_s / runs["multi"].wall_s, 3)
    named = [record.gpu_name for record in load_records(Path(runs["one-gpu"].out)).values() if record.gpu_name]
    summary.gpu_name = named[0] if named else (gpus[0].split(": ", 1)[-1] if gpus else "no GPU")
    multi_gpus = len(gpus) if multi == "all" else len(multi.split(","))
    summary.targets = judge(summary, runs, not gpus, multi_gpus)


if __name__ == "__main__":
    sys.exit(main())
