"""Time: the labs that passed, between two reference runs (benchmark.py), each time checked against
the timekeeper's clock; the ratio to the reference, or why there is none, into the lab's record."""

from __future__ import annotations

from pathlib import Path

from ..judge.flags import add_flag
from ..judge.verdicts import PASSED
from ..outputs import events as ev
from ..outputs.records import StudentRecord
from .base import Stage


class Time(Stage):
    name = "time"

    def run(self, who: tuple, record: StudentRecord, work: Path) -> None:
        info = record.benchmark
        passed = [self.lab(entry.folder) for entry in record.labs.values()
                  if entry.verdict == PASSED and self.g.runs.intact(entry)]
        if not self.g.options.bench:
            info.status = "skipped (--no-bench)"
            return
        if not self.g.gpu:
            info.status = "not run: no GPU on this machine"
            return
        if not passed:
            info.status = "nothing to time: no lab passed"
            return
        self.g.emit(ev.TimingStarted(*who, labs=tuple(lab.folder for lab in passed)))
        modules = {lab.folder: Path(record.labs[lab.folder].module_path) for lab in passed}
        outcome = self.g.timing.time_student(record.student, passed, modules, record.date,
                                             lambda part, alone: self.g.runs.timing_turn(record.student, part, alone))
        info.status = "run" if not outcome.problems else "run with problems"
        info.problems = outcome.problems
        info.reference_drift = None if outcome.drift is None else round(outcome.drift, 4)
        info.program_output = outcome.program_output
        info.device = {"name": outcome.device} if outcome.device else {}
        record.gpu_name = outcome.device
        record.timings = [row for row in outcome.rows] + [row for lab in outcome.labs.values() for row in lab.rows]
        for folder, result in outcome.labs.items():
            ratios = [float(row["ratio_to_ref"]) for row in result.rows if row["status"] == "ok" and row["ratio_to_ref"]]
            unusable = result.impossible or result.contradicted or any(row["status"] != "ok" for row in result.rows)
            _flag_timing(record, folder, result)
            if ratios and not unusable and not result.note:
                result.ratio = round(self.g.policy.combine_ratios(ratios), 4)
                result.statistic = self.g.policy.performance.statistic
            elif not ratios and not result.note:
                result.note, result.no_reference = "no reference timing to compare with", True
            record.labs[folder].benchmark = result


def _flag_timing(record: StudentRecord, folder: str, result) -> None:
    """The integrity flags of a lab's timing: times the grader refused, and why (the lab's note)."""
    if result.contradicted:
        add_flag(record.flags, "time_contradicted", folder, result.note)
    elif result.impossible:
        add_flag(record.flags, "time_impossible", folder, result.note)
    elif any(row["status"] == "UNVERIFIED" for row in result.rows):
        add_flag(record.flags, "time_unverified", folder, result.note)
