"""The grading policy's settings, one dataclass per section of policy.toml: each setting's type, its
one default, its range and its help. grading/policy.toml is rendered from these classes
(policy_file.py), and a test holds the committed file to the rendering, so a default lives here only.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from .manifest import GraderError

SCALES = ("reference", "threshold")
STATISTICS = ("median", "mean", "max")
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")


def setting(default, help: str = "", *, before: str = "", low=None, high=None, choices: tuple = ()):
    """One setting: its default, its help (the comment after it in policy.toml; lines after the first
    line up under the first), a paragraph to print before it, and what values it accepts."""
    meta = {"help": help, "before": before, "low": low, "high": high, "choices": choices}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class PointsSettings:
    """Default points per lab; [labs.NN_name] below overrides them for one lab."""
    correctness: float = setting(10.0, "all of it when every test passes (minus sanitizer penalties), else 0", low=0)
    performance: float = setting(10.0, "only when the lab passed its tests; see [performance]", low=0)


POINTS_AFTER = """A lab with `bonus = true` in its [labs.NN_name] table is a bonus lab: its points count in a
student's total but not in the maximum (labs 01-10 make 190 points; labs 11 and 12 come on top).
Set bonus = false to make a lab part of the maximum like the others."""


@dataclass
class PerformanceSettings:
    """The ratio is student time / reference time, both timed interleaved in the same benchmark run.
A lab's ratio is the `statistic` (median, mean or max) of ratio_to_ref over the benchmarked
(type, n) rows: by default the median over {float, int} at n = 2^24 (see [benchmark])."""
    full_credit_ratio: float = setting(1.2, "ratio <= 1.2: full performance points", low=0)
    zero_credit_ratio: float = setting(10.0, "ratio > 10: no performance points", low=0)
    scale: str = setting("reference", choices=SCALES, before="""\
Between the two: "reference" = points x reference/time (1/ratio: 2x slower earns 50%; note the
step from 100% to 83% just past 1.2x); "threshold" = points x 1.2/ratio (continuous at 1.2x).""")
    statistic: str = setting("median", choices=STATISTICS)

    def check(self) -> None:
        if not 0 < self.full_credit_ratio <= self.zero_credit_ratio:
            raise GraderError("policy: need 0 < performance.full_credit_ratio <= performance.zero_credit_ratio")


@dataclass
class LabSettings:
    """One [labs.X] table: X is a lab's folder (01_host_sum), its two digits (05) or its number (5)."""
    correctness: float | None = setting(None, "points when it passes (default: [points] correctness)", low=0)
    performance: float | None = setting(None, "performance points (default: [points] performance)", low=0)
    bonus: bool | None = setting(None, "true: its points count in the total, not in the maximum")


DEFAULT_LABS = {
    "01_host_sum": LabSettings(performance=0.0),
    "11_single_pass": LabSettings(bonus=True),
    "12_any_operator": LabSettings(bonus=True),
}
LAB_NOTES = {   # policy.toml's comment on each default [labs.X] table
    "01_host_sum": ("The host lab is timed with a host clock, not against the GPU references: correctness only.", ""),
    "11_single_pass": ("", "beyond CUB: one pass, deterministic"),
    "12_any_operator": ("", "any associative operator with an identity"),
}
LAB_EXAMPLE = "[labs.10_two_step]\ncorrectness = 15.0\nperformance = 15.0"   # shown commented out


@dataclass
class CompileSettings:
    """A lab is the student's own reduction. A lab file whose include set (nvcc's own list of the headers it
opened, host and device passes) holds a library reduction's header is a COMPILE_ERROR that names the
header. libcu++ (cuda/std/*, cuda/atomic, cuda/barrier) and cooperative_groups.h are not reductions:
they always compile."""
    timeout_s: float = setting(120.0, "per nvcc invocation (one lab file), in the sandbox", low=1)
    allow_cccl: bool = setting(False, """\
true: CUB and Thrust (<cub/...>, <thrust/...>) are allowed in every lab, and no longer
hidden from the graded compile (a student's own build has them either way)""")
    refuse_cg_collectives: list[int] = setting([2, 3, 4, 5, 6, 7, 8, 9, 10], """\

labs that may not include cooperative_groups/reduce.h or scan.h (cg::reduce,
cg::inclusive_scan: a warp's or a block's sum in one call). Labs 02-10 teach that sum
step by step (atomics, the tree, the last warp, shuffles, the two steps); the bonus
labs 11 (one pass) and 12 (any operator) teach other things on top of lab 09's warp
sum, which they may take from the library. Lab 01 is host code: nothing to refuse.""", low=1, high=99)


@dataclass
class TestsSettings:
    """The test stage: each lab's test plan, in the sandbox."""
    timeout_s: float = setting(300.0, "wall clock for one lab's whole test run; the sandbox is killed past it", low=1)
    call_timeout_s: float = setting(20.0, """\
one call on 2^24 elements or more that runs longer is a TIMEOUT (a hung kernel): the
grader stops a run that reports no progress for this long, whatever the run's
environment says""", low=1)
    call_floor_s: float = setting(2.0, """\
the limit of a call on an empty input: a call on n elements may take this plus
(call_timeout_s - this) * n / 2^24, so a call that never ends on a small input
costs about this, not call_timeout_s. A TIMEOUT under a limit shorter than
call_timeout_s, with another student's runs beside it, is run again alone first.
call_timeout_s or more: every call gets call_timeout_s""", low=0.1)
    concurrency: int = setting(8, """\
labs tested (and sanitized) at the same time on the one GPU (correctness only;
timing runs alone)""", low=1, high=256)
    large: bool = setting(False, "also run Large.* (n > 2^31, 8 GiB inputs); same as --large")
    cuda_connections: int = setting(1, """\
CUDA_DEVICE_MAX_CONNECTIONS of the test and sanitizer runs (not the timing runs): the
hardware queues each run's CUDA context gets. The host's driver makes and ends a context
one process at a time; with one queue, 22 test processes 16 at a time over two H200s took
2.72 s, 5.42 with the default (context_cost.sh, 2026-11-28, docs/grading-at-scale.md). A
run's streams then share one queue: still correct, no longer concurrent. 0: the driver's
default (8)""", low=0, high=32)
    together: bool = setting(True, before="""\
true: a student's GPU labs first run in one runner, one after another (one process and one CUDA
context for them all), and only the labs that did not pass there run alone (after one more shared
run of the others when the first ended inside one lab's part). A class of 16 on one H200 took 10.64
s a student with it and 11.55 without, one benchmark (2026-11-27, docs/grading-at-scale.md).""")
    shared_call_timeout_s: float = setting(2.0, """\
in that shared run, a call that runs longer ends the run, and its lab runs alone
under the call limit above, which gives its verdict: a never-ending call costs this
once more, not the call limit twice (an honest call takes milliseconds)""", low=0.1)


@dataclass
class PipelineSettings:
    """A class is graded a few students at a time on each GPU: while one student's timing run has the GPU
alone, the next students compile on the CPU cores and run their tests (up to [tests] concurrency
runs) on the GPU around it. The timing runs stay one at a time and alone on their GPU."""
    students: int = setting(4, """\
students in flight per GPU (--in-flight); 1 grades one student after the other, the next one's
compiles and tests beside its timing (a student in its timing has no place).
Each has a CPU share (a cgroup, where the grader is root): a quota of the cores
(but the one kept for timing) divided by this, at least one core""", low=1, high=64)
    retry_alone_s: float = setting(600.0, low=0, before="""\
A compile, test or sanitizer run that failed for a resource all runs share (GPU or host memory, the
process table: "out of memory", EAGAIN, killed by the out-of-memory killer) while another student's
runs shared the machine, or that timed out while the other students' runs held the cores (their
cgroups' CPU time), is run again alone, once, and the retry's outcome is the verdict; the lab's
notes say so. Those retries hold the whole machine: a student's may take this long in all, and no
retry starts past it (a student can make its own runs fail that way; 0 = never run again alone).""")


@dataclass
class SanitizerSettings:
    """compute-sanitizer --tool X --error-exitcode 99 on a few small cases ("TYPE PATTERN N") of each GPU lab
that passed, in the sandbox. A run that ends without a clean summary counts as a finding."""
    tools: list[str] = setting(["memcheck", "racecheck", "synccheck"], choices=SANITIZER_TOOLS)
    cases: list[str] = setting(["int mixed_sign 2049", "float uniform_positive 1025", "int small_integers 33",
                                "float mixed_sign 65535"])
    timeout_s: float = setting(30.0, """\
one tool's run on one lab (a run over several labs: this times their number): honest
runs took at most 5.5 s in a class of 40 on one H200 (2026-11-28); one that outlives
this (student code holding it open: a child that never ends keeps the tool waiting)
counts as a finding, after this long for each tool""", low=1)
    call_timeout_s: float = setting(20.0, "one case under the tool (the cases are small: milliseconds)", low=1)
    penalty: dict[str, float] = setting({"memcheck": 0.5, "racecheck": 0.5, "synccheck": 0.5}, """\
Share of the lab's correctness points lost when the tool reports at least one hazard (the shares
of several tools add up, to at most all of them). 0 = report only.""", low=0, high=1)


@dataclass
class BenchmarkSettings:
    """Run alone on the GPU, one student at a time, after all tests: the references, the student's modules
(sandboxed), the references again. The host lab is timed paired where the CPU share has a cgroup
freezer: the reference's calls and the student's in turn in one run, the student's processes
frozen during the reference's (docs/grading-security.md). Every timed call's result is checked.
Lab 01 is timed too (for the plots) but earns no performance points by default."""
    sizes: list[str] = setting(["2^24"])
    host_sizes: list[str] = setting(["2^20"], before="""\
The host lab's sizes (lab 01). A host loop takes time in proportion to n, about 14 ms a float call at
2^24 on an H100's host, and its calls are many ([benchmark] host_samples, paired with the
reference's): at 2^24 its timing held the whole machine about 9 s a student, more than every GPU
lab's timing together (docs/grading-at-scale.md). Its ratio to the reference's loop is what the
grade and the plots use, and a loop's ratio is its ratio at any n that its data stays in memory.""")
    types: list[str] = setting(["float", "int"], choices=("float", "int"))
    samples: int = setting(25, "timed calls per lab, type and size (each after an L2 flush), per run", low=5, high=1000)
    host_samples: int = setting(100, low=5, high=1000, before="""\
The host lab's calls (lab 01, per type, size and paired run) and its paired runs: a loop on a CPU
core varies far more from one call to the next than a kernel on the GPU, and from one process to
the next. On an H100's host (2026-11-27, `aa_timing.py --labs 01 --rounds 16 --first 25,100`: 16
paired A/A runs at 2^20, float and int) the largest |ratio - 1| was 9.9 % over the first 25 calls of
each run, 1.8 % over 100 and 1.2 % over all 200; yet the same code in a grading of one student and
in a grading of 8 (the same machine, an hour apart) got ratios 1.055 and 0.996, one paired run each:
the reference's process took 897 us a float call in one and 952 in the other. host_runs pairs of
processes average that out. A host part whose every call is over 1.5 x [performance]
zero_credit_ratio after a run has no more runs: more cannot earn a point.""")
    host_runs: int = setting(4, low=1, high=50)
    warmup: int = setting(3, "calls before them (checked, not timed)", low=0, high=100)
    min_samples: int = setting(5, low=1, high=1000, before="""\
A time budget per timed item (one lab, type and size in one run): once min_samples calls are timed
and the item's timed calls took budget_ms on the timekeeper's clock (host_budget_ms for the host
lab, whose paired calls count both sides), the item is over. The budget ends only slow items: lab
02's float atomics take 30 ms a call at 2^24 on an H100 (2026-11-27), so its 28 calls held the GPU
0.8 s in every run, the reference's too, and their spread was 1.9 us (IQR) of 29,492; every other
reference's calls there took under 1.3 ms each, input and report included, so 25 fit in 100 ms.
0: no budget, every item its samples.""")
    budget_ms: float = setting(100.0, low=0)
    host_budget_ms: float = setting(1000.0, low=0)
    reference_reuse_s: float = setting(60.0, low=0, before="""\
A student's timing is bracketed by two trusted runs of the references, and the run after one
student is the next one's "before" when nothing ran on the GPU between them, or when it ended at
most this many seconds ago: in a pipelined class other students' test runs always come between,
and a fresh "before" costs a whole reference run per student. 0: only when nothing ran between.""")
    students_per_reference: int = setting(4, low=1, high=16, before="""\
The "after" of several students' device parts in a row is one reference run: when another student in
flight has its device part still to come as one's ends (even one still in its tests), its "after" is
the reference run that ends the row (at most this many students), which is also the next one's
"before" (the student, in its timing, has given its place in flight to the next). Each student's ratio is still its
median over the mean of the reference runs just before and just after its own, each timed with the
GPU alone. 1: a reference run after every student (docs/grading-at-scale.md has what each cost).""")
    host_part_holds_gpu: bool = setting(False, before="""\
The host part's timing (lab 01, on the timing core, no GPU) holds the cores and, with this, the GPU
too: no GPU test or sanitizer run beside it, as in a solo grading. false: those go on beside it on the
other cores (the student's own too: its host part is timed beside its sanitizer runs), which only
loads the machine's memory as their runs do; compiles and the host lab's test runs never do. A host
lab that earns performance points ([labs.01_host_sum] performance > 0) is always timed holding both.
Timing runs, host or device, are one at a time either way (they share the timing core).""")
    timeout_s: float = setting(900.0, "wall clock for one timing run", low=1)
    call_timeout_s: float = setting(20.0, "one timed call", low=1)
    clock_slack_us: float = setting(25.0, low=0, before="""\
The timekeeper's clock (outside the worker) against the times the worker claims: a student's calls
may take beyond their claim, from input to report, what the reference's calls of the same lab, type
and n took beyond theirs plus clock_slack_us + clock_slack_ratio x the claimed median; more makes
the lab's timing CONTRADICTED (no performance points, flagged). Tight values flag honest labs on a
noisy machine; loose ones let a lab hide that much work outside its timed window.""")
    clock_slack_ratio: float = setting(0.15, low=0)
    clock_attempts: int = setting(3, low=1, high=10, before="""\
Timings of a cell (lab, type, n) when the clock contradicts one: the first, then each again alone (the
contradicted cells only, between fresh runs of their references), and the last one stands. Time a lab
keeps out of its claim is there every time; a machine's noise is not. With 2, an
honest lab was contradicted twice in a class of 8 (H100, 2026-11-27, `bench_throughput.py --students
8`: in its second timing, lab 09's float calls took 626 us from go to report, the reference's 311).""")


@dataclass
class SandboxSettings:
    """Limits of every sandboxed compile and run (bubblewrap; see docs/grading-security.md)."""
    output_mib: int = setting(64, "largest file or output stream a run may write", low=1)
    processes: int = setting(512, "processes and threads of one sandboxed run (each run has a uid of its own)",
                             low=8)
    memory_gib: int = setting(8, "data segment of one run (host memory): far above what a lab's tests need", low=1)
    large_memory_gib: int = setting(48, """\
the same with --large (tests.large): 2^31 + 7 inputs take 8 GiB each on the host""", low=1)


@dataclass
class GradescopeSettings:
    """Each results.json may carry a "leaderboard": one entry per lab with a usable timing, its time /
the reference's (lower is better, "order": "asc"). Gradescope shows it only when the assignment's
leaderboard is on, under a pseudonym each student picks (docs/grading-at-scale.md)."""
    leaderboard: bool = setting(False)


@dataclass
class SlurmSettings:
    """grade.py --slurm (docs/slurm.md): a job array over the class, then a merge job. The command line's
--tasks, --partition, --account, --time, --merge-time, --gpus-per-task, --cpus-per-task win."""
    tasks: int = setting(4, "array tasks (at most; fewer when few students are left to grade)", low=1)
    partition: str = setting("", '"" = the cluster\'s default partition')
    account: str = setting("", '"" = your default account')
    time: str = setting("04:00:00", "one task's time limit: about (class size / tasks) x 30 s per student today")
    merge_time: str = setting("00:30:00")
    gpus_per_task: int = setting(1, """\
--gpus-per-task for each grading task; 0 = ask for none (a node without GPUs
refuses a job that asks; clusters that want --gres=gpu:1 set 0 and put it below)""", low=0)
    cpus_per_task: int = setting(8, "its parallel compiles; 0 = the cluster's default", low=0)
    sbatch_args: list[str] = setting([], 'more options for both jobs, e.g. ["--mem=64G", "--qos=normal"]')


# policy.toml's sections in order: (table name, class). [labs] is a table of LabSettings by lab.
SECTIONS = (("points", PointsSettings), ("performance", PerformanceSettings), ("labs", LabSettings),
            ("compile", CompileSettings), ("tests", TestsSettings), ("pipeline", PipelineSettings),
            ("sanitizer", SanitizerSettings), ("benchmark", BenchmarkSettings), ("sandbox", SandboxSettings),
            ("gradescope", GradescopeSettings), ("slurm", SlurmSettings))
