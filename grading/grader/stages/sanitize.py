"""Sanitize: compute-sanitizer's tools on the small cases of the GPU labs that passed, each
report read from its own log (a channel the student cannot write)."""

from __future__ import annotations

from pathlib import Path

from ..judge.flags import add_flag
from ..judge.resources import SANITIZER, TIMED_OUT, resource_failure
from ..judge.sanitizer_findings import CLEAN, HAZARDS, sanitizer_finding
from ..judge.verdicts import PASSED
from ..outputs import events as ev
from ..outputs.records import StudentRecord, SanitizerResult
from .base import Stage, pool


class Sanitize(Stage):
    name = "sanitize"

    def run(self, who: tuple, record: StudentRecord, work: Path) -> None:
        config = self.g.policy.sanitizer
        passed = [entry for entry in record.labs.values()
                  if entry.verdict == PASSED and not self.lab(entry.folder).host]
        for entry in record.labs.values():
            if entry.verdict != PASSED:
                continue
            if self.lab(entry.folder).host:
                entry.sanitizer = SanitizerResult("not applicable (host lab)")
            elif not self.g.options.sanitizer:
                entry.sanitizer = SanitizerResult("skipped (--no-sanitizer)")
            elif not self.g.sanitizer_ok:
                entry.sanitizer = SanitizerResult("sanitizer not available"
                                                  + (f": {self.g.sanitizer_why}" if self.g.sanitizer_why else ""))
            else:
                entry.sanitizer = SanitizerResult("run")
        if not self.g.sanitizer_ok or not passed:
            return
        for entry in passed:   # the report says how many cases each tool ran
            entry.sanitizer.cases = list(config.cases)
        jobs = [(entry, tool) for entry in passed for tool in config.tools if self.g.runs.intact(entry)]

        def run(job):
            entry, tool = job
            lab = self.lab(entry.folder)

            def sanitize():
                return self.g.tools.run_sanitizer(record.student, lab, tool, Path(entry.module_path),
                                                  self.g.sanitizer_plans[lab.folder], config.timeout_s,
                                                  config.call_timeout_s)

            def outcome(result) -> str:
                finding = sanitizer_finding(tool, result)
                return CLEAN if finding.status == CLEAN else f"{finding.count} finding(s)"

            with self.g.runs.sharing(lab), self.g.neighbours.run(record.student, True, self.name) as met:
                result = sanitize()
            if outcome(result) != CLEAN and self.g.runs.intact(entry):
                failure = resource_failure(SANITIZER, result) or (
                    TIMED_OUT if result.timed_out or result.stalled else None)
                result = self.g.runs.again_alone(who, record, entry, f"{tool} run", failure, met, True, sanitize,
                                                 outcome) or result
            return entry, tool, result

        with pool(self.g.policy.tests.concurrency) as runs:
            for entry, tool, result in runs.map(run, jobs):
                finding = sanitizer_finding(tool, result)
                entry.sanitizer.findings.append(finding.to_json())
                if finding.counts:
                    entry.sanitizer.hazards[tool] = finding.count
                    hazard = finding.status == HAZARDS
                    add_flag(record.flags, "sanitizer_hazard" if hazard else "sanitizer_unreadable", entry.folder,
                             f"{tool}: " + (f"{finding.count} hazard(s)" if hazard else finding.note))
                    quoted = hazard and bool(finding.report)
                    self.g.emit(ev.SanitizerFinding(*who, lab=entry.folder, tool=tool, count=finding.count, hazard=quoted,
                                what=finding.report[0] if quoted else finding.note))
