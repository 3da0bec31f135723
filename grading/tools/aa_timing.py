#!/usr/bin/env python3
"""The grader's own A/A check: each lab's reference timed as a student's would be (copied, in the
sandbox, by the student's timing worker) between trusted runs of the same reference, through the
same timekeeper, CPU share and timing core as a grading (benchmark.py). Rounds of
trusted, student, trusted, ... ; each student run's ratio is its median over the mean of the
trusted runs on either side, as a grading computes it. Where a grading times host labs paired
(toolchain.time_paired: a CPU share with a freezer, and the sandbox), so does this: each round is
one paired run, and its ratio the grading's: call by call (benchmark.paired_ratio; --unpaired:
host labs run by run as device labs, to compare). Prints every run's medians, then per lab,
type and n: the ratios, and over all of them the mean, the standard deviation and the largest
|ratio - 1|. The spread it shows is what a student's ratio moves by between one process and the
next on this machine; a bias (a mean away from 1) would be the sandbox's or the clock's.

    python3 grading/tools/aa_timing.py [--build-dir build/solutions] [--labs 01,05,10] [--rounds 4]
        [--sizes 2^24] [--types float,int] [--samples N] [--warmup 3] [--unpaired] [--policy FILE]
        [--first 25,100]

The calls per run are the policy's, as a grading's: [benchmark] host_samples for the host lab,
samples for device labs (--samples: N for both), each item cut short by the policy's budget
(min_samples, budget_ms, host_budget_ms).

It needs a build with the references (the solutions preset) and, for the student side, the sandbox
(root and bubblewrap); without it the student runs go unsandboxed and it says so. Device labs need
a GPU; without one only host labs are timed. Exit 0 when it measured, 2 when it could not.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # grading/

from grader.stages.benchmark import call_ratios, paired_ratio, parse_size  # noqa: E402
from grader.sandbox.cpu_share import CpuShare  # noqa: E402
from grader.manifest import GraderError, load_manifest  # noqa: E402
from grader.policy import Policy  # noqa: E402
from grader.settings import BenchmarkSettings  # noqa: E402
from grader.sandbox.bubblewrap import Limits, Sandbox  # noqa: E402
from grader.stages.toolchain import Toolchain  # noqa: E402
from grader.sandbox.toolkit import toolkit_of  # noqa: E402

TRUSTED, STUDENT = "trusted", "student"


@dataclass
class Run:
    side: str                                                        # TRUSTED or STUDENT
    medians: dict[tuple[str, str, int], float] = field(default_factory=dict)   # (lab, type, n) -> us


def ratios(runs: list[Run]) -> dict[tuple[str, str, int], list[float]]:
    """Each student run's median over the mean of the nearest trusted runs before and after it."""
    found: dict[tuple[str, str, int], list[float]] = {}
    for k, run in enumerate(runs):
        if run.side != STUDENT:
            continue
        before = next((r for r in reversed(runs[:k]) if r.side == TRUSTED), None)
        after = next((r for r in runs[k + 1:] if r.side == TRUSTED), None)
        for cell, median in run.medians.items():
            sides = [r.medians[cell] for r in (before, after) if r and r.medians.get(cell, 0) > 0]
            if len(sides) == 2 and median > 0:
                found.setdefault(cell, []).append(median / (sum(sides) / 2))
    return found


def summary(found: dict[tuple[str, str, int], list[float]]) -> str:
    """The lines printed last: per cell, then over every ratio."""
    lines, every = [], []
    for (lab, type_, n), values in sorted(found.items()):
        every += values
        lines.append(f"{lab} {type_} n={n}: " + " ".join(f"{v:.4f}" for v in values))
    if not every:
        return "no ratio: no student run had a trusted run on either side"
    spread = statistics.pstdev(every) if len(every) > 1 else 0.0
    worst = max(abs(v - 1.0) for v in every)
    lines.append(f"A/A over {len(every)} ratios: mean {statistics.mean(every):.4f}, standard deviation "
                 f"{100 * spread:.2f} %, largest |ratio - 1| {100 * worst:.2f} %")
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", type=Path, default=Path("build/solutions"), help="a build with the references")
    parser.add_argument("--labs", default="01,05,09,10", help="lab numbers (default: 01,05,09,10)")
    parser.add_argument("--rounds", type=int, default=4, help="student runs, each between two trusted runs")
    parser.add_argument("--sizes", default=None,
                        help="sizes, the grading's syntax (default: the policy's, host_sizes for the host lab)")
    parser.add_argument("--types", default="float,int")
    parser.add_argument("--samples", type=int, default=None,
                        help="timed calls per item and run (default: the policy's host_samples and samples)")
    parser.add_argument("--policy", type=Path, default=Path(__file__).resolve().parents[1] / "policy.toml",
                        help="the grading policy whose [benchmark] calls to use (default: grading/policy.toml)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--unpaired", action="store_true", help="host labs run by run, as device labs")
    parser.add_argument("--first", default="", help="paired host labs: also each run's ratio over its first K "
                                                    "calls, for each K of this list (e.g. 25,100)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds: at least 1")
    if args.samples is not None and args.samples < 1:
        parser.error("--samples: at least 1")
    try:
        args.first = sorted({int(k) for k in args.first.split(",") if k.strip()})
    except ValueError:
        parser.error("--first: a list of numbers of calls, e.g. 25,100")
    if any(k < 1 for k in args.first):
        parser.error("--first: at least 1 call")
    return args


def samples_of(args: argparse.Namespace, host: bool) -> int:
    """The timed calls of a run of host or device labs: --samples, else the policy's, as a grading."""
    if args.samples is not None:
        return args.samples
    bench = _benchmark_section(args.policy)
    return bench.host_samples if host else bench.samples


def sizes_of(args: argparse.Namespace, host: bool) -> list[int]:
    """--sizes, else the policy's, as a grading times them: host_sizes for the host lab."""
    if args.sizes:
        return [parse_size(size) for size in args.sizes.split(",")]
    bench = _benchmark_section(args.policy)
    return [parse_size(size) for size in (bench.host_sizes if host else bench.sizes)]


def budget_of(args: argparse.Namespace, host: bool) -> dict:
    """The item budget of a run of host or device labs, as a grading's (the policy's min_samples and
    budget_ms or host_budget_ms): a slow item ends after its least calls there, so here too."""
    bench = _benchmark_section(args.policy)
    return {"min_samples": min(bench.min_samples, samples_of(args, host)),
            "budget_ms": bench.host_budget_ms if host else bench.budget_ms}


@functools.cache
def _benchmark_section(policy: Path) -> BenchmarkSettings:
    return Policy.load(policy).benchmark   # read once: every run of a check asks


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        manifest = load_manifest(args.build_dir)
        samples_of(args, True)   # a policy that does not load stops here, with its message
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    numbers = {number.strip() for number in args.labs.split(",") if number.strip()}
    labs = [lab for lab in manifest.labs if lab.folder[:2] in numbers and manifest.reference_module(lab).is_file()]
    sandbox = Sandbox.detect((manifest.source_dir, manifest.binary_dir), [toolkit_of(manifest.nvcc).root])
    cpu = CpuShare.detect()
    cpu.start(1, True)
    tools = Toolchain(manifest, sandbox, Limits(), cpu_share=cpu)
    gpu = tools.gpu_available()
    labs = [lab for lab in labs if gpu or lab.host]
    paired = tools.pairs_host_timing and not args.unpaired
    print(f"student side: {tools.sandbox_status()}\nGPU: {'yes' if gpu else 'none: host labs only'}\n"
          f"{tools.pairing_status() if not args.unpaired else 'host labs timed run by run (--unpaired)'}")
    if not labs:
        print("error: no lab to time (a reference module of each lab asked for, and a GPU for device labs)",
              file=sys.stderr)
        cpu.close()
        return 2
    work = Path(tempfile.mkdtemp(prefix="reduction-aa-"))
    os.chmod(work, 0o755)
    try:
        copies = copy_references(manifest, labs, work)
        host = [lab for lab in labs if lab.host] if paired else []
        first: dict[int, dict] = {k: {} for k in args.first}
        calls: dict[tuple[str, str, int], list[list[float]]] = {}
        found = measure_paired(tools, manifest, host, args, work, copies, first, calls) if host else {}
        runs = measure(tools, manifest, [lab for lab in labs if lab not in host], args, work, sandbox.enabled, copies)
        found.update(ratios(runs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        cpu.close()
    for k, cells in first.items():
        print(f"over the first {k} calls of each paired run:\n" + summary(
            {cell: [v for v in values if v is not None] for cell, values in cells.items()}))
    if calls:
        runs = _benchmark_section(args.policy).host_runs
        print(f"as a grading takes it ([benchmark] host_runs = {runs} paired runs, their calls pooled):\n"
              + summary(pooled_ratios(calls, runs)))
    print(summary(found))
    return 0 if found else 2


def pooled_ratios(calls: dict[tuple[str, str, int], list[list[float]]], runs: int) -> dict[tuple[str, str, int], list[float]]:
    """Per cell, the ratio of each `runs` consecutive paired runs as a grading takes it: the median of
    all their call-by-call ratios (benchmark.merge_paired). A last group short of `runs` is left out."""
    found = {}
    for cell, per_run in calls.items():
        groups = [per_run[k:k + runs] for k in range(0, len(per_run) - runs + 1, runs)]
        found[cell] = [statistics.median(r for run in group for r in run) for group in groups
                       if any(group)]
    return found


def copy_references(manifest, labs, work: Path) -> dict[str, Path]:
    """Each lab's reference module, copied where the sandbox can read it: the student side's."""
    copies = {}
    for lab in labs:
        copies[lab.folder] = work / lab.module_file
        shutil.copy(manifest.reference_module(lab), copies[lab.folder])
        os.chmod(copies[lab.folder], 0o644)
    return copies


def _items(labs, types, sizes, module_of) -> list[str]:
    cells = [(lab, t, n) for lab in labs for t in types for n in sizes]
    return [f"t{i + 1:03d},{lab.folder},{'host' if lab.host else 'device'},{t},{n},{module_of(lab)}"
            for i, (lab, t, n) in enumerate(cells)]


def measure_paired(tools, manifest, labs, args, work: Path, copies, first: dict[int, dict] | None = None,
                   calls: dict | None = None) -> dict[tuple[str, str, int], list[float]]:
    """Host labs: `rounds` paired runs, the copy against the reference call by call; per run and
    cell, the copy's median over the reference's. `first[k]` (for each k of --first) gets each run's
    ratio over its first k calls only: what a run of k calls would have said, on the same calls."""
    sizes = sizes_of(args, True)
    types = [t.strip() for t in args.types.split(",") if t.strip()]
    samples = samples_of(args, True)
    plan = tools.timing_plan(7, _items(labs, types, sizes, lambda lab: copies[lab.folder]), samples, args.warmup, 20.0,
                             **budget_of(args, True))
    reference_plan = tools.timing_plan(7, _items(labs, types, sizes, manifest.reference_module), samples,
                                       args.warmup, 20.0, **budget_of(args, True))
    found: dict[tuple[str, str, int], list[float]] = {}
    for k in range(args.rounds):
        student, reference = tools.time_paired(plan, reference_plan, work, tuple(copies[lab.folder] for lab in labs),
                                               900.0, 20.0, work / "expected.txt")
        if student.check is None or reference.check is None:
            print(f"paired run {k + 1}: failed: {student.problem or reference.problem} "
                  f"{student.process.stderr.strip()[-300:]}")
            continue
        trusted = {(i.lab, i.type, i.n): i for i in reference.check.items if i.verified and i.samples}
        line = []
        for item in student.check.items:
            cell = (item.lab, item.type, item.n)
            ratio = paired_ratio(item, trusted[cell]) if item.verified and cell in trusted else None
            if ratio is not None:
                found.setdefault(cell, []).append(ratio)
                if calls is not None:   # each run's call-by-call ratios, for pooled_ratios
                    calls.setdefault(cell, []).append(call_ratios(item, trusted[cell]))
                for k, cells in (first or {}).items():
                    cells.setdefault(cell, []).append(first_calls_ratio(item, trusted[cell], k))
                line.append(f"{item.lab[:2]}{item.type[0]}{item.n}={item.median_us:.3f}/{trusted[cell].median_us:.3f}"
                            f" (call by call {ratio:.4f})")
            elif item.problem or student.check.clock_error:
                line.append(f"{item.lab[:2]}{item.type[0]}{item.n}: {student.check.clock_error or item.problem}")
        print(f"paired   {' '.join(line)}", flush=True)
    return found


def first_calls_ratio(student, reference, calls: int) -> float | None:
    """A paired run's ratio (benchmark.paired_ratio) over its first `calls` timed calls."""
    return paired_ratio(dataclasses.replace(student, calls_us=student.calls_us[:calls]),
                        dataclasses.replace(reference, calls_us=reference.calls_us[:calls]))


def measure(tools, manifest, labs, args, work: Path, sandboxed: bool, copies) -> list[Run]:
    """Trusted, student, trusted, ... : 2 x rounds + 1 runs, host labs and device labs in runs of
    their own (a grading times them apart: the host part without the GPU)."""
    if not labs:
        return []
    types = [t.strip() for t in args.types.split(",") if t.strip()]
    runs = []
    for k in range(2 * args.rounds + 1):
        side = TRUSTED if k % 2 == 0 else STUDENT
        run = Run(side)
        for host in (True, False):
            part = [lab for lab in labs if lab.host == host]
            if not part:
                continue
            items = _items(part, types, sizes_of(args, host),
                           lambda lab: copies[lab.folder] if side == STUDENT else manifest.reference_module(lab))
            plan = tools.timing_plan(7, items, samples_of(args, host), args.warmup, 20.0, **budget_of(args, host))
            timed = tools.time(plan, work, side == STUDENT and sandboxed, tuple(copies[lab.folder] for lab in part),
                               not host, 900.0, 20.0, work / "expected.txt")
            if timed.check is None:
                print(f"{side}: the run failed: {timed.problem} {timed.process.stderr.strip()[-300:]}")
                continue
            for item in timed.check.items:
                if item.verified and item.samples:
                    run.medians[(item.lab, item.type, item.n)] = item.median_us
        print(f"{side:8s} " + " ".join(f"{lab[:2]}{t[0]}{n}={us:.3f}" for (lab, t, n), us in sorted(run.medians.items())),
              flush=True)
        runs.append(run)
    return runs


if __name__ == "__main__":
    sys.exit(main())
