"""What Slurm still runs of a submission (squeue), for grade.py --slurm: a resubmission refused while
the last one's jobs run, and --wait until the jobs end, with the merge job's exit status."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..contract import ExitStatus
from ..manifest import GraderError

POLL_S = (1.0, 15.0)    # --wait polls squeue every second for a minute, then every 15 s (a grading takes long)


def queued(job_ids: list[str]) -> set[str] | None:
    """The ones of `job_ids` (array or single jobs) that Slurm still lists; None when squeue fails."""
    # --user=<uid>, not --me (Slurm 20.11+); %F: an array's job id, or a plain job's own
    completed = subprocess.run(["squeue", "--noheader", f"--user={os.getuid()}", "--format=%F"],
                               capture_output=True, text=True)
    if completed.returncode != 0:
        return None
    return set(completed.stdout.split()) & set(job_ids)


def wait_for(array_job: str | None, merge_job: str, logs: Path) -> int:
    """Until both jobs have left the queue; then the merge's exit status, and what it means."""
    ids = [job for job in (array_job, merge_job) if job]
    failures, started = 0, time.monotonic()
    while True:
        left = queued(ids)
        if left is None:
            failures += 1
            if failures > 15:
                print("error: --wait: squeue keeps failing; check the jobs by hand", file=sys.stderr)
                return ExitStatus.FAILED
        elif not left:
            break
        time.sleep(POLL_S[0] if time.monotonic() - started < 60 else POLL_S[1])
    status_file = logs / f"merge-{merge_job}.status"
    try:
        status = int(status_file.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        print(f"error: the merge job {merge_job} ended without a status (cancelled? see "
              f"{logs}/merge-{merge_job}.out)", file=sys.stderr)
        return ExitStatus.FAILED
    print(f"merge job {merge_job} ended with status {status} (log: {logs}/merge-{merge_job}.out)")
    if status == ExitStatus.UNFINISHED:
        print(f"some students are unfinished: the task logs ({logs}/grade-{array_job}_*.out) say why; run "
              "the same command again to grade them")
    elif status == ExitStatus.REFUSED:
        print(f"every student is complete, but folders of the class folder were refused: the merge's log "
              f"({logs}/merge-{merge_job}.out) lists them and why")
    return status


def check_idle(last_jobs: list[str]) -> None:
    """A resubmission while the last one's jobs still run would count their students as unfinished."""
    if shutil.which("sbatch") is None:
        raise GraderError("sbatch not found: run this on the cluster's login node (or use --dry-run)")
    running = queued(last_jobs) if last_jobs else None
    if running:
        ids = " ".join(sorted(running))
        raise GraderError(f"jobs {ids} of the last submission are still queued or running: wait for them "
                          f"(squeue --jobs={ids.replace(' ', ',')}) or cancel them (scancel {ids}) before resubmitting")
