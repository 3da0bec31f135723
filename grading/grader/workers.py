"""`--gpus`: every GPU of the host grades, one worker process per GPU, then one merge.

Each worker is this same grade.py with CUDA_VISIBLE_DEVICES naming its GPU, the run's seed (so every
student faces the same inputs whichever GPU grades it) and its share of the cores: a slice of them as
its CPU affinity (whole physical cores, consecutive), so that each keeps a timing core of its own that
no other worker's students reach (cpu_share.py), and its share of the compile jobs. The
workers share OUT: each takes the next student nobody has claimed (claims.py), so a GPU that gets
slow students does not hold the others back. The parent relays the workers' student lines, prints
the class's progress, and builds the class outputs once they are done (merge.py).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .cgroups import cpu_list
from .cpu_plan import siblings
from .manifest import GraderError
from .progress import Progress

GRADE_PY = Path(__file__).resolve().parent.parent / "grade.py"
GPU_ID = re.compile(r"[0-9]{1,3}|GPU-[0-9a-fA-F-]{8,64}|MIG-[0-9A-Za-z/-]{8,80}")
STUDENT_LINE = re.compile(r"^\[student \d+/\d+\] (\S+)  (.*)$")
LAB_VERDICT = re.compile(r"^lab (\S+)  ([A-Z_]+)\b")
RELAYED = ("[student", "error", "warning", "WARNING", "note", "inputs:")


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
    lines: list[str] = field(default_factory=list)   # its last lines, for a failure report


def _read(worker: Worker, lines: queue.Queue) -> None:
    for line in worker.process.stdout:
        lines.put((worker, line.rstrip("\n")))
    lines.put((worker, None))


def run_workers(grade_args: list[str], gpus: list[str], total: int, jobs: int, log, run: str = "",
                command: list[str] | None = None) -> list[tuple[str, int]]:
    """Runs one worker per GPU over the class (`grade_args`: the command line without --gpus, with the
    run's --seed; `run`: "@<run id>", shared by the workers); returns (gpu, exit status) of the workers
    that failed. `command`: what a worker runs (default: this grade.py; tests: a simulated one)."""
    progress = Progress(total)
    verdicts: dict[str, list[str]] = {}
    counted: set[str] = set()
    lines: queue.Queue = queue.Queue()
    workers = []
    slices = core_slices(os.sched_getaffinity(0), len(gpus), siblings)
    for gpu, cores in zip(gpus, slices):
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu, "PYTHONUNBUFFERED": "1"}
        argv = [*(command or [sys.executable, str(GRADE_PY)]), *grade_args, "--jobs", str(jobs),
                "--worker", f"gpu{gpu}{run}"]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                   stdin=subprocess.DEVNULL, errors="replace", preexec_fn=_on_cores(cores))
        workers.append(Worker(gpu, process))
        threading.Thread(target=_read, args=(workers[-1], lines), daemon=True).start()
    cores_text = ("cores " + " and ".join(cpu_list(cores) for cores in slices) if slices[0] is not None
                  else "every core each (too few to give each a slice)")
    log(f"grading on {len(gpus)} GPU(s): {', '.join(gpus)}, one worker each, {jobs} compile job(s) per worker, "
        f"{cores_text}")
    try:
        running = len(workers)
        while running:
            worker, line = lines.get()
            if line is None:
                running -= 1
                continue
            worker.lines = (worker.lines + [line])[-20:]
            if line.startswith(RELAYED):
                log(f"[gpu {worker.gpu}] {line}")
            match = STUDENT_LINE.match(line)
            if not match:
                continue
            name, rest = match.groups()
            lab = LAB_VERDICT.match(rest)
            if lab:
                verdicts.setdefault(name, []).append(lab.group(2))
            elif name not in counted and rest.startswith("total "):
                counted.add(name)
                log(progress.finished(name, verdicts.get(name, [])))
            elif name not in counted and rest.startswith("already graded"):
                counted.add(name)
                progress.skipped()
    except KeyboardInterrupt:
        for worker in workers:   # they stop their runs and keep what is complete (cli._stop)
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.process.wait()
        raise
    failed = []
    for worker in workers:
        status = worker.process.wait()
        worker.process.stdout.close()
        if status != 0:
            failed.append((worker.gpu, status))
            log(f"[gpu {worker.gpu}] worker exited with status {status}; its last lines:\n  " + "\n  ".join(worker.lines))
    return failed
