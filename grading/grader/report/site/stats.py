"""The class report's numbers, computed once from the records: every view that shows one of them
(a table, a figure, the summary line) takes it from here, so two views never disagree.

- LabSummary: per lab, the verdict counts, the pass rate (passed / students graded), the mean and
  median of the points (labs not run left out: they have none yet), '!' and '?' counts;
- histogram(): the students' totals in ten bins of the maximum;
- leaderboard(): per lab, every passing and unflagged submission, ranked by the ratio its
  performance points come from (LabBenchmark.ratio), ties being equal to two decimals.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from ...judge.verdicts import MISSING, NOT_RUN, PASSED
from ...manifest import Lab
from ...outputs.records import LabRecord, StudentRecord

RATIO_DIGITS = 2   # a ratio as every view shows it; equal shown values are a tie
BINS = 10


@dataclass
class LabSummary:
    folder: str
    bonus: bool = False
    graded: int = 0                                       # students whose record has the lab
    counts: Counter = field(default_factory=Counter)     # verdict -> students
    points: list[float] = field(default_factory=list)    # the points of those that have points
    max_points: float = 0.0
    hazards: int = 0                                      # '!': a sanitizer finding
    refused_times: int = 0                                # '?': a time the grader refused

    @property
    def passed(self) -> int:
        return self.counts[PASSED]

    @property
    def handed_in(self) -> int:
        return self.graded - self.counts[MISSING]

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.points) if self.points else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.points) if self.points else None


def lab_summaries(records: list[StudentRecord], labs: list[Lab]) -> list[LabSummary]:
    summaries = []
    for lab in labs:
        summary = LabSummary(lab.folder)
        for record in records:
            entry = record.labs.get(lab.folder)
            if entry is None:
                continue
            summary.graded += 1
            summary.counts[entry.verdict] += 1
            summary.bonus = summary.bonus or entry.score.bonus
            summary.max_points = max(summary.max_points, entry.score.max)
            if entry.score.total is not None and entry.verdict != NOT_RUN:
                summary.points.append(entry.score.total)
            summary.hazards += bool(entry.sanitizer.hazards)
            summary.refused_times += bool(entry.benchmark.time_refused) and not entry.sanitizer.hazards
        summaries.append(summary)
    return summaries


def totals(records: list[StudentRecord]) -> list[float]:
    """The totals of the students that have one (a lab not run leaves it blank)."""
    return [record.total for record in records if record.total is not None]


@dataclass(frozen=True)
class Bin:
    low: float     # from (included)
    high: float    # to (excluded; the last bin includes the maximum, and the totals above it: bonus)
    count: int
    last: bool = False

    def holds(self, value: float) -> bool:
        return self.low <= value and (value < self.high or self.last)


def histogram(values: list[float], maximum: float, bins: int = BINS) -> list[Bin]:
    """`values` (totals) in `bins` bins of equal width from 0 to `maximum`; a total above the
    maximum (bonus labs) counts in the last one."""
    if maximum <= 0:
        maximum = max(values, default=0.0) or 1.0
    width = maximum / bins
    empty = [Bin(round(i * width, 2), round((i + 1) * width, 2), 0, i == bins - 1) for i in range(bins)]
    return [Bin(b.low, b.high, sum(1 for value in values if b.holds(value)), b.last) for b in empty]


def shown_ratio(ratio: float) -> str:
    return f"{ratio:.{RATIO_DIGITS}f}"


@dataclass(frozen=True)
class Ranked:
    lab: str
    student: str
    ratio: float               # LabBenchmark.ratio, as shown (RATIO_DIGITS)
    rank: int                  # 1 for the fastest; equal ratios share the rank (1, 2, 2, 4)
    tied: bool
    times: dict = field(default_factory=dict)    # type -> median µs at the largest n
    gbps: dict = field(default_factory=dict)     # type -> GB/s at the largest n


def _at_largest_n(entry: LabRecord, key: str) -> dict[str, float]:
    """Per type, the value of column `key` of the lab's timings row at its largest n."""
    rows = {}
    for row in entry.benchmark.rows:
        try:
            n, value = int(row.get("n", 0)), float(row.get(key) or "nan")
        except ValueError:
            continue
        if row.get("status") == "ok" and value == value and n >= rows.get(row.get("type"), (0, 0.0))[0]:
            rows[row.get("type")] = (n, value)
    return {dtype: value for dtype, (_, value) in rows.items()}


def leaderboard(records: list[StudentRecord], labs: list[Lab],
                flagged: set[tuple[str, str]]) -> tuple[dict[str, list[Ranked]], list[tuple[str, str]]]:
    """Per lab, the ranked submissions; and the (student, lab) pairs that passed with a ratio but
    are not ranked because a flag concerns them (`flagged`: (student, lab), lab "" for all)."""
    ranked, left_out = {}, []
    for lab in labs:
        entries = []
        for record in records:
            entry = record.labs.get(lab.folder)
            if entry is None or entry.verdict != PASSED or entry.benchmark.ratio is None:
                continue
            if (record.student, lab.folder) in flagged or (record.student, "") in flagged \
                    or entry.benchmark.time_refused:
                left_out.append((record.student, lab.folder))
                continue
            entries.append((float(shown_ratio(entry.benchmark.ratio)), record.student, entry))
        entries.sort(key=lambda item: (item[0], item[1]))
        ratios = [ratio for ratio, _, _ in entries]
        ranked[lab.folder] = [Ranked(lab.folder, student, ratio, ratios.index(ratio) + 1, ratios.count(ratio) > 1,
                                     _at_largest_n(entry, "median_us"), _at_largest_n(entry, "gbps"))
                              for ratio, student, entry in entries]
    return {lab: rows for lab, rows in ranked.items() if rows}, left_out
