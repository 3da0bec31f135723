"""Score: each lab's points from its verdict, sanitizer hazards and performance ratio (policy.toml),
and the student's total; labs not graded now (--labs) kept from the earlier complete grading."""

from __future__ import annotations

from pathlib import Path

from ..judge import scoring
from ..outputs.records import StudentRecord
from .base import Stage


class Score(Stage):
    name = "score"

    def run(self, who: tuple, record: StudentRecord, work: Path) -> None:
        info = record.benchmark
        bench_ran = info.status.startswith("run")
        for folder, entry in record.labs.items():
            lab = self.lab(folder)
            note = entry.benchmark.note if bench_ran else info.status
            measured = bench_ran and not entry.benchmark.no_reference
            entry.score = scoring.score_lab(lab, self.g.policy, entry.verdict, entry.sanitizer.hazards, entry.benchmark.ratio,
                                            measured, note)
        record.total, record.max_total = scoring.student_total([e.score for e in record.labs.values()])

    def carry_over(self, record: StudentRecord, earlier: StudentRecord) -> None:
        """Grading some labs (--labs) keeps the other labs of an earlier complete grading."""
        kept = {folder: entry for folder, entry in earlier.labs.items() if folder not in record.labs}
        if not kept:
            return
        order = [lab.folder for lab in self.g.manifest.labs]
        merged = {**kept, **record.labs}
        record.labs = {folder: merged[folder] for folder in sorted(merged, key=lambda f: (f not in order,
                                                                                          order.index(f) if f in order else 0, f))}
        record.timings += [row for row in earlier.timings if row["lab"] in kept]
        record.flags += [flag for flag in earlier.flags if flag.get("lab") in kept and flag not in record.flags]
        record.notes.append(f"kept from the earlier grading ({earlier.finished}): {', '.join(kept)}")
        record.total, record.max_total = scoring.student_total([e.score for e in record.labs.values()])
