"""Command line of grading/grade.py: it makes a GradingJob (job.py) and hands it to a launcher
(launch.py): the local one (local_run.py: a grading, or the merge of a graded class) or one worker
per GPU (--gpus, workers.py). `grade.py --slurm` is the Slurm launcher's own command line (slurm.py)."""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys
import threading
from pathlib import Path

from .contract import EVENTS_FD_OPTION, JOB_OPTION, ExitStatus
from .manifest import GraderError, check_programs, ensure_build, load_manifest
from .outputs import events as ev
from .paths import DEFAULT_POLICY, REPO
from .policy import Policy
from .run import job as jobs
from .run.console import Console
from .run.local_run import LocalLauncher
from .run.workers import GpusLauncher
from .sandbox.process import kill_all

DESCRIPTION = f"""Grades reduction-labs submissions: compiles each student's lab files against the official
skeletons, runs the tests, compute-sanitizer and the benchmark, and writes the gradebook.

  class:  grade.py SUBMISSIONS_DIR --build-dir BUILD --out OUT [options]
  self:   grade.py --self [LABS_DIR] --build-dir BUILD --out OUT    (check your own labs/ first)
  a job:  grade.py {JOB_OPTION} FILE [--shard K/N] [--jobs N] [--gpus all]   (a grading written as data: grader/run/job.py)

A class of any size: --gpus all (one worker per GPU of this host), or --shard K/N on N machines
sharing OUT, then --merge; a Slurm cluster: grade.py --slurm ... (docs/slurm.md).
"""
PLACEMENT = ("job", "shard", "jobs", "gpus", "events_fd")   # what may go beside --job: where and how it runs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grade.py", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", nargs="?", type=Path,
                        help="folder with one folder per student (<student>/labs/NN_name/<file>)")
    parser.add_argument("--self", dest="self_dir", nargs="?", const=REPO / "labs", type=Path, metavar="LABS_DIR",
                        help="grade your own lab files (default: this checkout's labs/) instead of a class")
    parser.add_argument("--build-dir", type=Path, help="CMake build tree (configured and built if it has no "
                        "reduction_labs.json); --self default: build/student")
    parser.add_argument("--out", type=Path, help="output folder; --self default: <build>/self-check")
    jobs.add_selection(parser)
    parser.add_argument("--jobs", type=int, help="parallel compiles (default: cores)")
    parser.add_argument("--student", action="append", help="only this student (repeatable, or a,b,c; a value that "
                        "is a student's whole name is that student: --student='Doe, Jane')")
    parser.add_argument("--force", action="store_true", help="regrade students that are already complete")
    parser.add_argument("--no-plots", action="store_true", help="draw no figures when the grading or the merge ends "
                        "(the class report then says so)")
    parser.add_argument("--no-build", action="store_true",
                        help="use BUILD as it is: never run CMake (for callers inside a build, e.g. grade-example)")
    parser.add_argument("--in-flight", type=int, help="students graded at the same time on one GPU: compiles and tests "
                        "overlap, timing runs alone (default: [pipeline] students of the policy)")
    parser.add_argument("--gpus", help="all, or GPU indices/UUIDs (0,1): one worker per GPU, students spread over them, "
                        "then the class outputs (default: the one GPU CUDA picks)")
    parser.add_argument("--shard", help="K/N: grade only the students at positions K, K+N, K+2N, ... of the sorted class "
                        "(0 <= K < N); shards share OUT, and --merge builds the class outputs")
    parser.add_argument("--merge", action="store_true", help="grade nothing: build the class outputs and plots from the "
                        f"complete records in OUT; exit status {ExitStatus.UNFINISHED.value} while students are left")
    parser.add_argument(JOB_OPTION, dest="job", type=Path, help="grade the GradingJob in FILE (what --gpus and "
                        "--slurm hand their workers); only --shard, --jobs and --gpus may go beside it")
    parser.add_argument(EVENTS_FD_OPTION, dest="events_fd", type=int, help="write the progress as typed events "
                        "(JSON lines, grader/outputs/events.py) on this open descriptor instead of the console's lines")
    return parser


def job_of(args: argparse.Namespace, parser: argparse.ArgumentParser) -> jobs.GradingJob:
    if args.job is not None:
        given = [name for name, value in vars(args).items()
                 if name not in PLACEMENT and value != parser.get_default(name)]
        if given:
            raise GraderError(f"{JOB_OPTION}: the job file says what to grade; only --shard, --jobs and --gpus may go beside "
                              f"it (given: {', '.join('--' + name.replace('_', '-') for name in given)})")
        job = jobs.load(args.job)
        job = jobs.replace(job, shard=jobs.parse_shard(args.shard) if args.shard else job.shard)
    else:
        job = job_of_options(args)
    return jobs.replace(job, jobs=args.jobs or job.jobs or os.cpu_count() or 2)


def job_of_options(args: argparse.Namespace) -> jobs.GradingJob:
    self_check = args.self_dir is not None
    build_dir = args.build_dir or (REPO / "build" / "student" if self_check else None)
    if build_dir is None or (args.out is None and not self_check):
        raise GraderError("--build-dir and --out are required (see --help)")
    out = args.out or build_dir / "self-check"
    return jobs.from_args(args, build_dir=build_dir.resolve(), out=out.resolve(),
                          submissions=args.submissions.resolve() if args.submissions else None,
                          self_dir=args.self_dir.resolve() if self_check else None)


def _stop(signum, frame):
    kill_all()
    raise KeyboardInterrupt


def _stacks_on_usr1() -> None:
    """A grading that seems stuck: `kill -USR1 PID` prints where each of its threads is, on the
    process's own stderr (a test that captures sys.stderr has none with a descriptor: no stacks)."""
    try:
        faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True, chain=False)
    except (AttributeError, ValueError, OSError):   # io.UnsupportedOperation is both of the latter
        pass


def main(argv=None, toolchain=None, manifest=None, worker_command=None) -> int:
    """The command line; tests pass a ready manifest and a simulated toolchain (no build, no GPU), and
    for --gpus the command its workers run (grader_tests/simulated_grade.py)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    log = lambda text: print(text, flush=True)  # noqa: E731
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)  # `timeout` and job schedulers: stop the runs, keep the results
        _stacks_on_usr1()
    emit = ev.JsonLines(args.events_fd) if args.events_fd is not None else None
    try:
        job = job_of(args, parser)
        if args.gpus and (job.gpu is not None or job.self_check):
            raise GraderError("--gpus is for a class (and not for a worker's job)")
        policy = Policy.load(Path(job.policy) if job.policy else (DEFAULT_POLICY if DEFAULT_POLICY.is_file() else None))
        if manifest is None and not job.build:
            manifest = load_manifest(Path(job.build_dir))
            check_programs(manifest)
        if manifest is None:
            manifest = ensure_build(REPO, Path(job.build_dir), log=log)
        manifest.select(job.labs)   # an unknown lab is a usage error before anything runs
        console = Console(log, once_per_student=bool(args.gpus))
        launcher = (GpusLauncher(args.gpus, manifest, policy, console, worker_command) if args.gpus
                    else LocalLauncher(manifest, policy, emit or console, toolchain))
        return launcher.run(job).status
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    except KeyboardInterrupt:
        kill_all()
        print("\ninterrupted: completed students are saved; rerun to resume", file=sys.stderr)
        return ExitStatus.INTERRUPTED
    finally:
        if emit is not None:
            emit.close()

