"""Test: each compiled lab's test plan in the sandbox; the verdict is the trusted checker's, from the
run's report channel and what the grader saw of the run, a few labs at a time. With [tests]
together, the student's GPU labs first run in one runner, one after another (beside the host lab's
run), and only a lab that did not pass there runs alone (after one more shared run of the others
when the first ended inside one lab's part)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..contract import RUNNER_EXIT_WATCHDOG
from ..judge.call_limit import CallLimit
from ..judge.resources import SHORT_LIMIT_TIMED_OUT, TEST, TIMED_OUT, ResourceFailure, resource_failure
from ..judge.verdicts import NOT_RUN, PASSED, RUNTIME_ERROR, TIMEOUT, test_verdict
from ..outputs import events as ev
from ..outputs.program_output import program_output
from ..outputs.records import LabRecord, StudentRecord, TestRun
from .base import Stage, pool


def timed_out(limit: CallLimit, process, check) -> ResourceFailure:
    """Why a TIMEOUT may be run again alone: its runner's watchdog ended a call under a limit shorter
    than the full one (call_limit.py: any other student's run beside it may have mattered), or else
    it timed out (the cores' evidence decides, cpu_share.held)."""
    if (check is not None and process.returncode == RUNNER_EXIT_WATCHDOG and not process.stalled
            and limit.short_for(check.last_started_elements)):
        return SHORT_LIMIT_TIMED_OUT
    return TIMED_OUT


class Test(Stage):
    name = "test"

    def run(self, who: tuple, record: StudentRecord, work: Path) -> None:
        tests = self.g.policy.tests
        todo = []
        for entry in record.labs.values():
            if entry.verdict is not None:
                continue
            if not (self.lab(entry.folder).host or self.g.gpu):  # the grader's knowledge, not the runner's
                entry.verdict, entry.detail = NOT_RUN, "no GPU on this machine: not run"
            elif not self.g.runs.intact(entry):
                entry.verdict, entry.detail = RUNTIME_ERROR, "the module changed after it was compiled"
            else:
                todo.append(entry)
        call_limit = CallLimit(tests.call_timeout_s, tests.call_floor_s)

        def run(entry: LabRecord):
            lab = self.lab(entry.folder)

            def test():
                return self.g.tools.run_tests(record.student, lab, Path(entry.module_path), self.g.plans[lab.folder],
                                              self.g.expectations, tests.timeout_s, call_limit)

            def verdict(result) -> str:
                process, check = result
                return test_verdict(check, process, call_limit).verdict if check else RUNTIME_ERROR

            with self.g.runs.sharing(lab), self.g.neighbours.run(record.student, not lab.host, self.name) as met:
                result = test()
            if verdict(result) != PASSED and self.g.runs.intact(entry):
                failure = resource_failure(TEST, *result) or (timed_out(call_limit, *result)
                                                              if verdict(result) == TIMEOUT else None)
                result = self.g.runs.again_alone(who, record, entry, "test run", failure, met, not lab.host, test,
                                                 verdict) or result
            return entry, result

        def record_run(entry: LabRecord, process, check, shown: bool = True) -> None:
            """`shown`: the run's program output is this lab's (not where one run ran every GPU lab)."""
            if check is None:
                entry.verdict, entry.detail = RUNTIME_ERROR, "the grader could not check this run (a grader problem)"
            else:
                verdict = test_verdict(check, process, call_limit)
                entry.verdict, entry.detail = verdict.verdict, verdict.detail
                entry.tests = TestRun(process.returncode, process.timed_out, process.stalled, process.output_limit,
                                      round(process.seconds, 2), dataclasses.asdict(check),
                                      program_output(process.stdout, process.stderr) if shown else "")
            self.g.emit(ev.LabVerdict(*who, lab=entry.folder, verdict=entry.verdict,
                        detail=entry.detail if entry.verdict != PASSED else ""))

        gpu = [entry for entry in todo if not self.lab(entry.folder).host]
        if len(gpu) >= 2 and tests.together and self.g.tools.test_together:
            with pool(tests.concurrency) as runs:   # the one run of the GPU labs beside the host lab's runs
                together = runs.submit(self._run_together, record, gpu)
                for entry, result in runs.map(run, [entry for entry in todo if entry not in gpu]):
                    record_run(entry, *result)
                passed = together.result()
            for entry in gpu:
                if entry.folder in passed:
                    record_run(entry, *passed[entry.folder], shown=False)
            todo = [entry for entry in gpu if entry.folder not in passed]
        with pool(tests.concurrency) as runs:
            for entry, result in runs.map(run, todo):
                record_run(entry, *result)

    def _run_together(self, record: StudentRecord, entries: list[LabRecord]) -> dict:
        """Every GPU lab of `entries` in one runner, one after another (one process and one CUDA context
        for them all: a test run's start costs about as much as its cases). Returns, where that run
        ended cleanly (status 0, within its limits), the labs whose part of it saw every case right,
        closed, on a clean channel: folder -> (process, check). Every other lab runs alone as before, so
        a verdict other than PASSED, and its retry and notes, come from a run of that lab only.

        A run that did not end cleanly vouches for no part (a lab's code may have written any lab's
        part before it ended the run). When it ended inside one lab's part (a call that never ends, a
        crash), the other labs get one more shared run without that lab, which runs alone: a hang then
        costs its own run and one more shared run, not one run per lab. What the channel says of where
        the run ended only picks the labs of that second run; it vouches for nothing."""
        passed, ended_in = self._shared_run(record, entries)
        rest = [entry for entry in entries if entry.folder != ended_in]
        if ended_in is None or len(rest) < 2:
            return passed
        return self._shared_run(record, rest)[0]

    def _shared_run(self, record: StudentRecord, entries: list[LabRecord]) -> tuple[dict, str | None]:
        """One shared run: the labs it vouches for, and, when it did not end cleanly, the lab whose part
        was open when it ended (None when none was)."""
        tests = self.g.policy.tests
        labs = [(self.lab(entry.folder), Path(entry.module_path), self.g.plans[entry.folder]) for entry in entries]
        # A short call limit: a lab whose call outlives it ends this run and gets its verdict alone,
        # under the call limit, so a never-ending call does not cost the call limit twice.
        call_limit = CallLimit(tests.call_timeout_s, tests.call_floor_s).capped(tests.shared_call_timeout_s)
        with self.g.runs.sharing(labs[0][0]), self.g.neighbours.run(record.student, True, self.name):
            process, checks = self.g.tools.run_tests_labs(record.student, labs, self.g.expectations,
                                                          tests.timeout_s * len(labs), call_limit)
        if process.returncode != 0 or process.timed_out or process.stalled or process.output_limit:
            # its record would speak of another lab's end: each lab's verdict comes from another run
            return {}, next((entry.folder for entry in entries
                             if checks.get(entry.folder) is None or not checks[entry.folder].end), None)
        return {folder: (process, check) for folder, check in checks.items()
                if check is not None and check.all_correct and check.end
                and not (check.forged or check.after_end or check.malformed or check.duplicates)}, None
