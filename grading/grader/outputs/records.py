"""The grader's typed records: one student's grading, lab by lab, as written to OUT/students/.

Only the trusted grader writes these (outside every sandbox), and each file is signed
(signing.py): a rerun and the class outputs believe only records that carry this grader's
signature. Field names are the JSON keys, so `asdict` is the file format and `from_json` reads it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

UNSANDBOXED = "UNSANDBOXED"   # how a record's `sandbox` (and the console, the outputs) starts when no sandbox was made


def unsandboxed(sandbox: str) -> bool:
    """Whether a sandbox description (Sandbox.describe(), a record's `sandbox`) says none was made."""
    return sandbox.startswith(UNSANDBOXED)


@dataclass
class CompileResult:
    ok: bool = False
    seconds: float = 0.0
    command: list[str] = field(default_factory=list)
    output: str = ""          # the compiler's diagnostics located in the student's file and public headers (diagnostics.py)
    module_sha256: str = ""   # the module as compiled; every later run checks it is still this
    refused: list[str] = field(default_factory=list)  # library headers the lab used that it refuses ("cub/...": libraries.py)
    cached: bool = False      # the module of an identical lab file compiled before (compile_cache.py): no compile ran
    source: str = ""          # the file compiled (a copy named by its content where modules are cached): the
                              # path in the module's line info and the compiler's words


@dataclass
class TestRun:
    returncode: int | None = None
    timed_out: bool = False   # the grader's wall-clock limit
    stalled: bool = False     # no progress for a call's time limit: the grader stopped it
    output_limit: bool = False
    seconds: float = 0.0
    check: dict | None = None  # the trusted checker's report (checks.TestCheck), as it decided
    program_output: str = ""   # what the student's code printed (program_output.py): shown, decides nothing


@dataclass
class SanitizerResult:
    status: str = ""                                     # "run", "skipped (...)", "not applicable ..."
    findings: list[dict] = field(default_factory=list)   # one per tool (sanitizer_findings.SanitizerFinding)
    hazards: dict[str, int] = field(default_factory=dict)
    cases: list[str] = field(default_factory=list)       # the cases each tool ran ("TYPE PATTERN N", policy [sanitizer])


@dataclass
class LabBenchmark:
    rows: list[dict] = field(default_factory=list)  # the student's timings rows of this lab
    ratio: float | None = None
    statistic: str = ""
    note: str = ""
    no_reference: bool = False
    impossible: bool = False   # faster than the read roof of the same run: no performance points
    contradicted: bool = False  # the timekeeper's clock contradicts the times claimed: no performance points
    clock: list[dict] = field(default_factory=list)  # per (type, n): the claim against the clock (benchmark.ClockCheck)

    @property
    def time_refused(self) -> bool:
        """A time the grader refused (below the roof, or contradicted by its clock): '?' in the summaries."""
        return self.impossible or self.contradicted


@dataclass
class LabScore:
    correctness: float | None = None
    correctness_max: float = 0.0
    performance: float | None = None
    performance_max: float = 0.0
    total: float | None = None
    max: float = 0.0
    notes: list[str] = field(default_factory=list)
    bonus: bool = False   # a bonus lab: counted in the student's total, not in max_total


@dataclass
class LabRecord:
    folder: str
    file: str
    module: str
    verdict: str | None = None
    detail: str = ""
    submitted: str | None = None
    notes: list[str] = field(default_factory=list)
    compile: CompileResult = field(default_factory=CompileResult)
    tests: TestRun = field(default_factory=TestRun)
    sanitizer: SanitizerResult = field(default_factory=SanitizerResult)
    benchmark: LabBenchmark = field(default_factory=LabBenchmark)
    score: LabScore = field(default_factory=LabScore)
    source: str = ""        # the spliced file (OUT/work/<student>/src/...)
    module_path: str = ""   # the module the grader keeps (OUT/work/<student>/modules/...)


@dataclass
class BenchmarkInfo:
    types: list[str] = field(default_factory=list)
    sizes: list[str] = field(default_factory=list)
    sizes_n: list[int] = field(default_factory=list)
    host_sizes_n: list[int] = field(default_factory=list)   # the host labs' ([benchmark] host_sizes)
    host_labs: list[str] = field(default_factory=list)      # the labs timed at host_sizes_n
    status: str = "not run"
    problems: list[str] = field(default_factory=list)
    device: dict = field(default_factory=dict)
    reference_drift: float | None = None   # reference after / before the student's run (A/A across processes)
    program_output: str = ""               # what the student's code printed in its timing run (shown only)


@dataclass
class StudentRecord:
    student: str
    complete: bool = False
    grader: str = ""
    started: str = ""
    finished: str | None = None
    date: str = ""
    submission: str = ""
    policy: str = ""
    seed: str = ""                 # the run's input seed: a failure replays with --seed
    sandbox: str = ""              # how student code was confined (UNSANDBOXED + ": why" when it was not)
    machine: dict = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    benchmark: BenchmarkInfo = field(default_factory=BenchmarkInfo)
    labs: dict[str, LabRecord] = field(default_factory=dict)
    timings: list[dict] = field(default_factory=list)
    total: float | None = None      # every lab's points, bonus labs included
    max_total: float | None = None  # the maximum of the labs that are not bonus labs
    gpu_name: str = ""
    step_seconds: dict[str, float] = field(default_factory=dict)  # compile, test, sanitize, time
    run: str = ""                  # the grading run that made it: the workers of one --gpus run share it
    flags: list[dict] = field(default_factory=list)  # integrity flags (flags.Flag as JSON): what needs attention

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "StudentRecord":
        record = _build(cls, data)
        record.benchmark = _build(BenchmarkInfo, data.get("benchmark", {}))
        record.labs = {folder: _lab_from_json(entry) for folder, entry in data.get("labs", {}).items()}
        return record


_LAB_PARTS = {"compile": CompileResult, "tests": TestRun, "sanitizer": SanitizerResult, "benchmark": LabBenchmark,
              "score": LabScore}


def _build(cls, data: dict):
    """An instance of `cls` from the keys of `data` it knows (unknown keys are dropped)."""
    known = {f.name for f in fields(cls)}
    return cls(**{key: value for key, value in data.items() if key in known})


def _lab_from_json(data: dict) -> LabRecord:
    lab = _build(LabRecord, data)
    for name, part in _LAB_PARTS.items():
        setattr(lab, name, _build(part, data.get(name) or {}))
    return lab
