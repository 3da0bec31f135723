"""How a grading ends on the console, and with which exit status: the class outputs of a merge,
the folders not graded, and a student's self-check."""

from __future__ import annotations

from pathlib import Path

from ..contract import ExitStatus
from ..judge.sanitizer_findings import FINDINGS
from ..judge.verdicts import NOT_RUN, PASSED
from ..outputs.records import StudentRecord
from ..outputs.student_names import shown
from ..outputs.student_paths import REFUSED_FILE
from ..policy import Policy
from ..report.reports import summary_table
from .class_folder import ClassFolder, not_graded_lines
from .merge import merge


def not_graded_summary(out: Path, folder: ClassFolder, status: bool = True) -> str:
    """The end of a class run's console: what of the class folder was not graded, and why. With
    `status`, the run ends with REFUSED when a folder was refused (a shard or a --gpus worker
    leaves that to the merge that completes the class)."""
    if not folder.not_graded:
        return ""
    lines = [f"\nnot graded: {len(folder.refused)} folder(s) of the class folder refused, "
             f"{len(folder.not_graded) - len(folder.refused)} ignored ({out}/{REFUSED_FILE}, the class report):",
             *not_graded_lines(folder)]
    if folder.refused and status:
        lines.append(f"a refused folder may be a student's: rename or replace it and grade again (exit status "
                     f"{ExitStatus.REFUSED.value})")
    return "\n".join(lines)


def merge_class(out: Path, manifest, folder: ClassFolder, labs, policy: Policy, plots: bool = True) -> ExitStatus:
    roster = [name for name, _ in folder.students]
    merged = merge(out, manifest.labs, roster, plots, leaderboard=policy.gradescope.leaderboard)
    print(summary_table(merged.records, labs))
    print(f"\nclass outputs: {out}/gradebook.csv, timings.csv, junit.xml, gradescope/; {merged.plots}")
    if folder.not_graded:
        print(not_graded_summary(out, folder, status=not merged.unfinished))
    if merged.unfinished:
        print(f"\n{len(merged.unfinished)} of {len(roster)} student(s) not graded yet: "
              f"{', '.join(map(shown, merged.unfinished))}; run the grading again to grade them "
              f"(exit status {ExitStatus.UNFINISHED.value})")
        return ExitStatus.UNFINISHED
    print(f"\nall {len(roster)} students graded")
    return ExitStatus.REFUSED if folder.refused else ExitStatus.OK


def print_self_details(record: StudentRecord) -> None:
    for folder, entry in record.labs.items():
        print(f"\n{folder}: {entry.verdict}")
        if entry.verdict != PASSED and entry.detail:
            print("  " + entry.detail.replace("\n", "\n  "))
        if entry.compile.output and not entry.compile.ok:
            print("  compiler output:\n    " + entry.compile.output[-3000:].replace("\n", "\n    "))
        for finding in entry.sanitizer.findings:
            if finding["status"] in FINDINGS:
                print(f"  {finding['tool']}: {finding['count']} finding(s) {finding['note']}".rstrip())
                for line in finding["report"][:6]:
                    print("    " + line)
        for note in entry.notes + entry.score.notes:
            print("  " + note.replace("\n", "\n  "))


def self_check_status(record: StudentRecord, no_gpu_message: str) -> ExitStatus:
    """OK: every lab passed; INCOMPLETE: the rest was not run (no GPU here), nothing failed; FAILED: a lab failed."""
    verdicts = [entry.verdict for entry in record.labs.values()]
    if all(v == PASSED for v in verdicts):
        print("\nself-check: every lab passed")
        return ExitStatus.OK
    if all(v in (PASSED, NOT_RUN) for v in verdicts):
        print(f"\nself-check incomplete: {verdicts.count(NOT_RUN)} GPU lab(s) not run ({no_gpu_message}); "
              f"run it on a machine with a GPU (exit status {ExitStatus.INCOMPLETE.value})")
        return ExitStatus.INCOMPLETE
    failed = [folder for folder, entry in record.labs.items() if entry.verdict not in (PASSED, NOT_RUN)]
    print(f"\nself-check: {len(failed)} lab(s) not passed: {', '.join(failed)}")
    return ExitStatus.FAILED
