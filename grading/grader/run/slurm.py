"""grade.py --slurm: grades a class on a Slurm cluster. It only schedules; the tasks run grade.py.

It writes the grading as data, OUT/slurm/job.json (a GradingJob: the class, the build, the seed, the
labs and the options; job.py), and OUT/slurm/grade.sbatch, a job array whose task k runs
    <grade command> --job OUT/slurm/job.json --shard k/N --jobs $(nproc)
(the grading exactly as on one machine, sandbox included), and OUT/slurm/merge.sbatch, which runs
the same job with merge set (OUT/slurm/merge-job.json) once every task has ended (afterany: also
when one died), and submits both.

Resuming is running the same command again: the students whose signed record is complete are not
graded again, and the array only gets the tasks whose shards still hold unfinished students (one
task per student when there are no more of them than --tasks). When every student is complete it
only merges. The seed of the first submission is kept, so a resumed class is graded on the same
inputs, and every submission's job ids land in OUT/slurm/submitted.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import re
import secrets
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import job as jobs
from ..contract import JOB_OPTION, ExitStatus
from ..manifest import GraderError, Lab, check_programs, load_manifest
from ..outputs import signing
from ..outputs.atomic_files import write_json
from ..outputs.record_store import RecordStore
from ..paths import DEFAULT_POLICY, GRADE_PY
from ..policy import Policy
from ..settings import SlurmSettings
from .class_folder import find_students
from .launch import ClassOutcome
from .slurm_queue import check_idle, wait_for

STATE_FILE = "submitted.json"
SAFE_VALUE = re.compile(r"[A-Za-z0-9_.:,=+@/-]*")     # what goes on a #SBATCH line: no space, quote or newline
SAFE_PATH = re.compile(r"[^\s%\"'\\]+")               # Slurm expands % in --output; #SBATCH splits at spaces
JOB_FILE, MERGE_JOB_FILE = "job.json", "merge-job.json"

DESCRIPTION = """Grades a class on a Slurm cluster: writes a job array that shards the class over its tasks
(one GPU each by default) and a merge job that builds the class outputs once they end, and submits both.
Run it on a login node; SUBMISSIONS, BUILD and OUT must be on a file system the compute nodes share.
Run the same command again to resume: complete students are skipped. See docs/slurm.md.

  grade.py --slurm SUBMISSIONS --build-dir BUILD --out OUT [--tasks N] [--partition P] [--wait]
"""


OVERRIDES = ("tasks", "partition", "account", "time", "merge_time", "gpus_per_task", "cpus_per_task")


def resolve_settings(section: SlurmSettings, args: argparse.Namespace) -> SlurmSettings:
    """The policy's [slurm] section with the command line's values over it, checked for sbatch lines."""
    given = {name: getattr(args, name) for name in OVERRIDES if getattr(args, name) is not None}
    settings = dataclasses.replace(section, **given,
                                   sbatch_args=list(section.sbatch_args) + list(args.sbatch_arg or []))
    check_settings(settings)
    return settings


def check_settings(settings: SlurmSettings) -> None:
    """What the policy's checks cannot see: the command line's values, and what breaks a #SBATCH line."""
    if not (isinstance(settings.tasks, int) and settings.tasks >= 1):
        raise GraderError("slurm: tasks must be 1 or more")
    for name in ("gpus_per_task", "cpus_per_task"):
        if not (isinstance(getattr(settings, name), int) and getattr(settings, name) >= 0):
            raise GraderError(f"slurm: {name} must be 0 or more (0: not requested)")
    for name in ("partition", "account", "time", "merge_time"):
        if not (isinstance(getattr(settings, name), str) and SAFE_VALUE.fullmatch(getattr(settings, name))):
            raise GraderError(f"slurm: {name} {getattr(settings, name)!r} is not a plain Slurm value")
    for arg in settings.sbatch_args:
        if not (isinstance(arg, str) and arg.startswith("-") and "\n" not in arg and "\r" not in arg):
            raise GraderError(f"slurm: sbatch argument {arg!r} must be one option on one line, e.g. --mem=64G")


def common_lines(settings: SlurmSettings, time_limit: str) -> list[str]:
    """#SBATCH options both jobs take (GPUs are only the array's)."""
    lines = [f"--time={time_limit}"] if time_limit else []
    lines += [f"--partition={settings.partition}"] if settings.partition else []
    lines += [f"--account={settings.account}"] if settings.account else []
    return lines + settings.sbatch_args



@dataclass
class Shards:
    """Which array tasks to submit: task k grades the roster positions i with i % count == k."""
    count: int
    indices: list[int]

    def array_spec(self) -> str:
        return ",".join(str(k) for k in self.indices)


@dataclass
class Submitted:
    """OUT/slurm/submitted.json: what the last submission was (seed kept for a resume)."""
    seed: int
    date: str = ""
    array_job: str | None = None
    merge_job: str | None = None
    shards: int = 0
    tasks: list[int] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grade.py --slurm", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slurm", action="store_true", help="this mode (grade.py dispatches on it)")
    parser.add_argument("submissions", type=Path, help="folder with one folder per student")
    parser.add_argument("--build-dir", type=Path, required=True,
                        help="a built tree (the tasks run with --no-build: build it first)")
    parser.add_argument("--out", type=Path, required=True, help="output folder, shared by every task")
    group = parser.add_argument_group("sbatch options (default: the policy's [slurm] section)")
    group.add_argument("--tasks", type=int, help="array tasks, each grading 1/N of the unfinished class")
    group.add_argument("--partition", help="partition of both jobs")
    group.add_argument("--account", help="account of both jobs")
    group.add_argument("--time", help="time limit of one grading task, e.g. 04:00:00")
    group.add_argument("--merge-time", help="time limit of the merge job")
    group.add_argument("--gpus-per-task", type=int, help="GPUs of one task (0: request none; a node without "
                       "GPUs refuses a job that asks for one)")
    group.add_argument("--cpus-per-task", type=int, help="CPUs of one task: its parallel compiles (0: the "
                       "cluster's default)")
    group.add_argument("--sbatch-arg", action="append", metavar="ARG",
                       help="one more sbatch option for both jobs, e.g. --sbatch-arg=--mem=64G (repeatable)")
    # The grading options of grade.py itself (job.py); --seed defaults to the last submission's here.
    jobs.add_selection(parser.add_argument_group("grading options (the job every task reads)"))
    parser.add_argument("--grade-command", help="what the jobs run instead of grade.py (default: this Python "
                        "and grading/grade.py), e.g. a wrapper for tests")
    parser.add_argument("--dry-run", action="store_true", help="write the job scripts and print the sbatch "
                        "commands; submit nothing")
    parser.add_argument("--wait", action="store_true", help="wait for the jobs to end; exit with the merge's "
                        f"status (0: every student complete, {ExitStatus.UNFINISHED.value}: some unfinished, {ExitStatus.REFUSED.value}: complete, but a "
                        "folder of the class folder was refused)")
    return parser


def unfinished_students(out: Path, roster: list[str], labs: list[Lab], key: bytes) -> list[str]:
    """The roster students with no complete record signed by OUT's key that covers `labs` (the
    records the tasks skip and the merge uses are the same: record_store.RecordStore)."""
    done = {record.student for record in RecordStore(out, key).complete(roster)
            if all(lab.folder in record.labs for lab in labs)}
    return [name for name in roster if name not in done]


def plan_shards(roster: list[str], unfinished: list[str], tasks: int) -> Shards:
    """At most `tasks` array tasks, none without work. With no more unfinished students than
    tasks, one task each (shard count = roster size, so shard i is the student at position i);
    else `tasks` shards of the whole roster (complete students in them are skipped)."""
    positions = [roster.index(name) for name in unfinished]
    if not positions:
        return Shards(0, [])
    if len(positions) <= tasks:
        return Shards(len(roster), positions)
    return Shards(tasks, sorted({i % tasks for i in positions}))


def _checked(*paths: Path) -> list[str]:
    """The paths as text, refused when a #SBATCH line or Slurm's % patterns would misread them."""
    for path in paths:
        if not SAFE_PATH.fullmatch(str(path)):
            raise GraderError(f"{path}: a path for a Slurm job may not hold spaces, quotes, backslashes or %")
    return [str(path) for path in paths]


def _header(what: str, name: str, options: list[str]) -> str:
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    lines = ["#!/bin/bash", f"# {what}", f"# Written by grade.py --slurm on {stamp}. To resume, run that grade.py "
             "--slurm command again (not this file): it re-sizes the array to the unfinished students.",
             f"#SBATCH --job-name={name}"]
    return "\n".join(lines + [f"#SBATCH {option}" for option in options]) + "\n"


def task_script(command: list[str], job_file: Path, submissions: Path, out: Path, shards: Shards,
                settings: SlurmSettings) -> str:
    job, logs = _checked(job_file, out / "slurm" / "logs")
    options = [f"--array={shards.array_spec()}", f"--output={logs}/grade-%A_%a.out"]
    options += common_lines(settings, settings.time)
    if settings.gpus_per_task:  # only when asked: a cluster without GPUs refuses the job at submission
        options += ["--ntasks=1", f"--gpus-per-task={settings.gpus_per_task}"]
    if settings.cpus_per_task:
        options.append(f"--cpus-per-task={settings.cpus_per_task}")
    grade = shlex.join(command + [JOB_OPTION, job])
    body = (f"set -u\n# nproc: the CPUs this task may use (its parallel compiles)\n"
            f"exec {grade} --shard \"$SLURM_ARRAY_TASK_ID/{shards.count}\" --jobs \"$(nproc)\"\n")
    return _header(f"Grades shard $SLURM_ARRAY_TASK_ID of {shards.count} of the class {submissions}.",
                   "reduction-grade", options) + body


def merge_script(command: list[str], job_file: Path, out: Path, settings: SlurmSettings) -> str:
    job, logs = map(shlex.quote, _checked(job_file, out / "slurm" / "logs"))
    options = [f"--output={out}/slurm/logs/merge-%j.out"] + common_lines(settings, settings.merge_time)
    body = (f"set -u\n{shlex.join(command)} {JOB_OPTION} {job}\n"
            "status=$?\n"
            f"echo \"$status\" > {logs}/merge-\"$SLURM_JOB_ID\".status  # --wait reads it (no accounting needed)\n"
            "exit \"$status\"\n")
    return _header(f"Builds the class outputs in {out} from the students' signed records.",
                   "reduction-merge", options) + body


def sbatch(script: Path, extra: list[str], dry_run: bool) -> str | None:
    """Submits `script`; returns the job id (None on a dry run)."""
    command = ["sbatch", "--parsable", *extra, str(script)]
    if dry_run:
        print("would run: " + shlex.join(command))
        return None
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise GraderError(f"sbatch refused {script.name}: {completed.stderr.strip() or completed.stdout.strip()}")
    return completed.stdout.strip().split(";")[0]  # "<id>" or "<id>;<cluster>"


def load_state(path: Path) -> Submitted | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Submitted(**data)
    except (OSError, ValueError, TypeError):
        return None


def main(argv=None, manifest=None) -> int:
    """The --slurm command line; tests pass a ready manifest (their build has no real programs)."""
    args = build_parser().parse_args(argv)
    try:
        out, submissions, build = args.out.resolve(), args.submissions.resolve(), args.build_dir.resolve()
        policy_path = args.policy or (DEFAULT_POLICY if DEFAULT_POLICY.is_file() else None)
        settings = resolve_settings(Policy.load(policy_path).slurm, args)
        command = shlex.split(args.grade_command) if args.grade_command else [sys.executable, str(GRADE_PY)]
        job = jobs.replace(jobs.from_args(args, build_dir=build, out=out, submissions=submissions),
                           build=False)   # the tasks use the build as it is
        launcher = SlurmLauncher(settings, command, dry_run=args.dry_run, wait=args.wait, manifest=manifest)
        return launcher.run(job).status
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitStatus.USAGE


class SlurmLauncher:
    """A job array that shards the job's unfinished students over its tasks, and a merge job after
    it (module docstring); `wait`: until both end, with the merge's status."""

    def __init__(self, settings: SlurmSettings, command: list[str], dry_run: bool = False, wait: bool = False,
                 manifest=None):
        self.settings, self.command, self.dry_run, self.wait, self.manifest = settings, command, dry_run, wait, manifest

    def run(self, job: jobs.GradingJob) -> ClassOutcome:
        out = Path(job.out)
        manifest = self.manifest
        if manifest is None:  # the tasks run with the build as it is: the programs must be there now
            manifest = load_manifest(Path(job.build_dir))
            check_programs(manifest)
        labs = manifest.select(job.labs)
        roster = [name for name, _ in find_students(Path(job.submissions), None, lambda text: print(text, flush=True))]
        try:
            key = signing.load_key(out)  # made here, once: the tasks must not race to create it
        except (OSError, ValueError) as exc:
            raise GraderError(f"{out}: cannot use the output folder's key ({exc})") from None
        (out / "slurm" / "logs").mkdir(parents=True, exist_ok=True)
        earlier = load_state(out / "slurm" / STATE_FILE)
        if not self.dry_run:
            check_idle([job for job in (earlier.array_job, earlier.merge_job) if job] if earlier else [])
        unfinished = unfinished_students(out, roster, labs, key)
        seed = job.seed if job.seed is not None else (earlier.seed if earlier else secrets.randbits(62))
        state = Submitted(seed=seed, date=datetime.datetime.now().isoformat(timespec="seconds"), unfinished=unfinished)
        plan = SlurmJobs(self.command, jobs.replace(job, seed=seed), self.settings, self.dry_run)
        submit(plan, state, plan_shards(roster, unfinished, self.settings.tasks))
        print_summary(state, roster, out, self.dry_run)
        status = (wait_for(state.array_job, state.merge_job, out / "slurm" / "logs") if self.wait and not self.dry_run
                  else ExitStatus.OK)
        return ClassOutcome(status, seed)


@dataclass
class SlurmJobs:
    """What both job scripts need: the command they run and the grading they run it on."""
    command: list[str]
    grading: jobs.GradingJob
    settings: SlurmSettings
    dry_run: bool

    @property
    def out(self) -> Path:
        return Path(self.grading.out)


def submit(plan: SlurmJobs, state: Submitted, shards: Shards) -> None:
    """Writes the jobs' GradingJob files, then writes and submits the array (when a student is
    unfinished), then the merge after it; the state file follows each submission, so a failed merge
    submission still leaves the array known."""
    folder = plan.out / "slurm"
    task_job = plan.grading.write(folder / JOB_FILE)
    merge_job = jobs.replace(plan.grading, merge=True).write(folder / MERGE_JOB_FILE)
    state.shards, state.tasks = shards.count, shards.indices
    save = (lambda: None) if plan.dry_run else (lambda: write_json(folder / STATE_FILE, asdict(state)))
    grade = folder / "grade.sbatch"
    if shards.indices:
        grade.write_text(task_script(plan.command, task_job, Path(plan.grading.submissions), plan.out, shards,
                                     plan.settings), encoding="utf-8")
        try:
            state.array_job = sbatch(grade, [], plan.dry_run)
        except GraderError as exc:
            gpus = plan.settings.gpus_per_task
            hint = (f" (it asks for {gpus} GPU(s) per task: choose a partition with GPUs, --partition, or "
                    "--gpus-per-task 0 with the cluster's own --sbatch-arg=--gres=...)" if gpus else "")
            raise GraderError(f"{exc}{hint}") from None
        save()
    else:
        grade.unlink(missing_ok=True)  # not last time's array: nothing to grade now
    merge = folder / "merge.sbatch"
    merge.write_text(merge_script(plan.command, merge_job, plan.out, plan.settings),
                     encoding="utf-8")
    after = [f"--dependency=afterany:{state.array_job or '<array id>'}"] if shards.indices else []
    try:
        state.merge_job = sbatch(merge, after, plan.dry_run)
    except GraderError as exc:
        submitted = f"; the array {state.array_job} is submitted: run this command again once it ends" \
            if state.array_job else ""
        raise GraderError(f"{exc}{submitted}") from None
    save()


def print_summary(state: Submitted, roster: list[str], out: Path, dry_run: bool) -> None:
    folder, logs = out / "slurm", out / "slurm" / "logs"
    done = len(roster) - len(state.unfinished)
    print(f"class: {len(roster)} students, {done} complete, {len(state.unfinished)} to grade; seed {state.seed}")
    if state.tasks:
        tasks = f"{len(state.tasks)} task(s) ({state.shards} shard(s) of the roster: {','.join(map(str, state.tasks))})"
        print(f"grading array: {state.array_job or '(dry run)'}, {tasks}, script {folder}/grade.sbatch")
    else:
        print("every student is complete: only the merge is submitted")
    after = ", after the array ends" if state.tasks else ""
    print(f"merge job: {state.merge_job or '(dry run)'}{after}, script {folder}/merge.sbatch")
    if dry_run:
        return
    ids = ",".join(job for job in (state.array_job, state.merge_job) if job)
    print(f"watch:   squeue --jobs={ids}   (logs: {logs}/)")
    print(f"outputs: {out}/gradebook.csv, timings.csv, junit.xml, gradescope/ once the merge job has run")
    print("resume:  run this same command again (complete students are skipped); "
          f"cancel: scancel {ids.replace(',', ' ')}")
