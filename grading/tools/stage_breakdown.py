#!/usr/bin/env python3
"""Where a grading's time went, per stage, from its ledgers (grader/outputs/ledger.py): one table per
grader, so one per GPU of a `--gpus` run.

    python3 grading/tools/stage_breakdown.py OUT

Per stage (compile, test, sanitize, time, and the runs again alone):
  students   students that went through it
  runs       its runs (a compile, a test or sanitizer run, a timing turn)
  stage s    the sum over students of the stage's wall time, its waits for a turn included
  run s      the sum of its runs' wall times (runs overlap: this can exceed the grading's wall)
  CPU s      its runs' CPU time, from the cgroups (a student's own, and the timing group during its
             timing turns); "-" where the grader made no cgroups (not root)
  GPU s      the seconds at least one of its runs held the GPU (the union of their intervals)
and for the whole grading: its wall seconds, the seconds the GPU was busy with any run, the seconds
it waited idle (no run held it: compiles, the host lab's timing, the grader's own work, the end of
the class), the grader's own CPU time, and the seconds it spent before that wall began (the run's
plans and expected sums, the sanitizer's self-test: before its first student). "Held the GPU" is the grader's word: a run on the GPU
from its start to its end, process start and host-side work included.
Last, two lines on what limits a grading: the seconds its timing turns ran (host and device: one at
a time on one timing core, each part on its own from 8 cores on, cpu_plan.py), and each part's;
and the seconds the GPU held 1, 2, 3-4 and 5 or more of its shared runs (test and sanitizer runs)
at once. Runs of several processes take turns on
the GPU, so few at a time is where its busy seconds do least.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

GRADING = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(GRADING))

from grader.outputs.ledger import ALONE, LEDGER_FILE, Grading, read  # noqa: E402
from grader.stages import PIPELINE  # noqa: E402

STAGE_ORDER = (*(stage.name for stage in PIPELINE), ALONE)


@dataclass
class StageRow:
    stage: str
    students: int = 0
    runs: int = 0
    stage_s: float = 0.0
    run_s: float = 0.0
    cpu_s: float | None = 0.0
    gpu_s: float = 0.0


@dataclass
class Breakdown:
    worker: str
    students: int
    wall_s: float
    gpu_busy_s: float
    gpu_idle_s: float
    grader_cpu_s: float | None
    rows: list[StageRow] = field(default_factory=list)
    prepared_s: float | None = None   # before the ledger's wall: the grader's plans, expected sums, self-tests
    timing_s: float = 0.0             # the timing turns' union (gpu_gate.py's lanes held)
    host_timing_s: float = 0.0        # the host part's turns' union
    device_timing_s: float = 0.0      # the device part's turns' union
    shared_at_once: dict[str, float] = field(default_factory=dict)   # "1", "2", "3-4", "5+": GPU seconds at that many


SHARED_BANDS = (("1", 1, 1), ("2", 2, 2), ("3-4", 3, 4), ("5+", 5, None))


def union_seconds(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of [start, end) intervals."""
    total, reach = 0.0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def at_once(intervals: list[tuple[float, float]]) -> dict[int, float]:
    """The seconds during which exactly k of the intervals overlap, for each k >= 1."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    seconds: dict[int, float] = {}
    level, last = 0, None
    for moment, step in events:
        if level and last is not None:
            seconds[level] = seconds.get(level, 0.0) + moment - last
        level, last = level + step, moment
    return seconds


def shared_bands(grading: Grading) -> dict[str, float]:
    """SHARED_BANDS of the GPU's shared runs (every GPU span but the timing turns and the runs alone)."""
    levels = at_once([(s.start_s, s.start_s + s.seconds) for s in grading.spans
                      if s.gpu and s.stage not in ("time", ALONE)])
    return {name: round(sum(v for k, v in levels.items() if k >= low and (high is None or k <= high)), 3)
            for name, low, high in SHARED_BANDS}


def breakdown(grading: Grading) -> Breakdown:
    ends = [span.start_s + span.seconds for span in grading.spans]
    wall = grading.closed.seconds if grading.closed else max(ends, default=0.0)
    rows = {name: StageRow(name) for name in STAGE_ORDER}
    for span in grading.spans:
        row = rows.setdefault(span.stage, StageRow(span.stage))
        row.runs += 1
        row.run_s += span.seconds
    for stage in grading.stages:
        row = rows.setdefault(stage.stage, StageRow(stage.stage))
        row.students += 1
        row.stage_s += stage.seconds
        row.cpu_s = None if row.cpu_s is None or stage.cpu_s is None else row.cpu_s + stage.cpu_s
    for row in rows.values():
        row.gpu_s = union_seconds([(s.start_s, s.start_s + s.seconds) for s in grading.spans
                                   if s.gpu and s.stage == row.stage])
        if row.stage == ALONE:
            row.cpu_s = None   # within the stage that ran it again: counted there
    busy = union_seconds([(s.start_s, s.start_s + s.seconds) for s in grading.spans if s.gpu])
    students = len({stage.student for stage in grading.stages})
    return Breakdown(grading.opened.worker, students, round(wall, 3), round(busy, 3), round(max(0.0, wall - busy), 3),
                     grading.closed.grader_cpu_s if grading.closed else None,
                     [row for row in rows.values() if row.runs or row.students], grading.opened.prepared_s,
                     timing_union(grading, (False, True)), timing_union(grading, (False,)),
                     timing_union(grading, (True,)), shared_bands(grading))


def timing_union(grading: Grading, gpu: tuple[bool, ...]) -> float:
    """The seconds timing turns ran: the host part's (gpu False), the device part's (True), or either."""
    return round(union_seconds([(s.start_s, s.start_s + s.seconds) for s in grading.spans
                                if s.stage == "time" and s.gpu in gpu]), 3)


def lines(result: Breakdown) -> list[str]:
    per = max(result.students, 1)
    text = [f"{result.worker}: {result.students} students, {result.wall_s:.1f} s wall; GPU busy {result.gpu_busy_s:.1f} s, "
            f"idle {result.gpu_idle_s:.1f} s ({result.gpu_idle_s / result.wall_s:.0%} of the wall)"
            + ("" if result.prepared_s is None else
               f", after {result.prepared_s:.1f} s of preparing (plans, expected sums, self-tests)")
            if result.wall_s else f"{result.worker}: nothing graded",
            f"{'stage':<10}{'students':>9}{'runs':>7}{'stage s':>10}{'run s':>10}{'CPU s':>10}{'GPU s':>9}"
            f"{'per student: stage s':>22}{'CPU s':>8}{'GPU s':>8}"]
    for row in result.rows:
        cpu = "-" if row.cpu_s is None else f"{row.cpu_s:.1f}"
        cpu_per = "-" if row.cpu_s is None else f"{row.cpu_s / per:.2f}"
        text.append(f"{row.stage:<10}{row.students:>9}{row.runs:>7}{row.stage_s:>10.1f}{row.run_s:>10.1f}{cpu:>10}"
                    f"{row.gpu_s:>9.1f}{row.stage_s / per:>22.2f}{cpu_per:>8}{row.gpu_s / per:>8.2f}")
    if result.grader_cpu_s is not None:
        text.append(f"the grader's own CPU time: {result.grader_cpu_s:.1f} s")
    if result.wall_s:
        text.append(f"timing turns ran {result.timing_s:.1f} s ({result.timing_s / result.wall_s:.0%} of the wall; "
                    f"host part {result.host_timing_s:.1f} s, device part {result.device_timing_s:.1f} s); "
                    "the GPU's shared runs, seconds at " + ", ".join(
                        f"{name}: {result.shared_at_once.get(name, 0.0):.1f}" for name, _, _ in SHARED_BANDS))
    return text


def breakdowns(out: Path) -> list[Breakdown]:
    """Every ledger's last grading under a grading folder, in the order of their paths."""
    found = []
    for path in sorted((out / "work" / ".run").glob(f"**/{LEDGER_FILE}")):
        grading = read(path)
        if grading is not None:
            found.append(breakdown(grading))
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    results = breakdowns(Path(args[0]))
    if not results:
        print(f"no ledger under {args[0]}/work/.run: not a grading folder, or graded before ledgers", file=sys.stderr)
        return 1
    for result in results:
        print("\n".join(lines(result)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
