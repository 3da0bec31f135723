"""Grading a class: per student, compile their lab files, test, sanitize, time, score.

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

import contextlib
import dataclasses
import datetime
import json
import secrets
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from . import benchmark, class_outputs, reports, scoring, signing
from . import events as ev
from .claims import Claim
from .compile_view import rule_sentence
from .cpu_share import CpuShare
from .diagnostics import first_error, public_folders, student_diagnostics
from .flags import add_flag
from .gpu_gate import CPU_RANK, GPU_RANK, Gate, Turn
from .lab_flags import record_flags
from .libraries import refusal_detail
from .manifest import Lab, Manifest
from .neighbours import Met, Neighbours
from .policy import Policy
from .program_output import program_output
from .records import BenchmarkInfo, LabRecord, SanitizerResult, StudentRecord, TestRun
from .resources import COMPILE, SANITIZER, TEST, TIMED_OUT, ResourceFailure, resource_failure, retry_note
from .student_paths import record_path, work_folder
from .submission import MAX_LAB_FILE_BYTES, RegionError, Submission, collect, read_text, splice
from .process import Stopping, stopping
from .toolchain import CompileRun, sha256_of
from .sanitizer_findings import CLEAN, HAZARDS, sanitizer_finding, self_test
from .verdicts import COMPILE_ERROR, COMPILE_TIMED_OUT, MISSING, NOT_RUN, PASSED, RUNTIME_ERROR, TIMEOUT, test_verdict

GRADER_VERSION = "reduction-labs grader 2.0"
NO_GPU_MESSAGE = "correctness and timing were not run: no GPU on this machine"
PUBLIC_SEED = 20261121  # the student's self-check (and the test suite): fixed, so a failure replays the same
SELF_TEST = ""          # the "student" of the sanitizer's self-test runs (a reference module: no folder has this name)


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
        self.emit: ev.Sink = events or ev.Console(log)   # the run's progress, as typed events (events.py)
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
        # Lock order (gpu_gate.py): compile slots, CPU gate, GPU gate, GPU slots.
        self.cpu_gate = Gate("CPU", CPU_RANK)
        self.gpu_gate = Gate("GPU", GPU_RANK)
        self._timing_turns: dict[str, Turn] = {}   # per timing part, its latest turn (benchmark.HOST, DEVICE)
        self._compile_slots = threading.Semaphore(max(1, options.jobs))
        self._gpu_slots = threading.Semaphore(1)  # set from [tests] concurrency in grade_class
        self.cpu: CpuShare = getattr(toolchain, "cpu_share", None) or CpuShare.off("the toolchain has none")
        self.neighbours = Neighbours(self.cpu.others_seconds)   # who ran beside whom, for runs harmed by a classmate
        self._alone_seconds: dict[str, float] = {}   # per student, the time its runs again alone took
        self._alone_lock = threading.Lock()
        self._outputs_lock = threading.Lock()

    # ---- class level

    def grade_class(self, students: list[tuple[str, Path]], roster: list[str] | None = None) -> ClassResult:
        """Grades `students`; the class files list `roster` (default: the students graded now)."""
        self.gpu = bool(self.tools.gpu_available())
        # A CPU share per student in flight, and a core kept for the timing runs (cpu_share.py).
        self.cpu.start(self.options.in_flight, self.gpu and self.options.bench)
        try:
            return self._grade_class(students, roster)
        finally:
            self.cpu.close()

    def _grade_class(self, students: list[tuple[str, Path]], roster: list[str] | None) -> ClassResult:
        result = ClassResult()
        self.sanitizer_ok = self.options.sanitizer and self.gpu and bool(self.tools.sanitizer_available())
        self.seed = self.options.seed if self.options.seed is not None else secrets.randbits(62)
        self.run = self.options.run or secrets.token_hex(8)
        self.key = signing.load_key(self.out)
        result.no_gpu = not self.gpu
        result.sanitizer_missing = self.options.sanitizer and self.gpu and not self.sanitizer_ok
        result.seed, result.sandbox = self.seed, self.tools.sandbox_status()
        self.note(f"inputs: seed {self.seed} (replay with --seed {self.seed}); student code: {result.sandbox}")
        if result.sandbox.startswith("UNSANDBOXED") and not self.options.self_check:  # your own code: no matter
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
        self._gpu_slots = threading.Semaphore(max(1, int(self.policy.section("tests")["concurrency"])))
        self.timing = benchmark.ClassTiming(self.tools, self.manifest, self.options.labs,
                                            self.policy.section("benchmark"), self.seed, self._run_folder() / "timing",
                                            self.gpu, self.expectations)
        names = roster or [name for name, _ in students]
        self.emit(ev.ClassStarted(students=len(students)))
        todo = []
        for index, (name, root) in enumerate(students, 1):
            path = record_path(self.out, name)
            if self._done(path):
                self.emit(ev.StudentSkipped(index, len(students), name, record=str(path)))
                result.skipped.append(name)
            else:
                todo.append((index, name, root))

        def grade(index: int, name: str, root: Path) -> StudentRecord | None:
            with Claim(self.out, name) as claim:
                if not claim.acquire():
                    self.emit(ev.StudentSkipped(index, len(students), name, why=ev.StudentSkipped.ELSEWHERE))
                    return None
                if self._done(record_path(self.out, name)):   # finished by another grader since the look above
                    self.emit(ev.StudentSkipped(index, len(students), name, why=ev.StudentSkipped.MEANWHILE))
                    return None
                with self.cpu.student(name) as problem:   # its runs' CPU share, while it is in flight
                    if problem:
                        self.emit(ev.StudentWarning(index, len(students), name, problem=problem))
                    return self.grade_student(index, len(students), name, root)

        # Students in flight: while one student's timing has the GPU alone, the next ones compile on
        # the CPU cores around it, and test on the GPU around the others (gpu_gate.py).
        with self._pool(self.options.in_flight) as pool:
            futures = {pool.submit(grade, *job): job[1] for job in todo}
            for future in as_completed(futures):
                name, record = futures[future], future.result()
                if record is None:
                    result.elsewhere.append(name)
                    continue
                result.graded.append(name)
                if self.options.class_outputs:
                    with self._outputs_lock:
                        class_outputs.publish(self.out, self.manifest.labs, names, self.key, result.sandbox,
                                              self._leaderboard(), graded={name})
        result.records = class_outputs.publish(self.out, self.manifest.labs, names, self.key, result.sandbox,
                                               self._leaderboard())
        if any(entry.verdict == NOT_RUN for record in result.records for entry in record.labs.values()):
            result.no_gpu = True
        return result

    def _leaderboard(self) -> bool:
        return bool(self.policy.section("gradescope")["leaderboard"])

    def _run_folder(self) -> Path:
        """This run's plans, expected sums and timing files: per seed, and per grader when several share OUT."""
        folder = self.out / "work" / ".run" / str(self.seed)
        return folder / self.options.run_tag if self.options.run_tag else folder

    def _prepare_plans(self) -> None:
        """The run's test plans and expected sums, written by the trusted checker once for the class."""
        folder = self._run_folder()
        self.expectations = folder / "expected.txt"
        tests = self.policy.section("tests")
        large = self.options.large or bool(tests.get("large"))
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
                    self.tools.make_plan(lab, self.seed, small, cases=list(self.policy.section("sanitizer")["cases"]))
                self.sanitizer_plans[lab.folder] = small

    def _sanitizer_self_test(self) -> str:
        """Every tool on the reference module of the first GPU lab, through the students' channel and
        sandbox: "" when each log reads clean (or there is nothing to test it on), else what went wrong.
        A tool that cannot report on its channel would make every student's run a finding."""
        lab = next((lab for lab in self.options.labs if lab.folder in self.sanitizer_plans), None)
        module = self.manifest.reference_module(lab) if lab else None
        if module is None or not module.is_file():
            return ""
        config = self.policy.section("sanitizer")

        def run(tool: str):
            return self.tools.run_sanitizer(SELF_TEST, lab, tool, module, self.sanitizer_plans[lab.folder],
                                            float(config["timeout_s"]), float(config["call_timeout_s"]))
        problem = self_test(run, config["tools"], f"the reference of {lab.folder}")
        if not problem:
            self.note(f"sanitizer: {', '.join(config['tools'])} report on a log of their own (self-test on the reference "
                     f"of {lab.folder}: clean)")
        return problem

    def _load(self, path: Path) -> StudentRecord | None:
        """A record this grader wrote (signed with this output folder's key), or None."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not signing.verify(self.key, data):
            return None
        return StudentRecord.from_json(data)

    def _complete(self, path: Path) -> bool:
        record = self._load(path)
        return record is not None and record.complete and all(lab.folder in record.labs for lab in self.options.labs)

    def _done(self, path: Path) -> bool:
        """Nothing to grade: complete, and with --force graded by this run (another worker of it)."""
        if not self.options.force:
            return self._complete(path)
        record = self._load(path)
        return record is not None and record.run == self.options.run and self._complete(path)

    def note(self, line: str) -> None:
        self.emit(ev.Note(line=line))

    def _write(self, path: Path, record: StudentRecord) -> None:
        reports.write_json(path, signing.sign(self.key, record.to_json()))

    # ---- one student

    def grade_student(self, index: int, total: int, name: str, root: Path) -> StudentRecord:
        who = (index, total, name)   # the events' student fields
        self.emit(ev.StudentStarted(*who))
        work = work_folder(self.out, name)
        json_path = record_path(self.out, name)
        earlier = self._load(json_path)
        earlier = earlier if earlier and earlier.complete else None  # the labs not graded now are carried over
        shutil.rmtree(work, ignore_errors=True)  # no module of an earlier grading may be run
        submission = collect(name, root, self.options.labs)
        bench = self.policy.section("benchmark")
        record = StudentRecord(
            student=name, grader=GRADER_VERSION, started=now(), date=datetime.date.today().isoformat(),
            submission=str(root), policy=self.policy.path, seed=str(self.seed), sandbox=self.tools.sandbox_status(),
            machine={"gpu": self.gpu, "sanitizer": self.sanitizer_ok}, ignored=submission.ignored, run=self.run,
            benchmark=BenchmarkInfo(types=list(bench["types"]), sizes=list(bench["sizes"]),
                                    sizes_n=[benchmark.parse_size(s) for s in bench["sizes"]]))
        if not self.gpu:
            record.notes.append(NO_GPU_MESSAGE)
        record.notes += [f"ignored: {path}" for path in submission.ignored]
        for lab in self.options.labs:
            record.labs[lab.folder] = self._prepare_lab(lab, submission, work)
        self._write(json_path, record)
        for what, step in (("compile", self._compile_all), ("test", self._test_all), ("sanitize", self._sanitize_all),
                           ("time", self._benchmark)):
            started = time.monotonic()
            step(who, record, work)
            record.step_seconds[what] = round(time.monotonic() - started, 2)
            self._write(json_path, record)
        self._score(record)
        if earlier:
            self._carry_over(record, earlier)
        record_flags(record)   # what the grader saw that an instructor should look at, as data in the record
        if stopping():   # a run killed by the stop is no verdict: the record stays incomplete, a rerun redoes it
            raise Stopping("the grader is stopping")
        record.complete = True
        record.finished = now()
        self._write(json_path, record)
        total_text = (reports.format_points(record.total) if record.total is not None else "n/a (not all labs run)")
        self.emit(ev.StudentDone(*who, points=total_text, maximum=reports.max_total_text(record),
                                 steps=dict(record.step_seconds),
                                 verdicts=tuple(entry.verdict for entry in record.labs.values())))
        return record

    def _lab(self, folder: str) -> Lab:
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

    @contextlib.contextmanager
    def _pool(self, workers: int):
        """A thread pool (each job waits on a subprocess) that drops its queued jobs on an error."""
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def _compile_all(self, who: tuple, record: StudentRecord, work: Path) -> None:
        todo = [entry for entry in record.labs.values() if entry.verdict is None]
        timeout = float(self.policy.section("compile")["timeout_s"])
        (work / "modules").mkdir(parents=True, exist_ok=True)
        public = public_folders(self.manifest.nvcc, self.manifest.include_dirs)

        def build(entry: LabRecord):
            lab = self._lab(entry.folder)
            module = work / "modules" / lab.module_file

            def compile_():
                return self.tools.compile(record.student, lab, Path(entry.source), module, timeout,
                                          self.policy.refused_libraries(lab))

            # The cores, shared by every student in flight (a slot first, then the gate: gpu_gate.py).
            with self._compile_slots, self.cpu_gate.shared(), self.neighbours.run(record.student, False) as met:
                result = compile_()
            if result.process.returncode != 0 or not module.is_file():
                timed_out = TIMED_OUT if result.process.timed_out else None
                failure = resource_failure(COMPILE, result.process) or timed_out
                result = self._again_alone(who, record, entry, "compile", failure, met, False, compile_,
                                           lambda again: "compiles" if again.process.returncode == 0 and module.is_file()
                                           else COMPILE_ERROR) or result
            return entry, module, result

        with self._pool(self.options.jobs) as pool:
            for entry, module, run in pool.map(build, todo):
                self._compiled(record, entry, module, run, public, timeout)
                if entry.verdict == COMPILE_ERROR:
                    self.emit(ev.LabVerdict(*who, lab=entry.folder, verdict=COMPILE_ERROR))
        for entry in record.labs.values():
            if entry.verdict == MISSING:
                self.emit(ev.LabVerdict(*who, lab=entry.folder, verdict=MISSING))

    def _compiled(self, record: StudentRecord, entry: LabRecord, module: Path, run: CompileRun,
                  public: tuple[Path, ...], timeout: float) -> None:
        """A lab's compile into its record: what it said, its verdict and why, its module's digest."""
        result = run.process
        lab = self._lab(entry.folder)
        shown = f"labs/{entry.folder}/{entry.file}"
        output = student_diagnostics(result.stdout + "\n" + result.stderr, entry.source, shown, public)
        rule = rule_sentence(run.outside) if run.outside else ""
        if rule:   # the assembler's own words are located in its temporary file, which a report never quotes
            output = f"{output}\n{rule}".strip()
            add_flag(record.flags, "outside_view", entry.folder, rule)
        ok = result.returncode == 0 and not result.timed_out and module.is_file()
        entry.compile.ok, entry.compile.seconds = ok, round(result.seconds, 2)
        entry.compile.command, entry.compile.output = ["nvcc", *self.manifest.module_flags, shown], output
        entry.compile.refused = list(run.refused)
        if result.timed_out:
            entry.verdict = COMPILE_ERROR
            entry.detail = f"{COMPILE_TIMED_OUT} {timeout:.0f} s"
        elif result.output_limit:
            entry.verdict = COMPILE_ERROR
            entry.detail = "the compiler's output or the module exceeded the grader's size limit"
        elif run.refused:   # before a compile error: a hidden library's header is why it failed
            entry.compile.ok = False
            entry.verdict = COMPILE_ERROR
            entry.detail = refusal_detail(lab.number, list(run.refused), self.policy.refused_libraries(lab))
        elif run.unlisted:
            entry.compile.ok = False
            entry.verdict = COMPILE_ERROR
            entry.detail = ("the grader could not read the compiler's list of the headers this lab includes, "
                            "so it cannot tell whether it uses a library reduction (a grader problem)")
        elif not ok:
            entry.verdict = COMPILE_ERROR
            error = rule or first_error(output)
            entry.detail = "does not compile" + (f": {error}" if error else "")
        else:
            entry.module_path = str(module)
            entry.compile.module_sha256 = sha256_of(module)

    @contextlib.contextmanager
    def _sharing(self, lab: Lab):
        """A correctness or sanitizer run, alongside others and never during a timing run or a run
        alone: a GPU lab's on the GPU (up to [tests] concurrency), the host lab's on the cores, with
        the compiles (its sandbox has no GPU)."""
        if lab.host:
            with self.cpu_gate.shared():
                yield
            return
        with self.gpu_gate.shared(), self._gpu_slots:
            yield

    def _again_alone(self, who: tuple, record: StudentRecord, entry: LabRecord, what: str,
                     failure: ResourceFailure | None, met: Met, gpu: bool, rerun, outcome):
        """`rerun()` once more, alone, when the first run (of `what`, on the GPU or not) failed for a
        shared resource while another student's runs shared it, or timed out while they held the
        cores (cpu_share.held). Returns the retry's result (None: the first run's stands), says so in
        the lab's notes and flags it; `outcome(result)` names how it ended."""
        if failure is None or stopping():
            return None
        if failure.cores:
            where = self.cpu.held(met.students, met.others_cpu_s, met.seconds)
        else:
            where = ("GPU" if gpu and met.on_gpu else "machine") if met.shared(failure.gpu_only) else None
        if where is None:
            return None
        student = record.student
        budget = float(self.policy.section("pipeline")["retry_alone_s"])
        with self._alone_lock:
            spent = self._alone_seconds.get(student, 0.0)
        result = None
        if spent >= budget:   # a student can make its own runs fail so: retries hold the whole machine
            then = (f"not run again: this student's runs alone took {spent:.0f} s already "
                    f"([pipeline] retry_alone_s = {budget:g})")
        else:
            with self._alone(student, gpu):
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
        self.emit(ev.Retried(*who, lab=entry.folder, note=note))
        return result

    @contextlib.contextmanager
    def _alone(self, student: str, gpu: bool):
        """No other student's compile, test, sanitizer or timing run at the same time: the CPU gate,
        then the GPU gate (the lock order), both exclusive; idle on the one the run does not use. The
        student's CPU quota is lifted meanwhile: a run alone has every student core, as in a grading
        of one student at a time."""
        with self.cpu_gate.exclusive(idle=gpu), self.gpu_gate.exclusive(idle=not gpu), \
                self.neighbours.run(student, gpu), self.cpu.unlimited(student):   # as if graded alone
            yield

    def _intact(self, entry: LabRecord) -> bool:
        """The module about to run is the one compiled (the sandbox cannot write it; this says so)."""
        path = Path(entry.module_path)
        return path.is_file() and sha256_of(path) == entry.compile.module_sha256

    def _test_all(self, who: tuple, record: StudentRecord, work: Path) -> None:
        tests = self.policy.section("tests")
        todo = []
        for entry in record.labs.values():
            if entry.verdict is not None:
                continue
            if not (self._lab(entry.folder).host or self.gpu):  # the grader's knowledge, not the runner's
                entry.verdict, entry.detail = NOT_RUN, "no GPU on this machine: not run"
            elif not self._intact(entry):
                entry.verdict, entry.detail = RUNTIME_ERROR, "the module changed after it was compiled"
            else:
                todo.append(entry)
        call_timeout = float(tests["call_timeout_s"])

        def run(entry: LabRecord):
            lab = self._lab(entry.folder)

            def test():
                return self.tools.run_tests(record.student, lab, Path(entry.module_path), self.plans[lab.folder],
                                            self.expectations, float(tests["timeout_s"]), call_timeout)

            def verdict(result) -> str:
                process, check = result
                return test_verdict(check, process, call_timeout).verdict if check else RUNTIME_ERROR

            with self._sharing(lab), self.neighbours.run(record.student, not lab.host) as met:
                result = test()
            if verdict(result) != PASSED and self._intact(entry):
                failure = resource_failure(TEST, *result) or (TIMED_OUT if verdict(result) == TIMEOUT else None)
                result = self._again_alone(who, record, entry, "test run", failure, met, not lab.host, test,
                                           verdict) or result
            return entry, result

        with self._pool(int(tests["concurrency"])) as pool:
            for entry, (process, check) in pool.map(run, todo):
                if check is None:
                    entry.verdict, entry.detail = RUNTIME_ERROR, "the grader could not check this run (a grader problem)"
                else:
                    verdict = test_verdict(check, process, call_timeout)
                    entry.verdict, entry.detail = verdict.verdict, verdict.detail
                    entry.tests = TestRun(process.returncode, process.timed_out, process.stalled, process.output_limit,
                                          round(process.seconds, 2), dataclasses.asdict(check),
                                          program_output(process.stdout, process.stderr))
                self.emit(ev.LabVerdict(*who, lab=entry.folder, verdict=entry.verdict,
                                        detail=entry.detail if entry.verdict != PASSED else ""))

    def _sanitize_all(self, who: tuple, record: StudentRecord, work: Path) -> None:
        config = self.policy.section("sanitizer")
        passed = [entry for entry in record.labs.values()
                  if entry.verdict == PASSED and not self._lab(entry.folder).host]
        for entry in record.labs.values():
            if entry.verdict != PASSED:
                continue
            if self._lab(entry.folder).host:
                entry.sanitizer = SanitizerResult("not applicable (host lab)")
            elif not self.options.sanitizer:
                entry.sanitizer = SanitizerResult("skipped (--no-sanitizer)")
            elif not self.sanitizer_ok:
                entry.sanitizer = SanitizerResult("sanitizer not available"
                                                  + (f": {self.sanitizer_why}" if self.sanitizer_why else ""))
            else:
                entry.sanitizer = SanitizerResult("run")
        if not self.sanitizer_ok or not passed:
            return
        for entry in passed:   # the report says how many cases each tool ran
            entry.sanitizer.cases = list(config["cases"])
        jobs = [(entry, tool) for entry in passed for tool in config["tools"] if self._intact(entry)]

        def run(job):
            entry, tool = job
            lab = self._lab(entry.folder)

            def sanitize():
                return self.tools.run_sanitizer(record.student, lab, tool, Path(entry.module_path),
                                                self.sanitizer_plans[lab.folder], float(config["timeout_s"]),
                                                float(config["call_timeout_s"]))

            def outcome(result) -> str:
                finding = sanitizer_finding(tool, result)
                return CLEAN if finding.status == CLEAN else f"{finding.count} finding(s)"

            with self._sharing(lab), self.neighbours.run(record.student, True) as met:
                result = sanitize()
            if outcome(result) != CLEAN and self._intact(entry):
                failure = resource_failure(SANITIZER, result) or (
                    TIMED_OUT if result.timed_out or result.stalled else None)
                result = self._again_alone(who, record, entry, f"{tool} run", failure, met, True, sanitize,
                                           outcome) or result
            return entry, tool, result

        with self._pool(int(self.policy.section("tests")["concurrency"])) as pool:
            for entry, tool, result in pool.map(run, jobs):
                finding = sanitizer_finding(tool, result)
                entry.sanitizer.findings.append(finding.to_json())
                if finding.counts:
                    entry.sanitizer.hazards[tool] = finding.count
                    hazard = finding.status == HAZARDS
                    add_flag(record.flags, "sanitizer_hazard" if hazard else "sanitizer_unreadable", entry.folder,
                             f"{tool}: " + (f"{finding.count} hazard(s)" if hazard else finding.note))
                    quoted = hazard and bool(finding.report)
                    self.emit(ev.SanitizerFinding(*who, lab=entry.folder, tool=tool, count=finding.count, hazard=quoted,
                                                  what=finding.report[0] if quoted else finding.note))

    def _benchmark(self, who: tuple, record: StudentRecord, work: Path) -> None:
        info = record.benchmark
        passed = [self._lab(entry.folder) for entry in record.labs.values()
                  if entry.verdict == PASSED and self._intact(entry)]
        if not self.options.bench:
            info.status = "skipped (--no-bench)"
            return
        if not self.gpu:
            info.status = "not run: no GPU on this machine"
            return
        if not passed:
            info.status = "nothing to time: no lab passed"
            return
        self.emit(ev.TimingStarted(*who, labs=tuple(lab.folder for lab in passed)))
        modules = {lab.folder: Path(record.labs[lab.folder].module_path) for lab in passed}
        outcome = self.timing.time_student(record.student, passed, modules, record.date,
                                           lambda part: self._timing_turn(record.student, part))
        info.status = "run" if not outcome.problems else "run with problems"
        info.problems = outcome.problems
        info.reference_drift = None if outcome.drift is None else round(outcome.drift, 4)
        info.program_output = outcome.program_output
        info.device = {"name": outcome.device} if outcome.device else {}
        record.gpu_name = outcome.device
        record.timings = [row for row in outcome.rows] + [row for lab in outcome.labs.values() for row in lab.rows]
        for folder, result in outcome.labs.items():
            ratios = [float(row["ratio_to_ref"]) for row in result.rows if row["status"] == "ok" and row["ratio_to_ref"]]
            unusable = result.impossible or result.contradicted or any(row["status"] != "ok" for row in result.rows)
            _flag_timing(record, folder, result)
            if ratios and not unusable and not result.note:
                result.ratio = round(self.policy.combine_ratios(ratios), 4)
                result.statistic = self.policy.section("performance")["statistic"]
            elif not ratios and not result.note:
                result.note, result.no_reference = "no reference timing to compare with", True
            record.labs[folder].benchmark = result

    @contextlib.contextmanager
    def _timing_turn(self, student: str, part: str):
        """One part of a student's timing, with the machine as a solo grading has it: the host items
        with nothing else on the cores or the GPU (the CPU gate, then the GPU gate, idle there: the
        host part's runs have no GPU), the device items with nothing else on the GPU, while other
        students' compiles go on. Yields whether nothing ran there since this part's last turn."""
        host = part == benchmark.HOST
        with contextlib.ExitStack() as stack:
            if host:
                turn = stack.enter_context(self.cpu_gate.exclusive())
                stack.enter_context(self.gpu_gate.exclusive(idle=True))
            else:
                turn = stack.enter_context(self.gpu_gate.exclusive())
            stack.enter_context(self.neighbours.run(student, not host))
            yield turn.quiet_since(self._timing_turns.get(part))
            self._timing_turns[part] = turn

    def _carry_over(self, record: StudentRecord, earlier: StudentRecord) -> None:
        """Grading some labs (--labs) keeps the other labs of an earlier complete grading."""
        kept = {folder: entry for folder, entry in earlier.labs.items() if folder not in record.labs}
        if not kept:
            return
        order = [lab.folder for lab in self.manifest.labs]
        merged = {**kept, **record.labs}
        record.labs = {folder: merged[folder] for folder in sorted(merged, key=lambda f: (f not in order,
                                                                                          order.index(f) if f in order else 0, f))}
        record.timings += [row for row in earlier.timings if row["lab"] in kept]
        record.flags += [flag for flag in earlier.flags if flag.get("lab") in kept and flag not in record.flags]
        record.notes.append(f"kept from the earlier grading ({earlier.finished}): {', '.join(kept)}")
        record.total, record.max_total = scoring.student_total([e.score for e in record.labs.values()])

    def _score(self, record: StudentRecord) -> None:
        info = record.benchmark
        bench_ran = info.status.startswith("run")
        for folder, entry in record.labs.items():
            lab = self._lab(folder)
            note = entry.benchmark.note if bench_ran else info.status
            measured = bench_ran and not entry.benchmark.no_reference
            entry.score = scoring.score_lab(lab, self.policy, entry.verdict, entry.sanitizer.hazards, entry.benchmark.ratio,
                                            measured, note)
        record.total, record.max_total = scoring.student_total([e.score for e in record.labs.values()])


def _flag_timing(record: StudentRecord, folder: str, result) -> None:
    """The integrity flags of a lab's timing: times the grader refused, and why (the lab's note)."""
    if result.contradicted:
        add_flag(record.flags, "time_contradicted", folder, result.note)
    elif result.impossible:
        add_flag(record.flags, "time_impossible", folder, result.note)
    elif any(row["status"] == "UNVERIFIED" for row in result.rows):
        add_flag(record.flags, "time_unverified", folder, result.note)
