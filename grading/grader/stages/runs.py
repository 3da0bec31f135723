"""Where a student's runs wait for their turn, and a run again alone.

A correctness or sanitizer run shares the GPU (or, for the host lab, the cores) with other
students' runs; a timing part takes the cores or the GPU alone; a run that failed for a resource
every run shares while a classmate's runs shared it is run again alone, once, within the student's
[pipeline] retry_alone_s (gpu_gate.py has the lock order, neighbours.py who ran beside whom).
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

from . import benchmark
from ..judge.flags import add_flag
from ..judge.resources import ResourceFailure, retry_note
from ..manifest import Lab
from ..outputs import events as ev
from ..outputs.ledger import ALONE
from ..outputs.records import LabRecord, StudentRecord
from ..sandbox.process import stopping
from .gpu_gate import Gate, Turn
from .neighbours import Met
from .timing import Time
from .toolchain import sha256_of


class Runs:
    def __init__(self, grader):
        self.g = grader
        self._timing_turns: dict[str, Turn] = {}   # per timing part, its latest turn (benchmark.HOST, DEVICE)
        self._alone_seconds: dict[str, float] = {}   # per student, the time its runs again alone took
        self._alone_lock = threading.Lock()
        self._timing_cpu: dict[str, float] = {}   # per student, its timing turns' CPU time (the timing cgroup's)

    @contextlib.contextmanager
    def sharing(self, lab: Lab):
        """A correctness or sanitizer run, alongside others and never during a timing run or a run
        alone: a GPU lab's on the GPU (up to [tests] concurrency), the host lab's on the cores, with
        the compiles (its sandbox has no GPU)."""
        if lab.host:
            with self.g.cpu_gate.shared():
                yield
            return
        with self.g.gpu_gate.shared(), self.g.gpu_slots:
            yield

    def again_alone(self, who: tuple, record: StudentRecord, entry: LabRecord, what: str,
                    failure: ResourceFailure | None, met: Met, gpu: bool, rerun, outcome):
        """`rerun()` once more, alone, when the first run (of `what`, on the GPU or not) failed for a
        shared resource while another student's runs shared it, or timed out while they held the
        cores (cpu_share.held). Returns the retry's result (None: the first run's stands), says so in
        the lab's notes and flags it; `outcome(result)` names how it ended."""
        if failure is None or stopping():
            return None
        if failure.cores:
            where = self.g.cpu.held(met.students, met.others_cpu_s, met.seconds)
        else:
            where = ("GPU" if gpu and met.on_gpu else "machine") if met.shared(failure.gpu_only) else None
        if where is None:
            return None
        student = record.student
        budget = self.g.policy.pipeline.retry_alone_s
        with self._alone_lock:
            spent = self._alone_seconds.get(student, 0.0)
        result = None
        if spent >= budget:   # a student can make its own runs fail so: retries hold the whole machine
            then = (f"not run again: this student's runs alone took {spent:.0f} s already "
                    f"([pipeline] retry_alone_s = {budget:g})")
        else:
            # Away while it waits for and runs alone: its place goes to the next student (flight.py).
            with self.g.flight.away(student), self.alone(student, gpu):
                started = time.monotonic()
                try:
                    result = rerun()
                finally:
                    took = time.monotonic() - started
                    with self._alone_lock:
                        self._alone_seconds[student] = self._alone_seconds.get(student, 0.0) + took
            then = f"run again alone: {outcome(result)}"
        note = retry_note(what, failure, where, then)
        entry.notes.append(note)
        if result is not None:
            add_flag(record.flags, "retried_alone", entry.folder, note)
        self.g.emit(ev.Retried(*who, lab=entry.folder, note=note))
        return result

    @contextlib.contextmanager
    def alone(self, student: str, gpu: bool):
        """No other student's compile, test, sanitizer or timing run at the same time: the CPU gate,
        then the GPU gate (the lock order), both exclusive; idle on the one the run does not use. The
        student's CPU quota is lifted meanwhile: a run alone has every student core, as in a grading
        of one student at a time."""
        with self.both(cpu_idle=gpu, gpu_idle=not gpu), self.g.neighbours.run(student, gpu, ALONE), \
                self.g.cpu.unlimited(student):   # as if graded alone
            yield

    LONG_WAIT_S = 120.0   # the longest a turn that needs both gates waits for long runs on the cores first
    POLL_S = 0.25

    @contextlib.contextmanager
    def both(self, cpu_idle: bool, gpu_idle: bool):
        """The CPU gate, then the GPU gate, both exclusive (the lock order). The GPU's shared runs drain
        first with neither gate held (Gate.reserved): compiles and host test runs go on meanwhile. But
        while a long run holds the cores (Gate.long_run_held), for up to LONG_WAIT_S, it waits first
        without keeping anything out, and it gives the GPU's reservation back if one began while the
        GPU drained: held while the turn waited for the cores, that reservation kept every GPU run
        out (in the attack class on an H100, 2026-11-28, 41 s behind a student's own 47-s host test,
        while all four places waited for their GPU tests). Yields the two gates' turns (CPU, GPU)."""
        deadline = time.monotonic() + self.LONG_WAIT_S

        def cores_busy() -> bool:
            return self.g.cpu_gate.long_run_held() and time.monotonic() < deadline and not stopping()
        while True:
            while cores_busy():
                time.sleep(self.POLL_S)
            with self.g.gpu_gate.reserved():
                if cores_busy():
                    continue   # the reservation goes back: the GPU's runs go on while the cores' long run does
                with self.g.cpu_gate.exclusive(idle=cpu_idle) as cpu_turn, \
                        self.g.gpu_gate.exclusive(idle=gpu_idle) as gpu_turn:
                    yield cpu_turn, gpu_turn
                return

    def intact(self, entry: LabRecord) -> bool:
        """The module about to run is the one compiled (the sandbox cannot write it; this says so)."""
        path = Path(entry.module_path)
        return path.is_file() and sha256_of(path) == entry.compile.module_sha256

    @contextlib.contextmanager
    def timing_turn(self, student: str, part: str, alone: bool = False):
        """One part of a student's timing: the host items with no compile or host test run on the cores
        (the CPU gate), and with the GPU held idle too where [benchmark] host_part_holds_gpu says so or
        `alone` (a timing again, benchmark.py); the device items with nothing else on the GPU, while
        other students' compiles go on, or `alone` with the cores held too, idle. The part's timing
        lane last (timing_lane: one turn at a time on a timing core), once the gates are this turn's:
        a lane is never held while other students' runs drain (gpu_gate.py). Yields whether nothing
        ran there since this part's last turn."""
        host = part == benchmark.HOST
        with contextlib.ExitStack() as stack:
            if host and (alone or self.host_part_holds_gpu()):
                turn, _ = stack.enter_context(self.both(cpu_idle=False, gpu_idle=True))
            elif host:
                turn = stack.enter_context(self.g.cpu_gate.exclusive())
            elif alone:
                _, turn = stack.enter_context(self.both(cpu_idle=True, gpu_idle=False))
            else:
                turn = stack.enter_context(self.g.gpu_gate.exclusive())
            stack.enter_context(self.timing_lane(host).exclusive())
            stack.enter_context(self.g.neighbours.run(student, not host, Time.name))
            before = self.g.cpu.timing_seconds(host)   # the part's timing runs are this turn's: theirs is this student's
            try:
                yield turn.quiet_since(self._timing_turns.get(part))
            finally:
                after = self.g.cpu.timing_seconds(host)
                if before is not None and after is not None:
                    self._timing_cpu[student] = self._timing_cpu.get(student, 0.0) + max(0.0, after - before)
            self._timing_turns[part] = turn

    def timing_lane(self, host: bool) -> Gate:
        """The lane of a part's timing turns: one for both where their runs share one timing core, so
        that a host turn and a device turn never run at once on it; each part's own where a second core
        is kept for the device part (cpu_plan.py): then a device turn that has the GPU never waits for
        a host turn, nor the other way round."""
        return self.g.timing_lane if host or self.g.cpu.parts_share_a_core else self.g.device_timing_lane

    def host_part_holds_gpu(self) -> bool:
        """[benchmark] host_part_holds_gpu, or a host lab that earns performance points: then nothing
        but the host part's own runs may be on the machine while it is timed, as in a solo grading."""
        return self.g.policy.benchmark.host_part_holds_gpu or any(
            self.g.policy.performance_points(lab) > 0 for lab in self.g.options.labs if lab.host)

    def timing_cpu_seconds(self, student: str) -> float:
        """The CPU time of `student`'s timing turns so far (the trusted and the student's timing runs)."""
        return self._timing_cpu.get(student, 0.0)
