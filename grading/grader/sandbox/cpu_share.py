"""A CPU share per student in flight, and a core kept for timing (cgroups: cgroups.py).

Students graded at the same time share the cores. Without a cgroup the kernel shares them by
thread, or by session where its autogroup is on: a student that starts hundreds of spinning
threads, or processes each in a session of its own, takes nearly every core, and a classmate's
compile or test run beside it times out. So each student in flight gets a cgroup of its own for
all its runs (compiles, tests, sanitizer runs; a run joins it between fork and exec, so nothing
it starts is ever outside it), with
- the same weight as every other student's: under contention each gets an equal part of the
  cores, whatever the number of its threads, processes or sessions;
- a quota of the student cores divided by the students in flight ([pipeline] students,
  --in-flight), at least one core (a student alone is never slowed below one core): what it
  may take when the others are idle;
- a cpuset without the timing cores.
The timing core is the last core this grader may use (process.timing_core()). The timing runs,
the trusted reference runs and the student's sandboxed timing run (and anything they start),
join a cgroup of their own whose cpuset is that core alone, without a quota, and are pinned to it:
no student's run can reach it, and the student's timing run can spin nowhere else. Where a second
core is kept (cpu_plan.py), the device part's timing runs have it, in a group of their own
(DEVICE_TIMING), so a host turn and a device turn run at once, each on its own core. The grader's own
threads, and the trusted programs they start, keep to the student cores meanwhile (own_threads.py).
It is kept only when this grading times anything (a GPU, and no --no-bench) and there are at least
2 cores; with one core there is nothing to keep: the timing runs and the students share it (the
host lab is timed with the CPU gate held alone anyway: gpu_gate.py), and the quota, a whole core,
binds nobody.

Several graders on one machine: each has a subtree of its own (cgroups.py), and the workers of
--gpus each get a slice of the cores (workers.py), so each keeps a timing core of its own. Two
graders started by hand on one machine (--shard) should each be given their own cores (taskset).

A host lab is timed paired (benchmark.py): the timekeeper runs the reference's worker and the
student's call by call, and freezes the student's while the reference's calls run. The student's
worker is then in a cgroup of its own, "paired": the timing core, no quota, and the freezer (v2's
cgroup.freeze, v1's freezer tree). Where there is no freezer there is no such group, and host labs
are timed as device labs are, run by run (paired_why_not says why).

The CPU time of each cgroup is also the evidence that the other students' runs held the cores
while one run timed out (held()): such a run is run again alone (engine.py).

Where cgroups cannot be used (not root, no writable tree with the cpu controller, a controller
that cannot be enabled), the grader says why in its `inputs:` line and goes on as before.

This file decides the groups; cpu_subtree.py writes their folders and files, v1's or v2's.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from . import cgroups
from .cgroups import ROOT_NAME, CgroupError, Fs, Trees
from .cpu_plan import Plan, siblings
from .cpu_subtree import Group, SubtreeFiles
from .process import timing_core

TIMING = object()          # the timing runs' group (preexec's `who`): no student name can be it
DEVICE_TIMING = object()   # the device part's timing runs' group: TIMING's where no second core is kept
HELD_SHARE = 0.5      # the others held the cores when they used at least this much of the run's own share
SELF_TEST_TIMEOUT_S = 10
SUBTREE_ATTEMPTS = 5


@dataclass(frozen=True)
class PairedGroup:
    """Where a paired run's student worker goes (the timekeeper moves it there before it execs)."""
    folders: tuple[Path, ...]   # one per tree, the freezer's included
    freeze: Path                # the folder the timekeeper freezes: v2's cgroup.freeze, v1's freezer.state


class CpuShare(SubtreeFiles):
    def __init__(self, trees: Trees | None, why_not: str = "", fs: Fs | None = None, cores=None,
                 name: str | None = None) -> None:
        self.trees, self.why_not, self.fs = trees, why_not, fs or Fs()
        self._cores = set(cores) if cores is not None else None
        self.name = name or cgroups.own_name()
        self.plan: Plan | None = None
        self.swept: list[str] = []
        self._lock = threading.Lock()
        self._groups: dict[str, Group] = {}
        self._timing: Group | None = None
        self._device_timing: Group | None = None   # on the device timing core, where one is kept
        self._paired: PairedGroup | None = None
        self._paired_why = ""
        self._finished_s = 0.0     # the CPU time of the students' cgroups removed so far
        self._ids = itertools.count(1)
        self._wanted = (1, False)     # start()'s students in flight and whether anything is timed

    @classmethod
    def off(cls, why: str) -> CpuShare:
        return cls(None, why)

    @classmethod
    def detect(cls) -> CpuShare:
        """This machine's: the cgroup trees when the grader is root and they are mounted writable."""
        if os.geteuid() != 0:
            return cls.off("not root")
        try:
            mounts = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace")
            own = Path("/proc/self/cgroup").read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return cls.off(f"cannot read /proc/self/mounts or /proc/self/cgroup: {exc}")
        found = cgroups.detect(mounts, own=own)
        return cls.off(found) if isinstance(found, str) else cls(found)

    @property
    def on(self) -> bool:
        return self.trees is not None and self.plan is not None

    def describe(self) -> str:
        """For the `inputs:` line and the records, after start()."""
        if self.trees is None:
            return f"CPU: no cgroup per student ({self.why_not})"
        if self.plan is None:
            return f"CPU: a cgroup v{self.trees.version} share per student"
        plan = self.plan
        kept = ""
        if plan.timing_core is not None:
            timing = {plan.timing_core, plan.device_core}
            idle = sorted(set(plan.cores) - set(plan.student_cores) - timing)
            kept = (f"; core {plan.timing_core} kept for timing" if plan.device_timing_core is None else
                    f"; cores {plan.timing_core} and {plan.device_timing_core} kept for timing (host part, device part)")
            kept += f" (SMT siblings {cgroups.cpu_list(idle)} idle)" if idle else ""
        return (f"CPU: a cgroup v{self.trees.version} share per student ({plan.quota:g} core(s) each of cores "
                f"{cgroups.cpu_list(plan.student_cores)}{kept})")

    # ---- the grader's subtree

    def start(self, in_flight: int, timing: bool) -> None:
        """Makes this grader's subtree (after removing dead graders' leftovers) and the timing group.
        On any failure the share is off, with the reason, and nothing of it is left behind."""
        if self.trees is None:
            return
        try:
            self.swept = cgroups.sweep(self.fs, self.trees)
            cores = self._usable()
            self._wanted = (in_flight, timing)
            real = self._cores is None   # tests give the cores, and have no timing core or siblings of their own
            kept = timing and self.trees.cpuset is not None   # without a cpuset no core can be kept from the students
            self.plan = Plan.of(cores, in_flight, kept, timing_core() if real else None,
                                siblings if real else lambda core: {core})
            for attempt in range(SUBTREE_ATTEMPTS):
                try:
                    self._make_subtree(cores)
                    break
                except CgroupError as exc:   # another grader removed the shared folder as it ended: again
                    if exc.errno != errno.ENOENT or attempt == SUBTREE_ATTEMPTS - 1:
                        raise
            everything = self.plan.cores if self.plan.timing_core is None else (self.plan.timing_core,)
            self._timing = self._make("timing", everything, None)
            if self.plan.device_timing_core is not None:
                self._device_timing = self._make("device-timing", (self.plan.device_timing_core,), None)
            self._self_test()
            self._paired = self._make_paired(everything)
        except (CgroupError, OSError, subprocess.SubprocessError, ValueError) as exc:
            self.close()
            self.trees, self.plan, self.why_not = None, None, str(exc)

    def _usable(self) -> set[int]:
        """The grader's cores (its affinity), within the cpuset tree's root where there is one."""
        cores = set(self._cores) if self._cores is not None else set(os.sched_getaffinity(0))
        if self.trees.cpuset is not None:
            name = "cpuset.cpus.effective" if self.trees.version == 2 else "cpuset.effective_cpus"
            with contextlib.suppress(OSError, ValueError):   # v2: only there once the cpuset is enabled
                allowed = cgroups.parse_cpu_list(self.fs.read(self.trees.cpuset / name))
                cores = cores & allowed or cores
        return cores

    def _make_paired(self, cores) -> PairedGroup | None:
        """The paired group, where the trees have a freezer; else None and why (paired_why_not)."""
        if self.trees.freezer is None:
            self._paired_why = "no cgroup freezer is mounted"
            return None
        group = self._make("paired", cores, None)
        freeze = self.trees.freezer / ROOT_NAME / self.name / "paired"
        if not (freeze / ("cgroup.freeze" if self.trees.version == 2 else "freezer.state")).is_file():
            for folder in group.folders:
                cgroups.remove(self.fs, folder)
            self._paired_why = f"the cgroup {freeze} has no freezer"
            return None
        return PairedGroup(group.folders, freeze)

    @property
    def paired(self) -> PairedGroup | None:
        """The paired runs' group, or None (paired_why_not says why)."""
        return self._paired if self.on else None

    @property
    def paired_why_not(self) -> str:
        if not self.on:
            return f"no CPU share ({self.why_not or 'not started'})"
        return self._paired_why

    def thaw_paired(self) -> None:
        """After a paired run, however it ended: a v1 freezer keeps a frozen process from dying."""
        if self._paired is None:
            return
        name = "cgroup.freeze" if self.trees.version == 2 else "freezer.state"
        with contextlib.suppress(CgroupError):
            cgroups.write(self.fs, self._paired.freeze / name, "0" if self.trees.version == 2 else "THAWED")

    def _self_test(self) -> None:
        """A short program joins the timing group: Popen raises if a run could not join one."""
        program = shutil.which("true") or "/bin/true"
        subprocess.run([program], preexec_fn=cgroups.joiner(self._timing.folders), timeout=SELF_TEST_TIMEOUT_S,
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def close(self) -> None:
        """Removes every cgroup of this grader, and the shared folder when no other grader has one."""
        if self.trees is None:
            return
        with self._lock:
            self._groups.clear()
            self._timing = self._device_timing = None
        self.thaw_paired()
        self._paired = None
        for folder in self._folders(self.name):
            cgroups.remove(self.fs, folder)
        for folder in self._folders():
            with contextlib.suppress(OSError):
                self.fs.rmdir(folder)   # fails while another grader's subtree is there: it stays

    # ---- the timing core

    def grader_cores(self) -> set[int] | None:
        """The cores the grader's own threads keep to (own_threads.py): the students', while a timing
        core is kept on this machine's own cores; None (anywhere) otherwise."""
        if not self.on or self.plan.timing_core is None or self._cores is not None:
            return None
        return set(self.plan.student_cores)

    def timing_cpu(self, host: bool) -> int | None:
        """The core a timing run is pinned to: the kept timing core, or for a device run the device
        timing core (its own where one is kept: cpu_plan.py); without a kept core, a host run's
        timing_core() (no migration in the middle of a timed loop) and a device run's none."""
        if self.on and self.plan.timing_core is not None:
            return self.plan.timing_core if host else self.plan.device_core
        return timing_core() if host else None

    @property
    def parts_share_a_core(self) -> bool:
        """Whether the host part's and the device part's timing runs use one core (so their turns must
        take turns: one timing lane, gpu_gate.py), as everywhere without a second kept core."""
        return not (self.on and self.plan.device_timing_core is not None)

    # ---- the students

    @contextlib.contextmanager
    def student(self, name: str):
        """`name`'s cgroup (an opaque name: /sys shows it to every sandbox) for the `with` block: the
        time the student is in flight. Its runs join it through preexec(). Yields "" or, where the
        cgroup could not be made, why (its runs then go where the grader is: said, not fatal)."""
        if not self.on:
            yield ""
            return
        try:
            group = self._make(f"s{next(self._ids)}", self.plan.student_cores, self.plan.quota)
        except CgroupError as exc:
            yield f"its runs have no CPU share: {exc}"
            return
        with self._lock:
            self._groups[name] = group
        try:
            yield ""
        finally:
            with self._lock:
                del self._groups[name]
                self._finished_s += self._usage(group) or 0.0
            for folder in group.folders:
                cgroups.remove(self.fs, folder)

    @contextlib.contextmanager
    def unlimited(self, student: str):
        """No quota on `student`'s cgroup for the `with` block (a run again alone, nothing else running)."""
        with self._lock:
            group = self._groups.get(student)
        if group is None:
            yield
            return
        self._set_quota(group.name, None)
        try:
            yield
        finally:
            with contextlib.suppress(CgroupError):
                self._set_quota(group.name, self.plan.quota)


    def rescue(self, pid: int) -> str:
        """Moves `pid`, a killed run's process that its share starves (ending.py), into the grader's own
        cgroup of the cpu tree, where no quota holds it: "" or why it could not."""
        if self.trees is None or self.trees.own is None:
            return "the grader's own cgroup is not known here"
        try:
            cgroups.write(self.fs, self.trees.own / "cgroup.procs", str(pid))
            return ""
        except CgroupError as exc:
            return str(exc)

    def group_of(self, student: str) -> Group | None:
        with self._lock:
            return self._groups.get(student)

    def preexec(self, who, inner=None):
        """`inner` (a Popen preexec_fn, or None) that first moves the child into `who`'s cgroup: a
        student in flight, TIMING, DEVICE_TIMING, or anyone else (None, a probe of the grader's): no cgroup."""
        with self._lock:
            group = self._timing_group(who) if who in (TIMING, DEVICE_TIMING) else self._groups.get(who)
        if group is None:
            return inner
        join = cgroups.joiner(group.folders)

        def join_then_inner() -> None:
            join()
            if inner is not None:
                inner()
        return join_then_inner

    def _usage(self, group: Group) -> float | None:
        return cgroups.usage_seconds(self.fs, self.trees, group.usage) if group.usage is not None else None

    def seconds_of(self, student: str) -> float | None:
        """The CPU time of a student in flight so far (its cgroup's), or None."""
        group = self.group_of(student)
        return self._usage(group) if group is not None and self.trees is not None else None

    def _timing_group(self, who) -> Group | None:
        return self._device_timing if who is DEVICE_TIMING and self._device_timing is not None else self._timing

    def timing_seconds(self, host: bool = True) -> float | None:
        """The CPU time so far of a part's timing group (every timing run of that part but a paired run's
        student worker), or None."""
        timing = self._timing_group(TIMING if host else DEVICE_TIMING)
        return self._usage(timing) if timing is not None and self.on else None

    def others_seconds(self, student: str) -> float | None:
        """The CPU time, so far, of every other student's cgroup of this grading (those that ended
        included), or None where it cannot be read: the difference over a run is what its classmates
        took while it ran. The timing group is no student's: its core is not the students'."""
        if not self.on or self.trees.usage is None:
            return None
        with self._lock:
            total = self._finished_s
            for name, group in self._groups.items():
                if name != student:
                    used = self._usage(group)
                    if used is None:
                        return None
                    total += used
        return total

    def held(self, students: set[str], others_cpu_s: float | None, seconds: float) -> str | None:
        """Whether the other students' runs held the cores while a run of `seconds` ran (`students`:
        the other students whose runs ran beside it; `others_cpu_s`: their cgroups' CPU time in that
        window, None where unmeasured). Returns the evidence in words for the lab's notes, or None."""
        if others_cpu_s is None:
            if not students:
                return None
            return "another student's runs ran beside it; no cgroup here measures their CPU time"
        quota = self.plan.quota if self.plan else 1.0
        if others_cpu_s < HELD_SHARE * quota * seconds or others_cpu_s <= 0:
            return None
        return (f"they used {others_cpu_s:.1f} CPU-seconds in its {seconds:.1f} s; its own share: {quota:g} "
                "core(s)")
