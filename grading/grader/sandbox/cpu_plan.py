"""Which cores a grader's students may use, which ones are kept for timing, and each student's quota
(cpu_share.py): a pure function of the cores, the students in flight, whether anything is timed,
and the SMT siblings of the timing cores.

The quota is the student cores divided by the students in flight, at least one core: a student
alone is never slowed below one core, and where there are fewer cores than students the equal
weights share them (cpu_share.py). The timing core is the last core the grader may use (the same
as process.timing_core()), kept only when something is timed and there are at least two cores;
its SMT siblings are kept free too, while a student core is left: a busy hardware thread beside
the timed one slows it. From TWO_TIMING_CORES_FROM cores on, a second core (the last one left,
its siblings kept free too) is kept for the device part's timing runs, so that a device timing
turn and a host one never wait for each other's core (gpu_gate.py's timing lanes): the host
part's paired runs keep the timing core, the device part's runs the device timing core.
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


TWO_TIMING_CORES_FROM = 8   # cores; below, one timing core for both parts (their turns then take turns)


@dataclass(frozen=True)
class Plan:
    """Which cores go where, and the quota (the module's doc says why)."""
    cores: tuple[int, ...]            # every core this grader may use
    timing_core: int | None           # kept for the timing runs (the host part's); None: not kept
    student_cores: tuple[int, ...]    # the students' cpuset: no kept core, nor an SMT sibling of one
    quota: float                      # cores per student
    device_timing_core: int | None = None   # kept for the device part's timing runs; None: the timing core's

    @property
    def device_core(self) -> int | None:
        """The core of the device part's timing runs."""
        return self.timing_core if self.device_timing_core is None else self.device_timing_core

    @classmethod
    def of(cls, cores, in_flight: int, timing: bool, timing_at: int | None = None,
           siblings_of=lambda core: {core}) -> Plan:
        cores = tuple(sorted(set(cores)))
        kept = (max(cores) if timing_at is None else timing_at) if timing and len(cores) >= 2 else None
        if kept not in cores:
            kept = None
        students = _without(tuple(core for core in cores if core != kept), kept, siblings_of)
        device = None
        if kept is not None and len(cores) >= TWO_TIMING_CORES_FROM and len(students) >= 2:
            device = students[-1]
            students = _without(students[:-1], device, siblings_of)
        quota = min(float(len(students)), max(1.0, len(students) / max(1, in_flight)))
        return cls(cores, kept, students, quota, device)


def _without(students: tuple[int, ...], kept: int | None, siblings_of) -> tuple[int, ...]:
    """`students` less `kept`'s SMT siblings (a busy hardware thread beside it slows the timed one), if
    a core is left."""
    if kept is None:
        return students
    return tuple(core for core in students if core not in siblings_of(kept)) or students
