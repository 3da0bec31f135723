"""What every launcher is: `run(job) -> ClassOutcome`, whatever runs the grading.

    LocalLauncher   (local_run.py)  grades the job in this process: a class, a shard, a --gpus
                                    worker's share, a --self check, or the merge of OUT's records
    GpusLauncher    (workers.py)    one worker per GPU of this host, each a LocalLauncher on a job
                                    file of its own, its events relayed; then the merge
    SlurmLauncher   (slurm.py)      a job array of LocalLaunchers on job files, and a merge job

The command lines (cli.py, slurm.py's) choose a launcher and stand above them; a launcher never
reads a command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .job import GradingJob


@dataclass
class ClassOutcome:
    status: int                      # an ExitStatus; a Slurm merge's own status, as it ended
    seed: int | None = None                                         # the inputs' seed, when it was drawn here
    failed_workers: list[tuple[str, int]] = field(default_factory=list)   # (GPU, exit status) of --gpus workers


class Launcher(Protocol):
    def run(self, job: GradingJob) -> ClassOutcome: ...
