"""Test: each compiled lab's test plan in the sandbox, a few labs at a time; the verdict is the
trusted checker's, from the run's report channel and what the grader saw of the run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..judge.resources import TEST, TIMED_OUT, resource_failure
from ..judge.verdicts import NOT_RUN, PASSED, RUNTIME_ERROR, TIMEOUT, test_verdict
from ..outputs import events as ev
from ..outputs.program_output import program_output
from ..outputs.records import LabRecord, StudentRecord, TestRun
from .base import Stage, pool


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
        call_timeout = tests.call_timeout_s

        def run(entry: LabRecord):
            lab = self.lab(entry.folder)

            def test():
                return self.g.tools.run_tests(record.student, lab, Path(entry.module_path), self.g.plans[lab.folder],
                                              self.g.expectations, tests.timeout_s, call_timeout)

            def verdict(result) -> str:
                process, check = result
                return test_verdict(check, process, call_timeout).verdict if check else RUNTIME_ERROR

            with self.g.runs.sharing(lab), self.g.neighbours.run(record.student, not lab.host, self.name) as met:
                result = test()
            if verdict(result) != PASSED and self.g.runs.intact(entry):
                failure = resource_failure(TEST, *result) or (TIMED_OUT if verdict(result) == TIMEOUT else None)
                result = self.g.runs.again_alone(who, record, entry, "test run", failure, met, not lab.host, test,
                                                 verdict) or result
            return entry, result

        with pool(tests.concurrency) as runs:
            for entry, (process, check) in runs.map(run, todo):
                if check is None:
                    entry.verdict, entry.detail = RUNTIME_ERROR, "the grader could not check this run (a grader problem)"
                else:
                    verdict = test_verdict(check, process, call_timeout)
                    entry.verdict, entry.detail = verdict.verdict, verdict.detail
                    entry.tests = TestRun(process.returncode, process.timed_out, process.stalled, process.output_limit,
                                          round(process.seconds, 2), dataclasses.asdict(check),
                                          program_output(process.stdout, process.stderr))
                self.g.emit(ev.LabVerdict(*who, lab=entry.folder, verdict=entry.verdict,
                            detail=entry.detail if entry.verdict != PASSED else ""))
