"""Grading a class: per student, compile their lab files, test, sanitize, time, score.

The grader schedules; the stages grade (stages/: one class a file, declared in stages.PIPELINE).
The grader is the trusted side. Student code runs only in sandboxed processes (toolchain.py) whose
word counts for nothing: a verdict comes from the trusted checker's report and the grader's own
observations of the run, with inputs drawn from a seed new to this run. Order per student:
  1. collect the lab files, splice each STUDENT CODE region into the official skeleton;
  2. compile them in the sandbox, one nvcc per lab, in parallel (--jobs); keep each module's digest;
  3. run each lab's test plan in the sandbox, a few labs at a time, and check what it observed;
  4. run compute-sanitizer on the small cases of the labs that passed;
  5. time the labs that passed: references, student, references (benchmark.py);
  6. score, and write the student's signed record and the class files.
The record is rewritten (signed) after each step, complete = false until the end; a rerun skips the
students whose record is complete and signed by this output folder's key, and redoes the others.

A class is pipelined: a few students are in flight at once ([pipeline] students), their compiles
share the cores (each student within a CPU share of its own where cgroups can be made: cpu_share.py)
and their test runs share the GPU, while timing runs take the GPU alone, one at a time, and the host
lab's timing the cores too (gpu_gate.py). A compile, test or sanitizer run that failed for a
resource every run shares (resources.py) while another student's runs shared the machine
(neighbours.py), or timed out while they held the cores, is run again alone, once, and the
retry's outcome is the verdict. Each
student is claimed while graded (claims.py), so graders sharing OUT (the workers of --gpus, the
shards of a cluster) never grade one student twice.
"""

from __future__ import annotations

import datetime
import secrets
import shutil
import threading
import time
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path

from . import benchmark
from . import PIPELINE, Score
from ..judge.lab_flags import record_flags
from ..judge.sanitizer_findings import self_test
from ..judge.submission import MAX_LAB_FILE_BYTES, RegionError, Submission, collect, read_text, splice
from ..judge.verdicts import COMPILE_ERROR, MISSING, NOT_RUN
from ..manifest import Lab, Manifest
from ..outputs import signing
from ..outputs import events as ev
from ..outputs.claims import Claim
from ..outputs.ledger import LEDGER_FILE, Ledger
from ..outputs.record_store import RecordStore
from ..outputs.records import BenchmarkInfo, LabRecord, StudentRecord, unsandboxed
from ..outputs.student_paths import work_folder
from ..policy import Policy
from ..report import class_outputs, reports
from ..sandbox import own_threads
from ..sandbox.cpu_share import CpuShare
from ..sandbox.process import Stopping, stopping
from .base import pool
from .compile_cache import CACHE_FOLDER, CompileCache
from .flight import Flight
from .gpu_gate import CPU_RANK, GPU_RANK, LANE_RANK, Gate
from .neighbours import Neighbours
from .runs import Runs

GRADER_VERSION = "reduction-labs grader 2.0"
NO_GPU_MESSAGE = "correctness and timing were not run: no GPU on this machine"
PUBLIC_SEED = 20261121  # the student's self-check (and the test suite): fixed, so a failure replays the same
SELF_TEST = ""          # the "student" of the sanitizer's self-test runs (a reference module: no folder has this name)
NOT_BEGUN = object()    # a student left to a rerun: another student's grading failed before it began


@dataclass
class Options:
    labs: list[Lab]
    jobs: int = 2
    sanitizer: bool = True
    bench: bool = True
    force: bool = False
    large: bool = False
    self_check: bool = False
    seed: int | None = None   # None: a new seed for this run
    in_flight: int = 1        # students graded at the same time (pipelined: compiles, tests, one timing at a time)
    run_tag: str = ""         # this grader's own folder under the run's: graders sharing OUT never share a file
    class_outputs: bool = True  # rewrite the class files after each student (a --gpus worker leaves it to the merge)
    run: str = ""               # this grading run's id (a --gpus run's workers share their parent's)
    compile_cache: bool = True  # reuse the module of an identical lab file compiled before (compile_cache.py)


@dataclass
class ClassResult:
    records: list[StudentRecord] = field(default_factory=list)
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)   # being graded by another grader of this OUT
    no_gpu: bool = False
    sanitizer_missing: bool = False
    sanitizer_note: str = ""   # why the sanitizer checks were skipped, when it is not "not on PATH"
    seed: int = 0
    sandbox: str = ""


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Grader:
    def __init__(self, manifest: Manifest, policy: Policy, toolchain, out: Path, options: Options,
                 skeleton_dirs: list[Path] | None = None, log=print, events: ev.Sink | None = None):
        self.manifest = manifest
        self.policy = policy
        self.tools = toolchain
        self.out = Path(out).resolve()
        self.options = options
        self.emit: ev.Sink = events or ev.Lines(log)   # the run's progress, as typed events (events.py)
        # Where the official skeletons are: a release's pristine copies first, then labs/.
        self.skeleton_dirs = skeleton_dirs or [manifest.source_dir / "labs"]
        self.gpu = False
        self.sanitizer_ok = False
        self.sanitizer_why = ""   # why the sanitizer is not used, when it was found (its self-test failed)
        self.seed = PUBLIC_SEED
        self.key = b""
        self.run = ""
        self.plans: dict[str, Path] = {}
        self.sanitizer_plans: dict[str, Path] = {}
        self.expectations = Path()
        self.timing: benchmark.ClassTiming | None = None
        # Lock order (gpu_gate.py): compile slots, CPU gate, GPU gate, then a turn's timing lane or a
        # shared run's GPU slots.
        self.timing_lane = Gate("timing lane", LANE_RANK)
        # the device part's turns, where a second timing core is kept (cpu_plan.py; runs.timing_lane)
        self.device_timing_lane = Gate("device timing lane", LANE_RANK)
        # Behind a hog on the cores (a student's burners slowing its own host test 48 s), compiles and
        # host test runs go on for up to 2 minutes of a turn's wait: the hog holds its own cgroup's
        # share, so they take no time from it (gpu_gate.py; attack class, H100, 2026-11-28).
        self.cpu_gate = Gate("CPU", CPU_RANK, behind_hog_s=120.0)
        self.gpu_gate = Gate("GPU", GPU_RANK)
        self.compile_slots = threading.Semaphore(max(1, options.jobs))
        self.flight = Flight(options.in_flight)   # the students in flight (flight.py)
        self.gpu_slots = threading.Semaphore(1)  # set from [tests] concurrency in grade_class
        self.cpu: CpuShare = getattr(toolchain, "cpu_share", None) or CpuShare.off("the toolchain has none")
        self.neighbours = Neighbours(self.cpu.others_seconds)   # who ran beside whom, for runs harmed by a classmate
        self.runs = Runs(self)   # turns on the cores and the GPU, and runs again alone (stages/runs.py)
        self.stages = [stage(self) for stage in PIPELINE]
        self.score = Score(self)
        self._outputs_lock = threading.Lock()
        self.compile_cache: CompileCache | None = None   # grade_class makes it where compiles are sandboxed
        self.ledger = Ledger(None, "", "")   # grade_class opens the run's

    # ---- class level

    def grade_class(self, students: list[tuple[str, Path]], roster: list[str] | None = None) -> ClassResult:
        """Grades `students`; the class files list `roster` (default: the students graded now)."""
        self.gpu = bool(self.tools.gpu_available())
        # A CPU share per student in flight, and a core kept for the timing runs (cpu_share.py).
        self.cpu.start(self.options.in_flight, self.gpu and self.options.bench)
        try:
            with own_threads.kept_to(self.cpu.grader_cores()):   # the grader's own work off the timing core
                return self._grade_class(students, roster)
        finally:
            self.cpu.close()

    def _grade_class(self, students: list[tuple[str, Path]], roster: list[str] | None) -> ClassResult:
        result = ClassResult()
        self.sanitizer_ok = self.options.sanitizer and self.gpu and bool(self.tools.sanitizer_available())
        self.seed = self.options.seed if self.options.seed is not None else secrets.randbits(62)
        self.run = self.options.run or secrets.token_hex(8)
        self.key = signing.load_key(self.out)
        self.records = RecordStore(self.out, self.key)   # the only reader and writer of the student records
        result.no_gpu = not self.gpu
        result.sanitizer_missing = self.options.sanitizer and self.gpu and not self.sanitizer_ok
        result.seed, result.sandbox = self.seed, self.tools.sandbox_status()
        preparing = time.monotonic()
        self._prepare_run(result)
        # When each run ran, and each student's stages: the benchmark's per-stage breakdown (ledger.py).
        self.ledger = Ledger(self._run_folder() / LEDGER_FILE, self.run, self.options.run_tag or "main",
                             prepared_s=time.monotonic() - preparing)
        self.neighbours.on_run = self.ledger.span
        names = roster or [name for name, _ in students]
        self.emit(ev.ClassStarted(students=len(students)))
        todo = []
        for index, (name, root) in enumerate(students, 1):
            if self._done(name):
                self.emit(ev.StudentSkipped(index, len(students), name, record=str(self.records.path(name))))
                result.skipped.append(name)
            else:
                todo.append((index, name, root))
        try:
            self._grade_in_flight(todo, len(students), names, result)
        finally:
            self.ledger.close()
        result.records = class_outputs.publish(self.out, self.manifest.labs, names, self.key, result.sandbox,
                                               self._leaderboard(), store=self.records)
        if any(entry.verdict == NOT_RUN for record in result.records for entry in record.labs.values()):
            result.no_gpu = True
        return result

    def _prepare_run(self, result: ClassResult) -> None:
        """What the run says first (its inputs, what it lacks here), then its plans, the sanitizer's
        self-test and the class's timing."""
        self.note(f"inputs: seed {self.seed} (replay with --seed {self.seed}); student code: {result.sandbox}")
        if unsandboxed(result.sandbox) and not self.options.self_check:  # your own code: no matter
            self.note("WARNING: student code runs UNSANDBOXED here: it can read and write what this user can. "
                      "Run the grader as root with bubblewrap installed for a gradebook you can sign.")
        if result.no_gpu:
            self.note(f"note: {NO_GPU_MESSAGE}; GPU labs that compile are marked {NOT_RUN} (lab 01 runs on the "
                      "CPU and is graded normally)")
        if result.sanitizer_missing:
            self.note("note: compute-sanitizer not available: sanitizer checks skipped (no penalty)")
        if self.cpu.swept:
            self.note("note: removed the cgroups of graders that ended without removing them: "
                      + ", ".join(self.cpu.swept))
        self._prepare_plans()
        if self.sanitizer_ok and (problem := self._sanitizer_self_test()):
            self.sanitizer_ok, self.sanitizer_why = False, f"compute-sanitizer failed its self-test ({problem})"
            result.sanitizer_missing, result.sanitizer_note = True, self.sanitizer_why
            self.note(f"WARNING: {self.sanitizer_why}: sanitizer checks skipped for this grading (no penalty). A "
                      "grader problem: see docs/grading-security.md, \"compute-sanitizer's own log\".")
        self.gpu_slots = threading.Semaphore(max(1, self.policy.tests.concurrency))
        self.compile_cache = self._compile_cache(result)
        self.timing = benchmark.ClassTiming(self.tools, self.manifest, self.options.labs,
                                            self.policy.benchmark, self.seed, self._run_folder() / "timing",
                                            self.gpu, self.expectations, self.policy.performance.zero_credit_ratio)

    def _grade_in_flight(self, todo: list[tuple[int, str, Path]], total: int, names: list[str],
                         result: ClassResult) -> None:
        failed: list[BaseException] = []   # what students' gradings raised (a grader problem, a stop)
        halted = threading.Event()          # one did: no student begins after it, each is left to a rerun

        def grade(position: int, index: int, name: str, root: Path) -> StudentRecord | None:
            with self.flight.place(name, position):
                if halted.is_set():
                    return NOT_BEGUN
                try:
                    return grade_claimed(index, name, root)
                except BaseException:
                    halted.set()   # before the place goes to the next student
                    raise

        def grade_claimed(index: int, name: str, root: Path) -> StudentRecord | None:
            with Claim(self.out, name) as claim:
                if not claim.acquire():
                    self.emit(ev.StudentSkipped(index, total, name, why=ev.StudentSkipped.ELSEWHERE))
                    return None
                if self._done(name):   # finished by another grader since the look above
                    self.emit(ev.StudentSkipped(index, total, name, why=ev.StudentSkipped.MEANWHILE))
                    return None
                with self.cpu.student(name) as problem, self.timing.expecting(name):   # its runs' CPU share
                    if problem:
                        self.emit(ev.StudentWarning(index, total, name, problem=problem))
                    return self.grade_student(index, total, name, root)

        # Students in flight: while one student's timing has the GPU alone, the next ones compile on
        # the CPU cores around it, and test on the GPU around the others (gpu_gate.py). A student in
        # its timing has given its place to the next (flight.py): threads for the places, and for as
        # many students again, and a row's (students_per_reference), waiting for their timing turns;
        # and as many again for students away, waiting to run alone (flight.py). Past that the next
        # student waits for a thread: the queue for the timing lane stays short.
        timing = self.options.in_flight + max(0, self.policy.benchmark.students_per_reference - 1)
        threads = 2 * self.options.in_flight + (timing if self.options.bench and self.gpu else 0)
        with pool(threads) as students_pool:
            futures = {students_pool.submit(grade, position, *job): job[1] for position, job in enumerate(todo)}
            for future in as_completed(futures):
                name = futures[future]
                try:
                    record = future.result()
                except BaseException as exc:   # the students graded meanwhile still get their class files
                    failed.append(exc)
                    continue
                if record is NOT_BEGUN:
                    continue
                if record is None:
                    result.elsewhere.append(name)
                    continue
                result.graded.append(name)
                if self.options.class_outputs:
                    with self._outputs_lock:
                        class_outputs.publish(self.out, self.manifest.labs, names, self.key, result.sandbox,
                                              self._leaderboard(), graded={name}, store=self.records)
        if failed:
            raise failed[0]

    def _leaderboard(self) -> bool:
        return self.policy.gradescope.leaderboard

    def _run_folder(self) -> Path:
        """This run's plans, expected sums and timing files: per seed, and per grader when several share OUT."""
        folder = self.out / "work" / ".run" / str(self.seed)
        return folder / self.options.run_tag if self.options.run_tag else folder

    def _prepare_plans(self) -> None:
        """The run's test plans and expected sums, written by the trusted checker once for the class."""
        folder = self._run_folder()
        self.expectations = folder / "expected.txt"
        tests = self.policy.tests
        large = self.options.large or tests.large
        for lab in self.options.labs:
            if not (lab.host or self.gpu):
                continue
            plan = folder / f"{lab.folder}.plan"
            if not plan.is_file():
                self.tools.make_plan(lab, self.seed, plan, large=large)
                self.tools.expect(plan, self.expectations)
            self.plans[lab.folder] = plan
            if self.sanitizer_ok and not lab.host:
                small = folder / f"{lab.folder}.sanitize.plan"
                if not small.is_file():
                    self.tools.make_plan(lab, self.seed, small, cases=list(self.policy.sanitizer.cases))
                self.sanitizer_plans[lab.folder] = small

    def _compile_cache(self, result: ClassResult) -> CompileCache | None:
        """Modules by the content of their lab file (compile_cache.py), where compiles are sandboxed: an
        unsandboxed compile can read what its file's folder holds, which is the student's."""
        identity = getattr(self.tools, "compile_identity", None)
        if identity is None or unsandboxed(result.sandbox) or not self.options.compile_cache:
            return None
        try:
            return CompileCache(self.out / "work" / CACHE_FOLDER, identity())
        except (RuntimeError, OSError) as exc:
            self.note(f"note: every lab file is compiled (no module cache: {exc})")
            return None

    def _sanitizer_self_test(self) -> str:
        """Every tool on the reference module of the first GPU lab, through the students' channel and
        sandbox: "" when each log reads clean (or there is nothing to test it on), else what went wrong.
        A tool that cannot report on its channel would make every student's run a finding."""
        lab = next((lab for lab in self.options.labs if lab.folder in self.sanitizer_plans), None)
        module = self.manifest.reference_module(lab) if lab else None
        if module is None or not module.is_file():
            return ""
        config = self.policy.sanitizer

        def run(tool: str):
            return self.tools.run_sanitizer(SELF_TEST, lab, tool, module, self.sanitizer_plans[lab.folder],
                                            config.timeout_s, config.call_timeout_s)
        with pool(len(config.tools)) as runs:   # at once: each tool's start takes seconds, before any student
            results = dict(zip(config.tools, runs.map(run, config.tools)))
        problem = self_test(results.__getitem__, config.tools, f"the reference of {lab.folder}")
        if not problem:
            self.note(f"sanitizer: {', '.join(config.tools)} report on a log of their own (self-test on the reference "
                     f"of {lab.folder}: clean)")
        return problem

    def _done(self, name: str) -> bool:
        """Nothing to grade: complete with every lab of this run, and with --force graded by this run
        (another worker of it)."""
        record = self.records.load(name)
        complete = record is not None and record.complete and all(lab.folder in record.labs
                                                                  for lab in self.options.labs)
        return complete and (not self.options.force or record.run == self.options.run)

    def note(self, line: str) -> None:
        self.emit(ev.Note(line=line))

    # ---- one student

    def grade_student(self, index: int, total: int, name: str, root: Path) -> StudentRecord:
        who = (index, total, name)   # the events' student fields
        self.emit(ev.StudentStarted(*who))
        work = work_folder(self.out, name)
        earlier = self.records.load(name)
        earlier = earlier if earlier and earlier.complete else None  # the labs not graded now are carried over
        shutil.rmtree(work, ignore_errors=True)  # no module of an earlier grading may be run
        submission = collect(name, root, self.options.labs)
        bench = self.policy.benchmark
        record = StudentRecord(
            student=name, grader=GRADER_VERSION, started=now(), date=datetime.date.today().isoformat(),
            submission=str(root), policy=self.policy.path, seed=str(self.seed), sandbox=self.tools.sandbox_status(),
            machine={"gpu": self.gpu, "sanitizer": self.sanitizer_ok}, ignored=submission.ignored, run=self.run,
            benchmark=BenchmarkInfo(types=list(bench.types), sizes=list(bench.sizes),
                                    sizes_n=[benchmark.parse_size(s) for s in bench.sizes],
                                    host_sizes_n=[benchmark.parse_size(s) for s in bench.host_sizes],
                                    host_labs=[lab.folder for lab in self.options.labs if lab.host]))
        if not self.gpu:
            record.notes.append(NO_GPU_MESSAGE)
        record.notes += [f"ignored: {path}" for path in submission.ignored]
        for lab in self.options.labs:
            record.labs[lab.folder] = self._prepare_lab(lab, submission, work)
        self.records.save(record)
        for stage in self.stages:   # stages/: compile, test, sanitize, time
            started, cpu = time.monotonic(), self._cpu_seconds(name)
            stage.run(who, record, work)
            for later in self.stages:
                if later.begins_after == stage.name:
                    later.begin(who, record, work)
            record.step_seconds[stage.name] = round(time.monotonic() - started, 2)
            after = self._cpu_seconds(name)
            self.ledger.stage(stage.name, name, time.monotonic() - started,
                              None if cpu is None or after is None else after - cpu)
            self.records.save(record)
        self.score.run(who, record, work)
        if earlier:
            self.score.carry_over(record, earlier)
        record_flags(record)   # what the grader saw that an instructor should look at, as data in the record
        if stopping():   # a run killed by the stop is no verdict: the record stays incomplete, a rerun redoes it
            raise Stopping("the grader is stopping")
        record.complete = True
        record.finished = now()
        self.records.save(record)
        total_text = (reports.format_points(record.total) if record.total is not None else "n/a (not all labs run)")
        self.emit(ev.StudentDone(*who, points=total_text, maximum=reports.max_total_text(record),
                                 steps=dict(record.step_seconds),
                                 verdicts=tuple(entry.verdict for entry in record.labs.values())))
        return record

    def _cpu_seconds(self, student: str) -> float | None:
        """The CPU time of `student`'s runs so far: its cgroup's and its timing turns' (None: no cgroups)."""
        own = self.cpu.seconds_of(student)
        return None if own is None else own + self.runs.timing_cpu_seconds(student)

    def lab(self, folder: str) -> Lab:
        return next(lab for lab in self.options.labs if lab.folder == folder)

    def _skeleton(self, lab: Lab) -> Path:
        for directory in self.skeleton_dirs:
            candidate = Path(directory) / lab.folder / lab.file
            if candidate.is_file():
                return candidate
        raise FileNotFoundError(f"no official skeleton for {lab.folder}/{lab.file}")

    def _prepare_lab(self, lab: Lab, submission: Submission, work: Path) -> LabRecord:
        entry = LabRecord(folder=lab.folder, file=lab.file, module=lab.module)
        source = submission.files.get(lab.folder)
        if lab.folder in submission.too_large:
            entry.verdict = COMPILE_ERROR
            entry.detail = (f"labs/{lab.folder}/{lab.file} is {submission.too_large[lab.folder]} bytes: a lab file may "
                            f"be at most {MAX_LAB_FILE_BYTES} bytes")
            return entry
        if source is None:
            entry.verdict = MISSING
            entry.detail = f"no labs/{lab.folder}/{lab.file} in the submission"
            if lab.folder in submission.near_misses:
                entry.detail += " (found: " + ", ".join(submission.near_misses[lab.folder]) + ")"
            return entry
        entry.submitted = source.relative_to(submission.root).as_posix()
        try:
            text, notes = splice(read_text(self._skeleton(lab)), read_text(source), entry.submitted)
        except RegionError as exc:
            entry.verdict = COMPILE_ERROR
            entry.detail = str(exc)
            return entry
        entry.notes += notes
        spliced = work / "src" / lab.folder / lab.file
        spliced.parent.mkdir(parents=True, exist_ok=True)
        spliced.write_text(text, encoding="utf-8")
        spliced.chmod(0o644)  # the sandbox reads it as "others"
        entry.source = str(spliced)
        return entry
