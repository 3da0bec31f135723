"""The class outputs of a grading done in pieces (`--merge`): the workers of `--gpus`, the tasks of a
Slurm array, or runs stopped and resumed, all write signed per-student records into one OUT; this
builds from them exactly what a single run writes at its end (class_outputs.py: the class files, the
plots and the class report), and says which students are not graded yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..manifest import Lab
from ..outputs import signing
from ..outputs.record_store import RecordStore
from ..outputs.records import StudentRecord
from ..report import reports
from ..report.class_outputs import finish


@dataclass
class MergeResult:
    records: list[StudentRecord] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)   # roster students with no complete signed record
    plots: str = ""                                       # what became of the plots and the report, in words


def merge(out: Path, labs: list[Lab], roster: list[str], plots: bool = True, leaderboard: bool = False) -> MergeResult:
    out = Path(out)
    key = signing.load_key(out)
    complete = RecordStore(out, key).complete(roster)
    result = MergeResult()
    result.records = reports.write_class_outputs(out, labs, roster, key, reports.class_sandbox(complete), leaderboard)
    done = {record.student for record in result.records}
    result.unfinished = [name for name in roster if name not in done]
    result.plots = finish(out, labs, roster, result.records, plots)
    return result
