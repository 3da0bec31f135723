"""Which cores a grader's students may use, which one is kept for timing, and each student's quota
(cpu_share.py): a pure function of the cores, the students in flight, whether anything is timed,
and the SMT siblings of the timing core.

The quota is the student cores divided by the students in flight, at least one core: a student
alone is never slowed below one core, and where there are fewer cores than students the equal
weights share them (cpu_share.py). The timing core is the last core the grader may use (the same
as process.timing_core()), kept only when something is timed and there are at least two cores;
its SMT siblings are kept free too, while a student core is left: a busy hardware thread beside
the timed one slows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .cgroups import parse_cpu_list


def siblings(core: int) -> set[int]:
    """The hardware threads of `core`'s physical core (SMT), itself included; {core} where unknown."""
    path = Path(f"/sys/devices/system/cpu/cpu{core}/topology/thread_siblings_list")
    try:
        return parse_cpu_list(path.read_text(encoding="ascii")) | {core}
    except (OSError, ValueError):
        return {core}


@dataclass(frozen=True)
class Plan:
    """Which cores go where, and the quota (the module's doc says why)."""
    cores: tuple[int, ...]            # every core this grader may use
    timing_core: int | None           # kept for the timing runs; None: not kept
    student_cores: tuple[int, ...]    # the students' cpuset: neither the timing core nor its SMT siblings
    quota: float                      # cores per student

    @classmethod
    def of(cls, cores, in_flight: int, timing: bool, timing_at: int | None = None,
           siblings_of=lambda core: {core}) -> Plan:
        cores = tuple(sorted(set(cores)))
        kept = (max(cores) if timing_at is None else timing_at) if timing and len(cores) >= 2 else None
        if kept not in cores:
            kept = None
        students = tuple(core for core in cores if core != kept)
        if kept is not None:   # a busy hardware thread beside it slows the timed one: kept free too, if one is left
            students = tuple(core for core in students if core not in siblings_of(kept)) or students
        quota = min(float(len(students)), max(1.0, len(students) / max(1, in_flight)))
        return cls(cores, kept, students, quota)
