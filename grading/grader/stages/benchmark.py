"""Timing students' passing labs against the references, so that no student code can fake a time.

Process-level A B A B A ...: a trusted run of every reference and the baselines (the read roof,
CUB), then a student's modules in the sandbox, then the trusted run again, which is also the next
student's "before". Every run is started and clocked by the trusted timekeeper (a process outside
the worker: grading/runner/timekeeper_main.cpp), which writes each device call's input just before
the call may start and stamps, on its own clock, when it began and when the call was reported. A
time the worker claims counts only if that clock agrees: the student's calls may take beyond their
claim no more than the reference's calls of the same cell took beyond theirs, plus the policy's
slack ([benchmark] clock_slack_us, clock_slack_ratio); otherwise the lab's timing is CONTRADICTED
and earns no performance points. A student is timed in two parts, each with the machine as it needs it (the
engine's `turn`, gpu_gate.py): the host lab's items with nothing else on the cores or the GPU, then
the device labs' with nothing else on the GPU. Each part has its own A B A and its own "before" to
reuse. Both sides are the same timing worker on the same inputs (the run's seed);
every timed call's result is checked by the trusted checker against rotating buffers with
rewritten canaries, so a cached or stale result fails. A student's ratio is its median over the
mean of the reference medians just before and just after it; the ratio of those two is an A/A
measure of the machine's drift around that student. A time below the read roof of the same run is
physically impossible and earns nothing.

The host part is timed paired where the CPU share has a freezer (toolchain.time_paired): one run in
which the timekeeper times the reference's worker and the student's call by call, the student's
frozen during the reference's calls. A host loop's time moves by several percent from one process
to the next (lab 01 on an H100 host, 2026-11-26: 0.84 to 1.27 for the same code), much less from
one call to the next; the reference's calls of that run are "before", there is no "after", and the
ratio is taken call by call (paired_ratio).
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..judge.checks import TimedItem, TimingCheck, quote_module_message
from ..manifest import Lab, Manifest
from ..outputs.program_output import program_output
from ..outputs.records import LabBenchmark
from ..sandbox.process import stopping
from ..settings import BenchmarkSettings

CONTRADICTED = "CONTRADICTED"   # timings.csv status: the timekeeper's clock contradicts the claimed times
ROOF_TOLERANCE = 0.97   # a student's median below 97% of the roof's is impossible (the roof's own
                        # spread is under 1%; reference drift between runs was 1.4-2.4%, H200, 2026-11-22)
BASELINES = ("roof", "cub")
HOST, DEVICE = "host", "device"   # the parts of a student's timing, in the order they are timed
PAST_CREDIT_MARGIN = 1.5   # a host part whose every cell is slower than this x [performance]
                           # zero_credit_ratio after a paired run has no more runs: its points are 0
                           # whatever they would say (the same host loop moved 0.84 to 1.27 from one
                           # process to the next, H100 host, 2026-11-26). An attacker's 1-second calls
                           # held the cores 80 s of a class's grading in four runs (H200, 2026-11-28).


def parse_size(text: str) -> int:
    """'2^24', '16777216' or '1e6': the one size syntax of the policy and the command lines."""
    text = text.strip()
    if "^" in text:
        base, exponent = text.split("^", 1)
        return round(float(base) ** float(exponent))
    return round(float(text))


@dataclass
class Cell:
    lab: str
    type: str
    n: int


@dataclass
class HostPart:
    """The host part of a student's timing, timed ahead of the rest (ClassTiming.time_host)."""
    labs: set[str]
    runs: tuple
    outcome: "Outcome"


@dataclass
class Outcome:
    rows: list[dict] = field(default_factory=list)          # timings.csv rows: student, reference, baselines
    labs: dict[str, LabBenchmark] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    device: str = ""
    drift: float | None = None                               # worst |after/before - 1| of the references
    program_output: str = ""                                 # what the student's code printed while timed


def _items(cells: list[Cell], module_of, baselines: bool, labs: dict[str, Lab]) -> tuple[list[str], dict[str, Cell]]:
    items, ids = [], {}
    for cell in cells:
        item_id = f"t{len(items) + 1:03d}"
        lab = labs[cell.lab]
        items.append(f"{item_id},{cell.lab},{'host' if lab.host else 'device'},{cell.type},{cell.n},{module_of(lab)}")
        ids[item_id] = cell
    if baselines:
        for type_, n in sorted({(c.type, c.n) for c in cells if not labs[c.lab].host}):
            for name in BASELINES:
                item_id = f"t{len(items) + 1:03d}"
                items.append(f"{item_id},{name},device,{type_},{n}")
                ids[item_id] = Cell(name, type_, n)
    return items, ids


def _by_cell(check: TimingCheck | None, ids: dict[str, Cell]) -> dict[tuple, TimedItem]:
    if check is None:
        return {}
    found = {}
    for item in check.items:
        if item.id in ids:
            cell = ids[item.id]
            found[(cell.lab, cell.type, cell.n)] = item
    return found


def _row(who: str, cell: Cell, item: TimedItem, gpu: str, date: str) -> dict:
    bytes_read = cell.n * 4
    return {"student": who, "lab": cell.lab, "type": cell.type, "n": str(cell.n), "median_us": f"{item.median_us:.4f}",
            "min_us": f"{item.min_us:.4f}", "iqr_us": f"{item.q3_us - item.q1_us:.4f}",
            "gbps": f"{bytes_read / (item.median_us * 1e3):.1f}" if item.median_us > 0 else "",
            "pct_roof": "", "ref_median_us": "", "ratio_to_ref": "", "status": "ok" if item.verified else "UNVERIFIED",
            "gpu": gpu, "date": date}


class ClassTiming:
    """The timing runs of one grading run: reference runs shared between neighbouring students."""

    def __init__(self, tools, manifest: Manifest, labs: list[Lab], config: BenchmarkSettings, seed: int, work: Path, gpu: bool,
                 cache: Path, zero_credit_ratio: float | None = None):
        self.tools, self.manifest, self.config, self.seed, self.work, self.gpu = tools, manifest, config, seed, work, gpu
        # A host part stops its paired runs once every cell is past this ratio (None: never).
        self.host_stop_ratio = None if zero_credit_ratio is None else zero_credit_ratio * PAST_CREDIT_MARGIN
        self.cache = cache  # the run's expected sums (the timing buffers' are computed once a run)
        self.labs = {lab.folder: lab for lab in labs if gpu or lab.host}
        self.cells = [Cell(lab.folder, type_, parse_size(size)) for lab in self.labs.values()
                      for type_ in config.types for size in (config.host_sizes if lab.host else config.sizes)]
        self._last: dict[str, _ReferenceRun] = {}        # per part, the latest reference run
        self._last_at: dict[str, float] = {}            # per part, when it ended (time.monotonic())
        self.clock = time.monotonic
        self.problems: list[str] = []
        # A row of students' device runs closed by one reference run (students_per_reference): every
        # reference run of a part is numbered, and a student whose "after" is the next one waits for it.
        self._row = threading.Condition()
        self._done: dict[str, int] = {}                  # per part, reference runs ended so far
        self._ended: dict[tuple[str, int], _ReferenceRun] = {}   # (part, number): the run
        self._in_row: dict[str, int] = {}                # per part, students waiting for the run that ends the row
        self._in_turn: dict[str, int] = {}               # per part, threads in a timing turn of it now
        self._coming = 0                                 # students in flight whose device run is still to come
        self._expected: dict[str, _Coming] = {}         # per student in flight, its place in that count (expecting)
        self.row_wait_s = 1.0                            # how often a student waiting for its "after" looks
        # The checker reads a timing run on the CPU (about 0.2 s a device run on an H100, 2026-11-28):
        # it needs no GPU, so it goes on beside the turn's next run, or after the turn, never in it.
        self._checks = ThreadPoolExecutor(8, thread_name_prefix="timing check")

    def _run(self, plan: str, sandboxed: bool, readable: tuple[Path, ...], part: str) -> Future:
        """One timing run: returns once its processes ended, its check maybe still running; the
        future gives (the checked run, its problems). A run that failed before its processes ended
        raises here, in the turn, as it always did."""
        ended, returned = threading.Event(), threading.Event()

        def on_ended() -> None:
            ended.set()
            returned.set()
        future = self._checks.submit(self._run_checked, plan, sandboxed, readable, part, on_ended)
        future.add_done_callback(lambda _: returned.set())
        returned.wait()
        if not ended.is_set():
            future.result()   # raises what the run raised (a run that returns has called on_ended)
        return future

    def _run_checked(self, plan: str, sandboxed: bool, readable: tuple[Path, ...], part: str, on_ended):
        # A host part's runs get no GPU, as the host lab's test runs: nothing of it runs on the GPU.
        run = self.tools.time(plan, self.work, sandboxed, readable, self.gpu and part == DEVICE,
                              self.config.timeout_s, self.config.call_timeout_s, self.cache, on_ended=on_ended)
        on_ended()   # a toolchain that checks nothing after its run
        problems = [run.problem] if run.problem else []
        if run.process.timed_out or run.process.stalled:
            problems.append(f"a timing run did not finish within its limit ({'student' if sandboxed else 'reference'})")
        return run, problems

    def _plan(self, items: list[str], part: str) -> str:
        """A part's timing plan: the host part's calls are [benchmark] host_samples (a host loop's calls
        vary more from one to the next than a kernel's: policy.toml), the device part's samples, each
        item cut short by its time budget (min_samples, budget_ms or host_budget_ms)."""
        samples = self.config.host_samples if part == HOST else self.config.samples
        budget_ms = self.config.host_budget_ms if part == HOST else self.config.budget_ms
        return self.tools.timing_plan(self.seed, items, samples, self.config.warmup, self.config.call_timeout_s,
                                      min_samples=min(self.config.min_samples, samples), budget_ms=budget_ms)

    def _reference(self, part: str) -> "_ReferenceRun":
        """A trusted run of the references of every cell of the part this grading times, and the
        baselines of their sizes: whichever labs the next student passed, this run can be its "before"
        (a run of one student's labs only could not be the next one's when that one passed others).
        Returns once its processes ended; its check may still be running."""
        cells = [cell for cell in self.cells if self.labs[cell.lab].host == (part == HOST)]
        items, ids = _items(cells, self.manifest.reference_module, True, self.labs)
        reference = _ReferenceRun(self._run(self._plan(items, part), False, (), part), ids)
        self._last[part] = reference
        self._last_at[part] = self.clock()
        with self._row:   # the "after" of every student of the row waiting for it
            number = self._done.get(part, 0) + 1
            self._ended[(part, number)] = reference
            self._ended.pop((part, number - 64), None)
            self._done[part], self._in_row[part] = number, 0
            self._row.notify_all()
        return reference

    def _cells(self, wanted: set[str], part: str) -> list[Cell]:
        return [cell for cell in self.cells if cell.lab in wanted and self.labs[cell.lab].host == (part == HOST)]

    def time_host(self, passed: list[Lab], modules: dict[str, Path], turn) -> HostPart | None:
        """The host part of a student's timing alone, ahead of the rest (time_student's `host`): its
        labs of `passed`, timed as time_student times them."""
        wanted = {lab.folder for lab in passed}
        mine = self._cells(wanted, HOST)
        if not mine:
            return None
        outcome = Outcome()
        runs = self._time_part_clocked(HOST, mine, {lab.folder: lab for lab in passed}, modules, outcome, turn,
                                       _Coming(self, False))
        return HostPart({cell.lab for cell in mine}, runs, outcome)

    @contextlib.contextmanager
    def expecting(self, student: str):
        """From a student's start to its timing: its device run may still come. Another student's device
        run may then leave its "after" to the reference run that ends their row, where it would time one
        at once because the classmates in flight had not reached their timing yet: with four students
        in flight on an H200 (2026-11-27, 20 students) a row formed for about one student in two."""
        coming = _Coming(self, any(not lab.host for lab in self.labs.values()))
        with coming:
            with self._row:
                self._expected[student] = coming
            try:
                yield
            finally:
                with self._row:
                    self._expected.pop(student, None)

    def time_student(self, student: str, passed: list[Lab], modules: dict[str, Path], date: str, turn,
                     host: HostPart | None = None) -> Outcome:
        """The student's `passed` labs (`modules`: their verified module paths) between two reference
        runs, part by part. `turn(part, alone)` is a context manager that has the machine ready for timing
        that part (HOST or DEVICE) and yields whether nothing ran there since that part's previous
        turn: only then is the previous student's run after, when it timed every lab needed, this
        student's run before. While another student's device run is still to come, this one's "after"
        may be the reference run that ends their row (students_per_reference). `host`: the host part,
        timed ahead by time_host; used when it timed the same labs."""
        outcome = Outcome()
        wanted = {lab.folder for lab in passed}
        labs = {lab.folder: lab for lab in passed}
        cells, before, own, after, devices = [], {}, {}, {}, []
        mine_to_come = self._device_to_come(wanted)
        with self._row:
            expected = self._expected.get(student)   # counted since its start (expecting)
            if expected is not None and not mine_to_come.pending:
                expected.done()   # no device lab passed: no device run of this student's will come
        coming = expected or mine_to_come
        with contextlib.nullcontext() if expected else coming:
            for part in (HOST, DEVICE):
                mine = self._cells(wanted, part)
                if not mine:
                    continue
                if part == HOST and host is not None and host.labs == {cell.lab for cell in mine}:
                    runs = host.runs   # timed beside the student's sanitizer runs (time_host)
                    outcome.problems += host.outcome.problems
                    outcome.program_output = host.outcome.program_output
                else:
                    runs = self._time_part_clocked(part, mine, labs, modules, outcome, turn, coming)
                for side, found in zip((before, own, after), runs[:3]):
                    side.update(found)
                devices += [device for device in runs[3] if device]
                cells += mine
        if not cells:
            return outcome
        outcome.device = devices[0] if devices else ""
        _compose(outcome, cells, labs, before, own, after, student, date)
        _check_clock(outcome, cells, before, own, after, *self._slack())
        return outcome

    def _recent(self, part: str) -> bool:
        """The part's latest reference run ended at most [benchmark] reference_reuse_s ago: it is this
        student's "before" even though other students' test runs used the machine since. A pipelined
        class then times the references once per student, not twice; the "after" is always fresh."""
        ended = self._last_at.get(part)
        return ended is not None and self.clock() - ended <= self.config.reference_reuse_s

    def _slack(self) -> tuple[float, float]:
        return self.config.clock_slack_us, self.config.clock_slack_ratio

    def _device_to_come(self, wanted: set[str]) -> "_Coming":
        return _Coming(self, any(not self.labs[lab].host for lab in wanted if lab in self.labs))

    def _time_part_clocked(self, part: str, cells: list[Cell], labs: dict[str, Lab], modules: dict[str, Path],
                           outcome: Outcome, turn, coming: "_Coming") -> tuple[dict, dict, dict, list[str]]:
        """One part, its contradicted cells timed again (between fresh references of those cells) when
        the timekeeper's clock contradicted a cell of it: a machine's passing noise (a late wake-up on a
        busy core, a driver call of another process) does not come back on cue, time a lab keeps out of
        its claim does, every time. Up to [benchmark] clock_attempts timings of a cell; its last one
        stands. Each one after the first has the machine alone: nothing else of this grading runs then,
        on any core, so whatever shared the timing core with the first (own_threads.py says what did)
        is not there again. Only the contradicted cells run again: on an H100 (2026-11-28, 40
        students) a timing again of every cell held the whole machine 4.2 s, for one lab's two cells
        in most of them."""
        attempts = max(1, self.config.clock_attempts)
        runs, todo = None, cells
        for attempt in range(1, attempts + 1):
            with turn(part, alone=attempt > 1) as quiet, self._turn_of(part):
                if attempt == 1:
                    if not (quiet or self._recent(part)):
                        self._last.pop(part, None)   # other work ran there since, long ago: a fresh "before"
                    checked = self._time_part(part, todo, labs, modules, outcome, coming)
                else:
                    checked = self._time_again(part, todo, labs, modules, outcome)
            found = checked()   # the checks of the turn's runs, after the turn: the GPU serves others meanwhile
            if isinstance(found[2], int):   # its "after" is the run that ends the row
                after, device = self._after_row(part, found[2], outcome, turn)
                found = (found[0], found[1], after, found[3] + device)
            runs = found if runs is None else _with_cells(runs, found, todo)
            contradicted = [cell for cell in todo if _cell_clock_problem(cell, *found[:3], *self._slack())]
            if not contradicted or attempt == attempts:
                return runs
            which = "first" if attempt == 1 else "second" if attempt == 2 else f"timing {attempt}'s"
            outcome.problems.append(f"timed again: the grader's clock contradicted the {which} timing of "
                                    f"{', '.join(sorted({cell.lab for cell in contradicted}))}")
            todo = contradicted
        return runs

    @contextlib.contextmanager
    def _turn_of(self, part: str):
        with self._row:
            self._in_turn[part] = self._in_turn.get(part, 0) + 1
        try:
            yield
        finally:
            with self._row:
                self._in_turn[part] -= 1
                self._row.notify_all()

    def _joins_row(self, part: str, coming: "_Coming") -> int | None:
        """The number of the reference run that will be this student's "after", when its device run may
        leave it to a later turn: another student's device run is still to come, and the row is not
        full."""
        if part != DEVICE:
            return None
        with self._row:
            coming.done()
            if self._coming <= 0 or self._in_row.get(part, 0) + 1 >= self.config.students_per_reference:
                return None
            self._in_row[part] = self._in_row.get(part, 0) + 1
            return self._done.get(part, 0) + 1

    def _after_row(self, part: str, number: int, outcome: Outcome, turn) -> tuple[dict, list[str]]:
        """The "after" of a student whose device run joined a row: reference run `number`, measured at
        the end of a later turn. When no device run is to come and no turn of the part is held (the
        row's last student stopped short of its reference run), or the wait outlasts reference_reuse_s,
        this student measures it in a turn of its own."""
        idle_looks, started = 0, self.clock()
        with self._row:
            while (self._done.get(part, 0) < number and idle_looks < 2 and not stopping()
                   and self.clock() - started <= self.config.reference_reuse_s):
                idle = not self._in_turn.get(part, 0) and self._coming <= 0
                idle_looks = idle_looks + 1 if idle else 0
                self._row.wait(self.row_wait_s)
            ended = self._ended.get((part, number)) if self._done.get(part, 0) >= number else None
        if ended is None and not stopping():
            with turn(part, alone=False), self._turn_of(part):
                with self._row:
                    ended = self._ended.get((part, number))   # ended while this student waited for its turn
                ended = ended or self._reference(part)
        if ended is None:
            outcome.problems.append("no reference run after the student's: the grader stopped")
            return {}, []
        after, device, problems = ended.result()
        outcome.problems += problems
        return after, [device]

    def _time_part(self, part: str, cells: list[Cell], labs: dict[str, Lab], modules: dict[str, Path],
                   outcome: Outcome, coming: "_Coming | None" = None):
        """The runs of one part; returns once their processes ended, with a function that waits for
        their checks and gives before, the student's own, after (by cell) and the devices named. With
        `coming` (a first timing), the "after" may be left to a later turn: then it is the number of
        the reference run to wait for."""
        if part == HOST and self.tools.pairs_host_timing:
            paired = self._time_paired(cells, labs, modules, outcome)
            return lambda: paired
        last = self._last.get(part)
        fresh = last is None or not all((c.lab, c.type, c.n) in last.result()[0] for c in cells)
        before_run = self._reference(part) if fresh else last
        own_run, ids = self._student_run(part, cells, labs, modules)
        number = self._joins_row(part, coming) if coming is not None else None
        after_run = self._reference(part) if number is None else None
        return self._checked(outcome, before_run, fresh, own_run, ids, after_run, number)

    def _time_again(self, part: str, cells: list[Cell], labs: dict[str, Lab], modules: dict[str, Path],
                    outcome: Outcome):
        """`cells` timed again, as _time_part times them, between two fresh runs of their references
        alone (no baselines: the first timing's stand). Neither run is any student's "before" or any
        row's end: they time only these cells."""
        if part == HOST and self.tools.pairs_host_timing:
            paired = self._time_paired(cells, labs, modules, outcome)
            return lambda: paired
        items, ids = _items(cells, self.manifest.reference_module, False, self.labs)
        plan = self._plan(items, part)
        before_run = _ReferenceRun(self._run(plan, False, (), part), ids)
        own_run, own_ids = self._student_run(part, cells, labs, modules)
        after_run = _ReferenceRun(self._run(plan, False, (), part), ids)
        return self._checked(outcome, before_run, True, own_run, own_ids, after_run, None)

    def _student_run(self, part: str, cells: list[Cell], labs: dict[str, Lab], modules: dict[str, Path]):
        items, ids = _items(cells, lambda lab: modules[lab.folder], False, labs)
        readable = tuple(dict.fromkeys(modules[c.lab] for c in cells))
        return self._run(self._plan(items, part), True, readable, part), ids

    @staticmethod
    def _checked(outcome: Outcome, before_run: "_ReferenceRun", fresh: bool, own_run: Future, ids: dict[str, Cell],
                 after_run: "_ReferenceRun | None", number: int | None):
        """A function that waits for the checks of a timing's runs: before, the student's own, after (by
        cell; the number of the reference run that ends the row when there is no `after_run`) and the
        devices named; the runs' problems into `outcome`."""
        def checked() -> tuple[dict, dict, dict | int, list[str]]:
            before, device, problems = before_run.result()
            if fresh:   # a reused run's problems were its first student's
                outcome.problems += problems
            run, problems = own_run.result()
            outcome.problems += problems
            outcome.program_output = program_output(run.process.stdout, run.process.stderr)
            own = _own(run, ids)
            if after_run is None:
                return before, own, number, [device]
            after, device_after, problems = after_run.result()
            outcome.problems += problems
            return before, own, after, [device, device_after]
        return checked

    def _time_paired(self, cells: list[Cell], labs: dict[str, Lab], modules: dict[str, Path],
                     outcome: Outcome) -> tuple[dict, dict, dict, list[str]]:
        """The host part in [benchmark] host_runs paired runs (toolchain.time_paired): in each the
        reference's calls and the student's in turn, so the reference is "before" and there is no
        "after". A host loop's time also depends on its process (where its code and data fell: lab 01
        at 2^20 on an H100 host, 2026-11-27, took 897 us in one process and 952 in another): several
        pairs of processes, each pair's calls ratio by ratio, average that out (merge_paired). Once every
        cell is past host_stop_ratio, the runs so far stand: more cannot earn a point."""
        items, ids = _items(cells, lambda lab: modules[lab.folder], False, labs)
        reference_items, _ = _items(cells, self.manifest.reference_module, False, labs)
        plans = self._plan(items, HOST), self._plan(reference_items, HOST)
        befores, owns, printed = [], [], []
        for _ in range(max(1, self.config.host_runs)):
            run, reference = self.tools.time_paired(*plans, self.work, tuple(dict.fromkeys(modules[c.lab] for c in cells)),
                                                    self.config.timeout_s, self.config.call_timeout_s, self.cache)
            ended = False
            for timed, who in ((run, "student"), (reference, "reference")):
                if timed.problem:
                    outcome.problems.append(timed.problem)
                if timed.process.timed_out or timed.process.stalled:
                    outcome.problems.append(f"a timing run did not finish within its limit (paired: {who})")
                    ended = True
                    break
            printed.append(program_output(run.process.stdout, run.process.stderr))
            befores.append(_by_cell(reference.check, ids))
            owns.append(_own(run, ids, paired=True))
            spoiled = run.check is None or reference.check is None or run.check.tampered or run.check.clock_error
            if ended or spoiled or run.problem or reference.problem:
                break   # what went wrong once would again: the runs so far stand
            if self._past_credit(befores, owns):
                break   # more runs cannot earn a point: the rows' samples say how many calls were timed
        outcome.program_output = next((text for text in printed if text), "")
        before, own = merge_paired(befores, owns)
        return before, own, {}, []


    def _past_credit(self, befores: list[dict], owns: list[dict]) -> bool:
        """Every student cell of the paired runs so far is verified and past host_stop_ratio."""
        if self.host_stop_ratio is None or len(owns) >= self.config.host_runs:
            return False
        before, own = merge_paired(befores, owns)

        def past(key, item) -> bool:
            reference = before.get(key)
            if not item.verified or reference is None or not reference.verified or reference.median_us <= 0:
                return False
            return cell_ratio(item, reference.median_us) > self.host_stop_ratio
        return bool(own) and all(past(key, item) for key, item in own.items())


class _ReferenceRun:
    """A trusted reference run whose processes have ended: by cell, device and problems once its
    check is done (ClassTiming._run). Several students may share it (before, after, a row's end)."""

    def __init__(self, pending: Future, ids: dict[str, Cell]):
        self._pending, self._ids = pending, ids
        self._lock = threading.Lock()
        self._checked: tuple[dict, str, list[str]] | None = None

    def result(self) -> tuple[dict, str, list[str]]:
        with self._lock:
            if self._checked is None:
                try:
                    run, problems = self._pending.result()
                    self._checked = (_by_cell(run.check, self._ids), run.check.device if run.check else "", problems)
                except Exception as exc:  # noqa: BLE001 - shared by several students: each gets it as a problem
                    self._checked = ({}, "", [f"the reference run's check failed: {exc}"])
            return self._checked


class _Coming:
    """While it is held, a student being timed whose device run is still to come (ClassTiming._coming):
    another student's device run may then leave its "after" to the row. Done once that run ran, or
    when the student's timing ends short of it."""

    def __init__(self, timing: ClassTiming, device: bool):
        self.timing, self.pending = timing, device

    def __enter__(self):
        if self.pending:
            with self.timing._row:
                self.timing._coming += 1
        return self

    def done(self) -> None:
        """Called with the row's lock held."""
        if self.pending:
            self.pending = False
            self.timing._coming -= 1
            self.timing._row.notify_all()

    def __exit__(self, *exc):
        with self.timing._row:
            self.done()


def _with_cells(runs: tuple, again: tuple, cells: list[Cell]) -> tuple[dict, dict, dict, list[str]]:
    """The runs of a part with `cells` as a timing again found them (before, own and after by cell,
    then the devices named): each cell's three from one timing."""
    merged = [dict(side) for side in runs[:3]]
    for cell in cells:
        key = (cell.lab, cell.type, cell.n)
        for side, found in zip(merged, again[:3]):
            side.pop(key, None)
            if key in found:
                side[key] = found[key]
    return (*merged, list(runs[3]) + list(again[3]))


def merge_paired(befores: list[dict], owns: list[dict]) -> tuple[dict, dict]:
    """Several paired runs' items as one per cell, each side's: every run's calls (their median, least
    and quartiles), the clock's medians the median of the runs', and the student's paired_ratio the
    median of every run's call-by-call ratios. A student's cell is usable only when it was in every
    run and verified in each; a reference's cell only when it was verified in each."""
    before, own = {}, {}
    for merged, runs in ((before, befores), (own, owns)):
        for key in dict.fromkeys(key for run in runs for key in run):
            items = [run.get(key) for run in runs]
            present = [item for item in items if item is not None]
            calls = [us for item in present for us in item.calls_us if us is not None and us > 0]
            first = present[0]
            bad = next((item for item in present if not item.verified), None)
            missing = len(present) < len(runs)
            item = dataclasses.replace(first, calls_us=[us for item in present for us in item.calls_us],
                                       samples=sum(item.samples for item in present), paired_ratio=None)
            if calls:
                quartiles = statistics.quantiles(calls, n=4) if len(calls) > 1 else [calls[0]] * 3
                item.median_us, item.min_us, item.q1_us, item.q3_us = (statistics.median(calls), min(calls),
                                                                       quartiles[0], quartiles[2])
            for name in ("excess_us", "window_us", "prep_us"):
                setattr(item, name, statistics.median(getattr(i, name) for i in present))
            item.excess_min_us = min(i.excess_min_us for i in present)
            item.clocked = sum(i.clocked for i in present)
            item.verified = bad is None and not missing
            item.problem = bad.problem if bad else "not timed in every paired run" if missing else ""
            merged[key] = item
    for key, item in own.items():
        ratios = [ratio for run_before, run_own in zip(befores, owns) if key in run_before and key in run_own
                  for ratio in call_ratios(run_own[key], run_before[key])]
        if key in before and ratios:
            item.paired_ratio = statistics.median(ratios)
    return before, own


def call_ratios(student: TimedItem, reference: TimedItem) -> list[float]:
    """The student's call over the reference's call of the same number, for each number both reported."""
    return [s / r for s, r in zip(student.calls_us, reference.calls_us) if s and r and s > 0 and r > 0]


def paired_ratio(student: TimedItem, reference: TimedItem) -> float | None:
    """A paired run's ratio: the median over the timed calls of the student's call over the
    reference's call of the same number, timed right before or after it. The ratio of the two
    medians moves more: on an H100's host (2026-11-26, lab 01 at 2^24, 8 paired runs of 25 calls
    each, both workers the reference's) it ranged 0.963 to 1.008 (int) and 0.987 to 1.015 (float)
    where this ranged 0.988 to 1.004 and 0.994 to 1.009 on the same calls. None when no call of that
    number was reported by both."""
    ratios = call_ratios(student, reference)
    return statistics.median(ratios) if ratios else None


def cell_ratio(item: TimedItem, reference_median_us: float) -> float:
    """A student's cell over the reference's: its paired ratio where the runs were paired, else the
    ratio of the medians."""
    return item.paired_ratio if item.paired_ratio is not None else item.median_us / reference_median_us


def _own(run, ids: dict[str, Cell], paired: bool = False) -> dict[tuple, TimedItem]:
    """The student's items of a timing run, none of them usable when the channel was tampered with
    (lines that do not parse, repeat a call, lack the token or follow "end") or, in a paired run, the
    timekeeper could not keep its rule (a clock_error: the student's processes were not frozen)."""
    own = _by_cell(run.check, ids)
    spoiled = (run.check.tampered or (run.check.clock_error if paired else "")) if run.check else ""
    for item in own.values() if spoiled else ():
        item.verified = False
        item.problem = spoiled
    return own


def _problem(item: TimedItem) -> str:
    """The checker's words, and what the run said only in the shapes the harness writes."""
    return item.problem + (f": {quote_module_message(item.error_message)}" if item.error_message else "")


def _compose(outcome: Outcome, cells: list[Cell], labs: dict[str, Lab], before: dict, own: dict, after: dict,
             student: str, date: str) -> None:
    """Rows and per-lab results from the three runs."""
    drifts = []
    for cell in cells + [Cell(name, t, n) for (t, n) in sorted({(c.type, c.n) for c in cells}) for name in BASELINES]:
        key = (cell.lab, cell.type, cell.n)
        sides = [side[key] for side in (before, after) if key in side and side[key].verified and side[key].median_us > 0]
        if not sides:
            continue
        mean = sum(item.median_us for item in sides) / len(sides)
        merged = TimedItem(sides[0].id, cell.lab, cell.type, cell.n, sum(s.samples for s in sides), mean,
                           min(s.min_us for s in sides), min(s.q1_us for s in sides), max(s.q3_us for s in sides), True)
        who = "baseline" if cell.lab in BASELINES else "reference"
        outcome.rows.append(_row(who, cell, merged, outcome.device, date))
        if len(sides) == 2 and who == "reference" and not labs[cell.lab].host:  # host clocks drift more
            drifts.append(abs(sides[1].median_us / sides[0].median_us - 1.0))
    outcome.drift = max(drifts) if drifts else None
    roofs = {(r["type"], r["n"]): float(r["median_us"]) for r in outcome.rows if r["lab"] == "roof"}
    references = {(r["lab"], r["type"], r["n"]): float(r["median_us"]) for r in outcome.rows if r["student"] == "reference"}
    for cell in cells:
        item = own.get((cell.lab, cell.type, cell.n))
        result = outcome.labs.setdefault(cell.lab, LabBenchmark())
        if item is None or item.samples == 0:
            result.note = result.note or f"no timing at n = {cell.n}, {cell.type}" + (
                f" ({_problem(item)})" if item and item.problem else "")
            continue
        row = _row(student, cell, item, outcome.device, date)
        roof = roofs.get((cell.type, str(cell.n)))
        reference = references.get((cell.lab, cell.type, str(cell.n)))
        if roof and not labs[cell.lab].host:  # the GPU's roof says nothing of a host loop
            row["pct_roof"] = f"{100.0 * roof / item.median_us:.1f}"
            if item.median_us < ROOF_TOLERANCE * roof:
                row["status"] = "IMPOSSIBLE"
                result.impossible = True
                result.note = (f"{item.median_us:.2f} us at n = {cell.n}, {cell.type} is below the read roof's "
                               f"{roof:.2f} us measured in the same run: physically impossible, no performance points")
        if not item.verified:
            result.note = result.note or f"the timing is not usable: {_problem(item)}"
        if reference:
            row["ref_median_us"] = f"{reference:.4f}"
            row["ratio_to_ref"] = f"{cell_ratio(item, reference):.4f}"
        result.rows.append(row)


def clock_problem(item: TimedItem, reference_excess: float, slack_us: float, slack_ratio: float) -> str:
    """Why the timekeeper's clock contradicts `item`'s claimed times ("" when it agrees). Each call
    took `item.excess_us` (a median) beyond what the worker claimed for it, from the moment the
    timekeeper began writing its input to the moment it read its report; the reference's calls of
    the same cell took `reference_excess` beyond theirs, through the same harness and channel. More
    than that plus the slack is time the claim leaves out: work outside the timed window, a clock
    rewritten inside the worker, a report written ahead."""
    if item.samples == 0:
        return ""
    if item.excess_us < 0:
        return "the timekeeper's clock saw none of its calls reported"
    beyond = item.excess_us - reference_excess
    if beyond <= slack_us + slack_ratio * item.median_us:
        return ""
    return (f"the grader's clock puts each timed call at about {item.median_us + beyond:.1f} us, the lab reported "
            f"{item.median_us:.1f} us (its calls took {item.excess_us:.1f} us beyond their claim from input to "
            f"report, the reference's {reference_excess:.1f} us): the times are not the calls', no performance points")


@dataclass
class ClockCheck:
    """One cell of a student's timing against the timekeeper's clock (LabBenchmark.clock, as JSON)."""
    type: str
    n: int
    claimed_us: float            # the student's median claim
    excess_us: float             # its calls beyond their claim, from input to report (median)
    reference_excess_us: float   # the reference's of the same cell (the larger of the runs around it)
    allowed_us: float            # how much more the student's may be: the slack and the machine's noise
    problem: str = ""
    # Where the time went (medians, the same runs): preparing the input before the go (the
    # timekeeper's) and from the go to the report (the worker's), the student's and that reference's.
    prep_us: float = -1.0
    window_us: float = -1.0
    reference_prep_us: float = -1.0
    reference_window_us: float = -1.0


def _cell_clock(cell: Cell, before: dict, own: dict, after: dict, slack_us: float,
                slack_ratio: float) -> ClockCheck | None:
    """The timekeeper's verdict on one of the student's cells, against the reference runs around it
    (None when there is nothing to hold it against)."""
    key = (cell.lab, cell.type, cell.n)
    item = own.get(key)
    references = [side[key] for side in (before, after)
                  if key in side and side[key].verified and side[key].excess_us >= 0]
    if item is None or not item.verified or not references:
        return None
    # The reference's own spread (its typical call's excess over its quietest) is the machine's noise
    # in this run: allowed on top of the slack.
    largest = max(references, key=lambda r: r.excess_us)
    reference = largest.excess_us
    noise = max(0.0, reference - min(max(r.excess_min_us, 0.0) for r in references))
    problem = clock_problem(item, reference, slack_us + noise, slack_ratio)
    return ClockCheck(cell.type, cell.n, round(item.median_us, 3), round(item.excess_us, 1), round(reference, 1),
                      round(slack_us + noise + slack_ratio * item.median_us, 1), problem,
                      round(item.prep_us, 1), round(item.window_us, 1), round(largest.prep_us, 1),
                      round(largest.window_us, 1))


def _cell_clock_problem(cell: Cell, before: dict, own: dict, after: dict, slack_us: float, slack_ratio: float) -> str:
    check = _cell_clock(cell, before, own, after, slack_us, slack_ratio)
    return check.problem if check else ""


def _check_clock(outcome: Outcome, cells: list[Cell], before: dict, own: dict, after: dict, slack_us: float,
                 slack_ratio: float) -> None:
    """The timekeeper's verdict on each of the student's cells, against the reference runs around it."""
    for cell in cells:
        check = _cell_clock(cell, before, own, after, slack_us, slack_ratio)
        if check is None:
            continue
        result = outcome.labs.setdefault(cell.lab, LabBenchmark())
        result.clock.append(dataclasses.asdict(check))
        if not check.problem:
            continue
        result.contradicted = True
        result.note = result.note or f"at n = {cell.n}, {cell.type}: {check.problem}"
        for row in result.rows:
            if row["type"] == cell.type and row["n"] == str(cell.n):
                row["status"] = CONTRADICTED
