"""Sharing the machine between the students graded at the same time: a gate for the CPU cores and
one for the GPU.

A gate is a readers-writer lock that prefers the writer. Shared holders run side by side; an
exclusive holder runs alone. Once an exclusive turn waits, no new shared run starts, so the turn is
never starved by a stream of shared runs, and the turns waiting go one after another before the
shared runs resume. One exception, bounded in time: a turn that waits behind a long shared run (a
hang) lets new shared runs in for a while (Gate), since it cannot start before that run ends.

Who holds what (engine.py):
- the CPU gate, shared: compiles and the host lab's test runs; exclusive: the timing of host items
  (lab 01) and a run again alone;
- the GPU gate, shared: GPU test and sanitizer runs (up to [tests] concurrency); exclusive: every
  device timing run, a run again alone, and the host items' timing where [benchmark]
  host_part_holds_gpu says so (idle there: its runs have no GPU).
So a ratio measured while a class is graded means what it means for one student: the host items are
timed with no compile and no host test run on the cores, the device items with nothing else on the
GPU while other students' compiles go on (they do not move a GPU time, and they keep the class moving).

A third gate, the timing lane, is only ever held exclusive: every timing turn of one timing core
holds it (cpu_share.py: the host part's and the device part's runs share one core below 8 cores,
and then one lane; from 8 cores on each part has a core and a lane of its own, runs.timing_lane, so
a device turn that has the GPU never waits for a host turn). It is taken last: a turn first
has its gate to itself (the GPU's shared runs, or the compiles and host test runs, ended), then the
lane. So the lane is held only while timing runs run, never while a turn waits for another
student's runs to end: a device turn waits for the GPU's runs (seconds; a hang's run, while it lets
new runs in, up to its limit) while a host turn uses the timing core, and the other way round. What
that costs, on one lane: a turn that has its gate and waits for the lane holds that gate idle, for
at most the other part's timing runs (on an H100, 2026-11-28, a host turn took about 2.5 s, a device
turn 2 s; in a class of 40 on an H200 that day, the GPU's idle 27 s of 331 s).
With the lane taken first, the timing core had waited 142 s of a 355 s grading of 40 before device
turns, with students queued for their timing: turns that held the lane while the GPU's runs ended.

Lock order: the compile slots, then the CPU gate, then the GPU gate, then the timing lane (a turn's)
or the GPU's [tests] slots (a shared run's). A turn that needs both gates first reserves the GPU's
(Gate.reserved: its shared runs kept out and drained, nothing held), so the cores are not held idle
while the GPU's runs drain: in the attack class (H100, 2026-11-28) a run alone held the CPU gate
waiting behind a hog's 50-s GPU run, and no compile started meanwhile.
A thread never waits for one of these while it holds a later one (and never takes a gate it holds
again), so no two threads can wait for each other. Each gate checks the order of the gates held by
the calling thread and raises LockOrderError when it is broken.

`quiet_since`: a reference run measured at the end of one timing turn may serve as the next
student's "before" (benchmark.ClassTiming) only when nothing ran on that gate in between. Every
shared run counts as work on its gate, and so does an exclusive turn, unless it is `idle` there: it
holds the gate only to keep others out (the host timing holds the GPU idle: its runs have no GPU).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from dataclasses import dataclass

CPU_RANK, GPU_RANK, LANE_RANK = 0, 1, 2   # the lock order: a lower rank is taken first
_held = threading.local()   # the ranks of the gates the calling thread holds


class LockOrderError(RuntimeError):
    """A gate was taken against the lock order: a deadlock waiting to happen (a grader bug)."""


@dataclass(frozen=True)
class Turn:
    """One exclusive turn: the gate's work count when it began and when it had begun."""
    before: int
    after: int     # before + 1, or before when the turn is idle on this gate

    def quiet_since(self, earlier: Turn | None) -> bool:
        """Nothing ran on the gate between the end of `earlier` and this turn."""
        return earlier is not None and self.before == earlier.after


class Gate:
    """`long_s`, `behind_long_s`: an exclusive turn that waits behind a shared run held `long_s` or more
    (a call that never ends holds its test run for [tests] call_timeout_s) lets new shared runs in for
    its first `behind_long_s` of waiting: it cannot start before that run ends anyway, and the resource
    would idle meanwhile. Past that, no new shared run starts until the turn has had the gate, so a
    turn waits at most that long plus the shared runs it let in, beyond the runs ahead of it.
    `hog_s`, `behind_hog_s`: behind a shared run held `hog_s` or more (longer than any honest run: a
    hog), new shared runs go on for the turn's first `behind_hog_s` of waiting (None: not longer than
    behind a long run). `long_run_held()` says whether a run held long_s or more holds the gate now."""

    LONG_S, BEHIND_LONG_S = 5.0, 15.0   # honest test and sanitizer runs took under 5 s in a class of 16
                                        # (H200, 2026-11-27); a hang on a large input holds its run up to
                                        # 20 s ([tests] call_timeout_s; on a small one about call_floor_s)
    HOG_S = 25.0   # honest runs took at most 11.5 s (a compile), 8.6 s (a test run of 11 labs) and 5.5 s
                   # (a sanitizer run) in the classes of 2026-11-28; the attack class's hogs held theirs
                   # 30 s (squatter's sanitizer runs), 48 s (cpu_burner's host test) and 52 s (gpuhog's)

    def __init__(self, name: str, rank: int, long_s: float = LONG_S, behind_long_s: float = BEHIND_LONG_S,
                 hog_s: float = HOG_S, behind_hog_s: float | None = None) -> None:
        self.name, self.rank = name, rank
        self.long_s, self.behind_long_s = long_s, behind_long_s
        self.hog_s, self.behind_hog_s = hog_s, behind_hog_s
        self.clock = time.monotonic
        self._condition = threading.Condition()
        self._sharing = 0           # shared holders now
        self._exclusive = False     # an exclusive holder now
        self._waiting_exclusive = 0
        self._waiting_since = 0.0   # when the exclusive turn next in line began waiting for the shared runs
        self._shared_since: dict[int, float] = {}   # each shared holder's start
        self._holders = itertools.count()
        self._work = 0              # runs on this gate so far: the "something else ran" counter
        self.let_in_behind_long = 0  # shared runs started behind a long one while a turn waited

    def _behind_long_run(self) -> bool:
        """An exclusive turn waits, for less than behind_long_s, behind a shared run held long_s or more,
        or for less than behind_hog_s behind one held hog_s or more."""
        if self._exclusive:
            return False
        now = self.clock()
        waited, held = now - self._waiting_since, [now - started for started in self._shared_since.values()]
        if waited < self.behind_long_s and any(seconds >= self.long_s for seconds in held):
            return True
        return (self.behind_hog_s is not None and waited < self.behind_hog_s
                and any(seconds >= self.hog_s for seconds in held))

    def long_run_held(self) -> bool:
        """A shared run has held the gate long_s or more: a turn's wait for the gate may be long."""
        with self._condition:
            now = self.clock()
            return any(now - started >= self.long_s for started in self._shared_since.values())

    @contextlib.contextmanager
    def _ordered(self):
        held = _held.__dict__.setdefault("ranks", [])
        if any(rank >= self.rank for rank in held):
            raise LockOrderError(f"the {self.name} gate taken while holding gates of ranks {held} "
                                 "(order: CPU gate, GPU gate, timing lane; gpu_gate.py)")
        held.append(self.rank)
        try:
            yield
        finally:
            held.remove(self.rank)

    @contextlib.contextmanager
    def shared(self):
        with self._ordered():
            with self._condition:
                while self._exclusive or (self._waiting_exclusive and not self._behind_long_run()):
                    # timed: a run becomes long, and a waiting turn's let-in time ends, with no notify
                    self._condition.wait(self._poll_s() if self._waiting_exclusive and not self._exclusive else None)
                self.let_in_behind_long += 1 if self._waiting_exclusive else 0
                holder = next(self._holders)
                self._shared_since[holder] = self.clock()
                self._sharing += 1
                self._work += 1
            try:
                yield
            finally:
                with self._condition:
                    self._sharing -= 1
                    del self._shared_since[holder]
                    self._condition.notify_all()

    @contextlib.contextmanager
    def exclusive(self, idle: bool = False):
        """Yields the Turn: keep it, and ask the next turn's quiet_since() about it. `idle`: the turn
        runs nothing on this gate's resource, it only keeps the others out."""
        with self._ordered():
            with self._condition:
                self._wait_in_line(keep=False)
                self._exclusive = True
                before = self._work
                self._work += 0 if idle else 1
                turn = Turn(before, self._work)
            try:
                yield turn
            finally:
                with self._condition:
                    self._exclusive = False
                    self._waiting_since = self.clock()   # the next turn in line waits for shared runs from now
                    self._condition.notify_all()

    @contextlib.contextmanager
    def reserved(self):
        """Keeps new shared runs out, as a waiting exclusive turn does, and waits until no shared run or
        exclusive turn is left, without holding the gate: a turn that needs both gates (runs.py's
        `both`) waits for this one's runs to drain first and holds nothing meanwhile, then takes the
        gates in the lock order, this one's shared runs still kept out. No lock-order check: a
        reservation holds nothing any other thread waits for but the shared runs it keeps out, and
        no shared holder of one gate waits for the other."""
        with self._condition:
            self._wait_in_line(keep=True)
        try:
            yield
        finally:
            with self._condition:
                self._waiting_exclusive -= 1
                self._condition.notify_all()

    def _wait_in_line(self, keep: bool) -> None:
        """With the condition held: counted as a waiting exclusive turn (no new shared run starts,
        but behind a long one) until no shared run or exclusive turn is left; still counted after
        that where `keep` (a reservation), until its end."""
        self._waiting_exclusive += 1
        if self._waiting_exclusive == 1 and not self._exclusive:
            self._waiting_since = self.clock()
        drained = False
        try:
            while self._exclusive or self._sharing:
                self._condition.wait()
            drained = True
        finally:
            if not (keep and drained):
                self._waiting_exclusive -= 1
                self._condition.notify_all()

    def _poll_s(self) -> float:
        return max(0.01, min(self.long_s, self.behind_long_s) / 10)
