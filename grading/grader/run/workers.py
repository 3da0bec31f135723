"""The --gpus launcher: every GPU of the host grades, one worker process per GPU, then one merge.

Each worker is grade.py reading a GradingJob of its own (`grade.py --job FILE --events-fd N`): the
run's job with its GPU set (the launcher sets CUDA_VISIBLE_DEVICES), the run's seed and id (so every
student faces the same inputs whichever GPU grades it) and its share of the compiles. Its CPU
affinity is a slice of the cores (whole physical cores, consecutive), so that each keeps a timing
core of its own that no other worker's students reach (cpu_share.py). The workers share OUT: each
takes the next student nobody has claimed (claims.py), so a GPU that gets slow students does not
hold the others back. Each worker reports its progress as typed events on a pipe of its own
(events.py); the parent renders them, counts the class's progress, and builds the class outputs
once they are done (merge.py). Its other output is kept for the report of a worker that fails.
"""

from __future__ import annotations

import os
import queue
import re
import secrets
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import job as jobs
from ..contract import EVENTS_FD_OPTION, JOB_OPTION, ExitStatus
from ..manifest import GraderError
from ..outputs import events as ev
from ..outputs import signing
from ..paths import GRADE_PY
from ..policy import Policy
from ..sandbox.cgroups import cpu_list
from ..sandbox.cpu_plan import siblings
from .class_end import merge_class
from .console import Console
from .launch import ClassOutcome
from .local_run import select

GPU_ID = re.compile(r"[0-9]{1,3}|GPU-[0-9a-fA-F-]{8,64}|MIG-[0-9A-Za-z/-]{8,80}")
KEPT_LINES = 20   # of a worker's own output, for the report when it fails


def list_gpus(spec: str) -> list[str]:
    """`all` (every GPU nvidia-smi lists) or a comma list of indices or UUIDs."""
    if spec == "all":
        try:
            listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GraderError(f"--gpus all: cannot list the GPUs ({exc})") from exc
        count = sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))
        if listing.returncode != 0 or count == 0:
            raise GraderError("--gpus all: nvidia-smi -L lists no GPU on this machine")
        return [str(index) for index in range(count)]
    gpus = [item.strip() for item in spec.split(",") if item.strip()]
    bad = [gpu for gpu in gpus if not GPU_ID.fullmatch(gpu)]
    if not gpus or bad or len(set(gpus)) != len(gpus):
        raise GraderError(f"--gpus {spec!r}: give 'all' or distinct GPU indices or UUIDs, e.g. 0,1")
    return gpus


def core_slices(cores, count: int, siblings_of=lambda core: {core}) -> list[set[int] | None]:
    """`count` slices of `cores`, whole physical cores (their SMT siblings together) in order, as even
    as they come; None for every worker where there are fewer than two physical cores a worker (each
    needs a timing core and one for its students): then every worker has every core."""
    groups: list[set[int]] = []
    for core in sorted(cores):
        if not any(core in group for group in groups):
            groups.append(siblings_of(core) & set(cores) | {core})
    if len(groups) < 2 * count:
        return [None] * count
    size, extra = divmod(len(groups), count)
    slices, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        slices.append(set().union(*groups[start:end]))
        start = end
    return slices


def _on_cores(cores: set[int] | None):
    """Popen's preexec_fn: the worker, and all it starts, on `cores` (None: where the parent is)."""
    return None if cores is None else (lambda: os.sched_setaffinity(0, cores))


@dataclass
class Worker:
    gpu: str
    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)   # its last lines of output, for a failure report


def _read_events(worker: Worker, stream, inbox: queue.Queue) -> None:
    for line in stream:
        try:
            inbox.put((worker, ev.decode(line)))
        except ev.EventError as exc:   # a grader's own channel: a bad line is a grader bug, said once per line
            inbox.put((worker, ev.Note(line=f"warning: a line on the worker's event channel is no event ({exc})")))
    inbox.put((worker, None))


def _keep_output(worker: Worker) -> None:
    for line in worker.process.stdout:
        worker.lines = (worker.lines + [line.rstrip("\n")])[-KEPT_LINES:]


def job_file(run_job: jobs.GradingJob, gpu: str) -> Path:
    tag = re.sub(r"[^A-Za-z0-9-]", "-", gpu)[:80]
    return Path(run_job.out) / "work" / ".jobs" / run_job.run / f"gpu-{tag}.json"


def start(run_job: jobs.GradingJob, gpu: str, cores, command: list[str]) -> tuple[Worker, object]:
    """One worker: its job file, its event pipe (read end returned), its process."""
    path = jobs.replace(run_job, gpu=gpu).write(job_file(run_job, gpu))
    read_end, write_end = os.pipe()
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu, "PYTHONUNBUFFERED": "1"}
    try:
        process = subprocess.Popen([*command, JOB_OPTION, str(path), EVENTS_FD_OPTION, str(write_end)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                   stdin=subprocess.DEVNULL, errors="replace", pass_fds=(write_end,),
                                   preexec_fn=_on_cores(cores))
    finally:
        os.close(write_end)
    return Worker(gpu, process), os.fdopen(read_end, encoding="utf-8", errors="replace")


def run_workers(run_job: jobs.GradingJob, gpus: list[str], console: Console,
                command: list[str] | None = None) -> list[tuple[str, int]]:
    """One worker per GPU over the class of `run_job` (its seed and run id set: shared by the
    workers); returns (gpu, exit status) of the workers that failed. `command`: what a worker runs
    (default: this grade.py; tests: a simulated one)."""
    inbox: queue.Queue = queue.Queue()
    workers = []
    slices = core_slices(os.sched_getaffinity(0), len(gpus), siblings)
    for gpu, cores in zip(gpus, slices):
        worker, stream = start(run_job, gpu, cores, command or [sys.executable, str(GRADE_PY)])
        workers.append(worker)
        threading.Thread(target=_read_events, args=(worker, stream, inbox), daemon=True).start()
        threading.Thread(target=_keep_output, args=(worker,), daemon=True).start()
    cores_text = ("cores " + " and ".join(cpu_list(cores) for cores in slices) if slices[0] is not None
                  else "every core each (too few to give each a slice)")
    console.log(f"grading on {len(gpus)} GPU(s): {', '.join(gpus)}, one worker each, {run_job.jobs} compile job(s) "
                f"per worker, {cores_text}")
    try:
        running = len(workers)
        while running:
            worker, event = inbox.get()
            if event is None:
                running -= 1
            else:
                console(event, prefix=f"[gpu {worker.gpu}] ")
    except KeyboardInterrupt:
        for worker in workers:   # they stop their runs and keep what is complete (cli: SIGTERM)
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.process.wait()
        raise
    failed = []
    for worker in workers:
        status = worker.process.wait()
        if status != 0:
            failed.append((worker.gpu, status))
            console.log(f"[gpu {worker.gpu}] worker exited with status {status}; its last lines:\n  "
                        + "\n  ".join(worker.lines))
    return failed


class GpusLauncher:
    """One worker process per GPU (`spec`: all, or indices/UUIDs) over the job's students, then the
    class outputs. `command`: what a worker runs (default: this grade.py; tests: a simulated one)."""

    def __init__(self, spec: str, manifest, policy: Policy, console: Console, command: list[str] | None = None):
        self.spec, self.manifest, self.policy, self.console, self.command = spec, manifest, policy, console, command

    def run(self, job: jobs.GradingJob) -> ClassOutcome:
        gpus = list_gpus(self.spec)
        chosen = select(job, self.console)
        signing.load_key(Path(job.out))   # made once here, not raced for by the workers
        # The same inputs on every GPU; one run id: with --force each redoes what an earlier run
        # graded, not what a sibling just did.
        seed = job.seed if job.seed is not None else secrets.randbits(62)
        run_job = jobs.replace(job, seed=seed, run=job.run or secrets.token_hex(8), build=False,
                               build_dir=str(self.manifest.binary_dir), jobs=max(1, (job.jobs or 1) // len(gpus)),
                               students=[name for name, _ in chosen.students])
        self.console(ev.ClassStarted(students=len(chosen.students)))
        failed = run_workers(run_job, gpus, self.console, self.command)
        status = merge_class(Path(job.out), self.manifest, chosen.folder, self.manifest.select(job.labs), self.policy,
                             plots=job.plots)
        print(f"\ninputs: seed {seed} (replay a failure with --seed {seed})")
        if failed:
            print(f"{len(failed)} worker(s) failed: " + ", ".join(f"GPU {gpu} (exit {code})" for gpu, code in failed))
            status = status if status not in (ExitStatus.OK, ExitStatus.REFUSED) else ExitStatus.FAILED
        return ClassOutcome(status, seed, failed)
