#!/usr/bin/env python3
"""Where one student's GPU seconds go, with nothing else on the machine: the grader's own test and
sanitizer runs (toolchain.py, the same commands and channels as a grading's, without the sandbox)
over the references of every GPU lab, timed on the wall:

  tests     the labs' test plans in one runner (a grading's shared run); one runner a lab, one
            after another; AT_ONCE runners of every lab at once (that many students' test stage)
  sanitize  each tool over every lab's small plan; each tool over the first lab alone (what a
            tool's start costs); the tools at once; AT_ONCE students' tools at once

The references stand in for a student. What a class adds on top (the sandbox, the other students,
the runs again alone, the timing) is the gap between these seconds and bench_throughput.py's
seconds per student. Every run must come back right (each lab's part all right, each tool's log
clean): a line that says otherwise is not a measurement.

    python3 grading/tools/student_gpu_cost.py [--build-dir build/solutions] [--at-once N] [--policy FILE]

Needs a built solutions preset and a GPU (the sanitizer lines also compute-sanitizer). Exit 0 when
it measured, 1 when a run did not come back right, 2 when it could not measure.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # grading/

from grader.judge.sanitizer_findings import CLEAN, sanitizer_finding  # noqa: E402
from grader.manifest import GraderError, Lab, load_manifest  # noqa: E402
from grader.policy import Policy  # noqa: E402
from grader.stages.toolchain import Toolchain  # noqa: E402

GRADING = Path(__file__).resolve().parents[1]
SEED = 5   # any seed: the runs are the references'
STUDENT = ""   # no student: the references


@dataclass
class Line:
    what: str
    seconds: float
    right: bool   # every run of it came back right

    def text(self) -> str:
        return f"{self.what:<58} {self.seconds:7.2f} s" + ("" if self.right else "  NOT RIGHT: not a measurement")


def timed(what: str, work) -> Line:
    """`work()` -> whether it came back right, timed on the wall."""
    start = time.monotonic()
    right = work()
    return Line(what, time.monotonic() - start, right)


def at_once(works: list) -> bool:
    """Every one of `works` at the same time: whether each came back right."""
    with ThreadPoolExecutor(len(works)) as runs:
        return all(list(runs.map(lambda work: work(), works)))


def measure(tools, manifest, labs: list[Lab], policy: Policy, work: Path, count: int) -> list[Line]:
    tests, sanitizer = policy.tests, policy.sanitizer
    cache = work / "expected.txt"
    full, small = {}, {}
    for lab in labs:
        full[lab.folder], small[lab.folder] = work / f"{lab.folder}.plan", work / f"{lab.folder}.small.plan"
        tools.make_plan(lab, SEED, full[lab.folder])
        tools.expect(full[lab.folder], cache)
        tools.make_plan(lab, SEED, small[lab.folder], cases=list(sanitizer.cases))
    module = {lab.folder: manifest.reference_module(lab) for lab in labs}
    shared = [(lab, module[lab.folder], full[lab.folder]) for lab in labs]
    sanitized = [(lab, module[lab.folder], small[lab.folder]) for lab in labs]

    def all_labs() -> bool:
        process, checks = tools.run_tests_labs(STUDENT, shared, cache, tests.timeout_s * len(labs),
                                               min(tests.call_timeout_s, tests.shared_call_timeout_s))
        return process.returncode == 0 and all(check is not None and check.all_correct for check in checks.values())

    def one_lab(lab: Lab) -> bool:
        _, check = tools.run_tests(STUDENT, lab, module[lab.folder], full[lab.folder], cache, tests.timeout_s,
                                   tests.call_timeout_s)
        return check is not None and check.all_correct

    def tool_over(tool: str, group: list) -> bool:
        result = tools.run_sanitizer_labs(STUDENT, group, tool, sanitizer.timeout_s * len(group),
                                          sanitizer.call_timeout_s)
        return sanitizer_finding(tool, result).status == CLEAN

    def every_tool() -> bool:   # one student's tools at once
        return at_once([lambda tool=tool: tool_over(tool, sanitized) for tool in sanitizer.tools])

    n = len(labs)
    lines = [timed(f"tests: {n} labs in one runner", all_labs),
             timed(f"tests: {n} labs, a runner each, one after another", lambda: all([one_lab(lab) for lab in labs])),
             timed(f"tests: {count} runners of the {n} labs at once", lambda: at_once([all_labs] * count))]
    if not tools.sanitizer_available():
        return lines
    for tool in sanitizer.tools:
        lines.append(timed(f"sanitize: {tool} over the {n} labs", lambda tool=tool: tool_over(tool, sanitized)))
        lines.append(timed(f"sanitize: {tool} over {labs[0].folder} alone",
                           lambda tool=tool: tool_over(tool, sanitized[:1])))
    lines.append(timed(f"sanitize: the {len(sanitizer.tools)} tools at once over the {n} labs", every_tool))
    lines.append(timed(f"sanitize: {count} students' tools at once ({count * len(sanitizer.tools)} runs)",
                       lambda: at_once([every_tool] * count)))
    return lines


def main(argv: list[str] | None = None, tools=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", type=Path, default=Path("build/solutions"))
    parser.add_argument("--at-once", type=int, help="students at once (default: the policy's [pipeline] students)")
    parser.add_argument("--policy", type=Path, default=GRADING / "policy.toml")
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest(args.build_dir)
        policy = Policy.load(args.policy)
    except GraderError as exc:
        print(f"student_gpu_cost: {exc}", file=sys.stderr)
        return 2
    labs = [lab for lab in manifest.labs if not lab.host and manifest.reference_module(lab).is_file()]
    if not labs:
        print(f"student_gpu_cost: no reference module of a GPU lab in {manifest.reference_dir} "
              "(build the solutions preset)", file=sys.stderr)
        return 2
    tools = tools or Toolchain(manifest)
    if not tools.gpu_available():
        print("student_gpu_cost: no GPU on this machine: nothing to measure", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="student-gpu-cost-") as work:
        count = args.at_once if args.at_once is not None else policy.pipeline.students
        lines = measure(tools, manifest, labs, policy, Path(work), max(1, count))
    for line in lines:
        print(line.text())
    return 0 if all(line.right for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
