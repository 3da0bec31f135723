"""The grading throughput benchmark's summary: its runs, the targets it judges (issue 26) and the
table it prints and writes (summary.json, summary.md). bench_throughput.py measures; this reports."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tools.stage_breakdown import Breakdown, lines as breakdown_lines

TARGET_SECONDS_PER_STUDENT = 8.0      # one H200, averaged over the class
TARGET_SPEEDUP_TWO_GPUS = 1.8
TARGET_RATIO_DEVIATION = 0.03         # |ratio - solo ratio| / solo ratio, every lab


@dataclass
class Run:
    name: str                # "one-gpu", "multi", "solo"
    out: str
    students: list[str]
    command: list[str]
    wall_s: float = 0.0
    returncode: int | None = None


@dataclass
class Mismatch:
    run: str
    student: str
    what: str


@dataclass
class Target:
    name: str
    status: str              # PASS, FAIL or "not measured (...)"
    value: str = ""


@dataclass
class Summary:
    date: str
    host: str
    gpus: list[str]
    gpu_name: str
    class_seed: int
    input_seed: int
    students: int
    labs: list[str]
    sanitizer: bool
    runs: list[Run] = field(default_factory=list)
    seconds_per_student: dict[str, float] = field(default_factory=dict)
    speedup: float | None = None
    expected_mismatches: list[Mismatch] = field(default_factory=list)
    solo_mismatches: list[Mismatch] = field(default_factory=list)
    performance_differences: list[Mismatch] = field(default_factory=list)
    ratio_deviation: dict[str, float] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    breakdowns: dict[str, list[Breakdown]] = field(default_factory=dict)   # per class run, one per GPU (its ledgers)
    complete: bool = True    # False: written after a run, before the comparisons (a cut-off benchmark keeps it)


def judge(summary: Summary, runs: dict[str, Run], no_gpu: bool, multi_gpus: int) -> list[Target]:
    targets = [Target("every verdict and point as expected_verdicts.json says",
                      "FAIL" if summary.expected_mismatches else "PASS", f"{len(summary.expected_mismatches)} mismatches"),
               Target("same verdicts and correctness points as the students graded alone",
                      "FAIL" if summary.solo_mismatches else "PASS", f"{len(summary.solo_mismatches)} mismatches")]
    why = "not measured (no GPU: every GPU lab NOT_RUN)" if no_gpu else ""
    per_student = summary.seconds_per_student.get("one-gpu")
    targets.append(Target(f"one GPU: at most {TARGET_SECONDS_PER_STUDENT:g} s per full student (issue: one H200)",
                          why or ("PASS" if per_student <= TARGET_SECONDS_PER_STUDENT else "FAIL"),
                          f"{per_student:.2f} s per student on {summary.gpu_name}"))
    if "multi" not in runs or summary.speedup is None:
        status = why or "not measured (one GPU on this host)"
    elif multi_gpus != 2:
        status = f"not measured (the target is for two GPUs; {multi_gpus} ran: use --multi 0,1)"
    else:
        status = "PASS" if summary.speedup >= TARGET_SPEEDUP_TWO_GPUS else "FAIL"
    targets.append(Target(f"two GPUs: at least {TARGET_SPEEDUP_TWO_GPUS:g}x the one-GPU throughput", status,
                          f"{summary.speedup:.2f}x" if summary.speedup else ""))
    worst = max(summary.ratio_deviation.values(), default=None)
    targets.append(Target(f"every ratio within {TARGET_RATIO_DEVIATION:.0%} of the solo run's",
                          why or ("not measured (no ratio in the solo runs)" if worst is None else
                                  "PASS" if worst <= TARGET_RATIO_DEVIATION else "FAIL"),
                          "" if worst is None else f"largest {worst:.1%}"))
    return targets


def report(summary: Summary) -> list[str]:
    """The table, as plain text lines (the markdown summary is the same lines in a code block)."""
    lines = [f"grading throughput: {summary.students} synthetic students (class seed {summary.class_seed}, input seed "
             f"{summary.input_seed}), labs {', '.join(lab[:2] for lab in summary.labs)}, "
             f"sanitizer {'on' if summary.sanitizer else 'off'}",
             f"machine: {summary.host}; GPUs: {', '.join(summary.gpus) or 'none'}; {summary.date}",
             *([] if summary.complete else ["PARTIAL: the runs done so far; the comparisons and targets come at the end"]),
             "",
             f"{'run':<16}{'students':>9}{'wall s':>10}{'s/student':>11}{'exit':>6}"]
    for run in summary.runs:
        label = run.name if run.name != "solo" else f"solo {run.students[0]}"
        lines.append(f"{label:<16}{len(run.students):>9}{run.wall_s:>10.1f}{run.wall_s / len(run.students):>11.2f}"
                     f"{run.returncode:>6}")
    if summary.speedup is not None:
        lines.append(f"\nspeedup of multi over one-gpu: {summary.speedup:.2f}x")
    lines.append(f"\nmismatches against expected_verdicts.json: {len(summary.expected_mismatches)}; against the solo "
                 f"runs: {len(summary.solo_mismatches)} (performance points that differ: "
                 f"{len(summary.performance_differences)})")
    for mismatch in (summary.expected_mismatches + summary.solo_mismatches + summary.performance_differences)[:40]:
        lines.append(f"  {mismatch.run} {mismatch.student}: {mismatch.what}")
    if summary.ratio_deviation:
        lines.append("max |ratio - solo ratio| / solo ratio per lab: " +
                     ", ".join(f"{lab[:2]} {value:.1%}" for lab, value in sorted(summary.ratio_deviation.items())))
    lines.append("")
    lines += [f"{target.status.split(' ')[0] if target.status in ('PASS', 'FAIL') else 'TARGET'} "
              f"{target.name}: {target.status if target.status not in ('PASS', 'FAIL') else target.value}"
              .rstrip(": ") for target in summary.targets]
    lines += [f"note: {note}" for note in summary.notes]
    for run, found in summary.breakdowns.items():
        lines.append(f"\nwhere the time went, {run} (stage_breakdown.py):")
        for result in found:
            lines += breakdown_lines(result)
    return lines


def write_summary(out: Path, summary: Summary) -> None:
    (out / "summary.json").write_text(json.dumps(asdict(summary), indent=2) + "\n", encoding="utf-8")
    (out / "summary.md").write_text("# Grading throughput benchmark\n\n```\n" + "\n".join(report(summary)) +
                                    "\n```\n", encoding="utf-8")
