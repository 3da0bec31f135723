"""Sanitize: compute-sanitizer's tools on the small cases of the GPU labs that passed, each
report read from its own log (a channel the student cannot write). Each tool first runs once over
all of the student's passed GPU labs (its start costs more than their cases); where that run found
hazards, groups of its labs run again, and the labs of no clean run run alone under the tool, so
that every finding is one lab's."""

from __future__ import annotations

import dataclasses
import math
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
        found = self._together(record, [entry for entry in passed if self.g.runs.intact(entry)])

        def run(job):
            entry, tool = job
            if (entry.folder, tool) in found:
                return entry, tool, found[entry.folder, tool]
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

    def _together(self, record: StudentRecord, entries: list) -> dict:
        """Each tool once over all of `entries` (a student's passed GPU labs, one after another in one
        process: a tool's start costs more than a lab's small cases). A clean run is every lab's clean
        result for that tool. A run whose tool reported hazards is split into groups of about the square
        root of its labs, all run at once: a clean group vouches for its labs, and the labs of the
        others run alone under that tool, so a finding is always one lab's, from a run of that lab
        only (one racy lab of 11: 1 + 4 + 3 runs in three rounds, not 1 + 11 in two; each round of a
        student waits for the timing turns queued before it). Any other run (no clean summary, a
        time limit) is not split: every lab of it runs alone. Returns (lab, tool) -> result."""
        config = self.g.policy.sanitizer
        if len(entries) < 2 or not self.g.tools.sanitize_together:
            return {}

        def one_run(tool: str, group: list):
            labs = [(self.lab(entry.folder), Path(entry.module_path), self.g.sanitizer_plans[entry.folder])
                    for entry in group]
            with self.g.runs.sharing(labs[0][0]), self.g.neighbours.run(record.student, True, self.name):
                return self.g.tools.run_sanitizer_labs(record.student, labs, tool, config.timeout_s * len(labs),
                                                       config.call_timeout_s)

        def run_group(tool: str, group: list) -> tuple[str, dict]:
            """The finding status of one run of `group`, and each of its labs -> that run where it was clean."""
            result = one_run(tool, group)
            status = sanitizer_finding(tool, result).status
            if status != CLEAN:
                return status, {}
            # the output is every lab's: no lab's to show
            return status, {(entry.folder, tool): dataclasses.replace(result, stdout="", stderr="") for entry in group}

        def narrow(tool: str) -> dict:
            status, found = run_group(tool, entries)
            if status != HAZARDS or len(entries) <= 2:
                return found
            size = math.ceil(math.sqrt(len(entries)))   # 11 labs: groups of 3, 3, 3 and 2
            groups = [group for i in range(0, len(entries), size) if len(group := entries[i:i + size]) >= 2]
            with pool(len(groups)) as runs:   # one round: each round of a student waits for the timing turns
                for _, part in runs.map(lambda group: run_group(tool, group), groups):
                    found.update(part)
            return found

        found = {}
        with pool(self.g.policy.tests.concurrency) as runs:
            for part in runs.map(narrow, config.tools):
                found.update(part)
        return found
