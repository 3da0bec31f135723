"""Time: the labs that passed, between two reference runs (benchmark.py), each time checked against
the timekeeper's clock; the ratio to the reference, or why there is none, into the lab's record."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from ..judge.flags import add_flag
from ..judge.verdicts import PASSED
from ..outputs import events as ev
from ..outputs.records import StudentRecord
from .base import Stage


class Time(Stage):
    name = "time"
    begins_after = "test"   # the host lab's verdict is final then (the sanitizer runs only GPU labs)

    def __init__(self, grader):
        super().__init__(grader)
        self._early: dict[str, Future] = {}   # per student, its host part timed beside its sanitizer runs
        self._early_threads = ThreadPoolExecutor(max(1, grader.options.in_flight), thread_name_prefix="early timing")

    def _passed(self, record: StudentRecord) -> list:
        return [self.lab(entry.folder) for entry in record.labs.values()
                if entry.verdict == PASSED and self.g.runs.intact(entry)]

    def _turn(self, record: StudentRecord):
        return lambda part, alone: self.g.runs.timing_turn(record.student, part, alone)

    def begin(self, who: tuple, record: StudentRecord, work: Path) -> None:
        """The host part's timing, beside this student's sanitizer runs: it needs the cores and the
        timing core, they need the GPU (the host part holds it too only where [benchmark]
        host_part_holds_gpu says so, and then they wait)."""
        hosts = [lab for lab in self._passed(record) if lab.host]
        if not (self.g.options.bench and self.g.gpu and hosts):
            return
        modules = {lab.folder: Path(record.labs[lab.folder].module_path) for lab in hosts}
        self._early[record.student] = self._early_threads.submit(self.g.timing.time_host, hosts, modules,
                                                                 self._turn(record))

    def run(self, who: tuple, record: StudentRecord, work: Path) -> None:
        # All that is left of the student is its timing turns, which need the timing lane and the GPU
        # or the cores alone, never a place in flight: the next student starts in its place
        # (flight.py), and compiles, tests and sanitizer runs go on while this one waits for its turn.
        self.g.flight.leave(record.student)
        info = record.benchmark
        passed = self._passed(record)
        early = self._early.pop(record.student, None)
        host = early.result() if early else None   # waited for even when unused: nothing of it outlives the stage
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
        outcome = self.g.timing.time_student(record.student, passed, modules, record.date, self._turn(record), host)
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
