"""The local launcher: a GradingJob graded in this process (a class, a shard, one worker of a --gpus
run, or a student's --self check), or the merge of OUT's records; its console text is rendered from
the grader's events (events.py)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..contract import ExitStatus
from ..manifest import GraderError
from ..outputs import events as ev
from ..outputs.records import unsandboxed
from ..outputs.student_names import shown
from ..paths import GRADING_DIR, REPO
from ..policy import Policy
from ..report import class_outputs
from ..report.reports import summary_table
from ..sandbox.bubblewrap import Limits, Sandbox
from ..sandbox.cpu_share import CpuShare
from ..sandbox.toolkit import toolkit_of
from ..stages.engine import NO_GPU_MESSAGE, PUBLIC_SEED, Grader, Options
from ..stages.toolchain import Toolchain
from .class_end import merge_class, not_graded_summary, print_self_details, self_check_status
from .class_folder import ClassFolder, refused_events, scan, selected, write_refused
from .job import GradingJob
from .launch import ClassOutcome

SELF_NAME = "self"


@dataclass
class Selection:
    """Who a job grades now, and the class they belong to (None for a self-check)."""
    students: list[tuple[str, Path]]
    roster: list[str] | None = None
    folder: ClassFolder | None = None


def select(job: GradingJob, emit: ev.Sink) -> Selection:
    """The job's students; for a class, every refused folder said (once: not by a --gpus worker)
    and listed in OUT for the report."""
    if job.self_check:
        if not Path(job.self_dir).is_dir():
            raise GraderError(f"{job.self_dir}: not a folder")
        return Selection([(SELF_NAME, Path(job.self_dir))])
    folder = scan(Path(job.submissions))
    if job.gpu is None:
        for event in refused_events(folder):
            emit(event)
    if not folder.students:
        raise GraderError(f"{shown(job.submissions)}: no student folders")
    students = selected(folder, job.students)
    roster = [name for name, _ in folder.students]   # the class files list the whole class
    write_refused(Path(job.out), folder)
    if job.shard:
        index, count = job.shard
        students = [s for s in students if roster.index(s[0]) % count == index]
    return Selection(students, roster, folder)


def skeleton_dirs(manifest) -> list[Path]:
    """Official skeletons: the release keeps pristine copies in grading/skeletons (a student's own
    labs/ holds their edits); the course repository's labs/ is pristine."""
    dirs = [GRADING_DIR / "skeletons", manifest.source_dir / "labs"]
    return [d for d in dirs if d.is_dir()]


def options_of(job: GradingJob, manifest, policy: Policy) -> Options:
    in_flight = job.in_flight if job.in_flight is not None else policy.pipeline.students
    return Options(labs=manifest.select(job.labs), jobs=max(1, job.jobs or os.cpu_count() or 2), sanitizer=job.sanitizer,
                   bench=job.bench, force=job.force or job.self_check, large=job.large, self_check=job.self_check,
                   in_flight=1 if job.self_check else max(1, in_flight),
                   seed=job.seed if job.seed is not None else (PUBLIC_SEED if job.self_check else None),
                   run_tag=job.run_tag, class_outputs=job.gpu is None, run=job.run)


def real_toolchain(job: GradingJob, manifest, policy: Policy) -> Toolchain:
    """Nothing the grader owns is visible to student code: the repository (solutions/), the build
    tree (reference modules), the outputs and the other submissions."""
    hidden = [REPO, manifest.source_dir, manifest.binary_dir, job.out, manifest.reference_dir or REPO,
              job.submissions or job.self_dir]
    limits = policy.sandbox
    large = job.large or policy.tests.large
    # The CUDA toolkit's libraries are looked for too, wherever it is (outside /usr and /opt, say).
    toolkit = [toolkit_of(manifest.nvcc).root] if manifest.nvcc else []
    return Toolchain(manifest, Sandbox.detect((Path(p).resolve() for p in hidden), toolkit),
                     Limits(file_bytes=limits.output_mib << 20, processes=limits.processes,
                            memory_bytes=(limits.large_memory_gib if large else limits.memory_gib) << 30),
                     allow_cccl=policy.compile.allow_cccl, cpu_share=CpuShare.detect(),
                     cuda_connections=policy.tests.cuda_connections)


def grade_here(job: GradingJob, manifest, policy: Policy, chosen: Selection, emit: ev.Sink,
               toolchain=None) -> ExitStatus:
    out = Path(job.out)
    if not chosen.students:
        print(f"--shard {job.shard[0]}/{job.shard[1]}: no student of this class falls in it; nothing to grade")
        return ExitStatus.OK
    toolchain = toolchain or real_toolchain(job, manifest, policy)
    if job.require_sandbox and unsandboxed(toolchain.sandbox_status()):
        print(f"error: --require-sandbox: {toolchain.sandbox_status()}", file=sys.stderr)
        return ExitStatus.NO_SANDBOX
    if hasattr(toolchain, "hidden_libraries"):  # the real one: find every CUB and Thrust before the first compile
        try:                                      # (which also checks that nvcc runs in the compile's view)
            toolchain.hidden_libraries()
        except RuntimeError as exc:
            raise GraderError(f"cannot prepare the students' compiles (CUB and Thrust hidden, in the compile's "
                              f"view): {exc}") from exc
    options = options_of(job, manifest, policy)
    grader = Grader(manifest, policy, toolchain, out, options, skeleton_dirs=skeleton_dirs(manifest), events=emit)
    result = grader.grade_class(chosen.students, chosen.roster)
    graded = [r for r in result.records if r.student in {name for name, _ in chosen.students}]
    print()
    print(summary_table(graded, options.labs))
    if result.no_gpu:
        print(f"\n{NO_GPU_MESSAGE}: GPU labs that compiled are NOT_RUN (blank in the gradebook, not 0) and "
              "totals are left blank; lab 01, compile errors and missing labs are graded.")
    if result.sanitizer_missing:
        print(f"\nsanitizer not available ({result.sanitizer_note or 'compute-sanitizer is not on PATH'}): "
              "no sanitizer checks, no penalty.")
    if result.skipped:
        print(f"\n{len(result.skipped)} student(s) already graded were skipped (--force to regrade).")
    print(f"\ninputs: seed {result.seed} (replay a failure with --seed {result.seed}); student code: {result.sandbox}")
    print(f"reports: {out}/gradebook.csv, timings.csv, junit.xml, students/, gradescope/")
    if options.class_outputs:
        names = chosen.roster or [name for name, _ in chosen.students]
        print(class_outputs.finish(out, manifest.labs, names, result.records, plots=job.plots))
    if job.self_check and graded:
        print_self_details(graded[0])
        return self_check_status(graded[0], NO_GPU_MESSAGE)
    ends_class = not (job.shard or job.gpu is not None)   # a shard's or a worker's merge says it and sets the status
    folder = chosen.folder
    if folder is not None and folder.not_graded and job.gpu is None:
        print(not_graded_summary(out, folder, status=ends_class))
    return ExitStatus.REFUSED if ends_class and folder is not None and folder.refused else ExitStatus.OK


class LocalLauncher:
    """Grades a job here. `emit`: where the grader's events go (the console, or a --gpus worker's
    event channel); `toolchain`: tests pass a simulated one."""

    def __init__(self, manifest, policy: Policy, emit: ev.Sink, toolchain=None):
        self.manifest, self.policy, self.emit, self.toolchain = manifest, policy, emit, toolchain

    def run(self, job: GradingJob) -> ClassOutcome:
        chosen = select(job, self.emit)
        if job.merge:
            return ClassOutcome(merge_class(Path(job.out), self.manifest, chosen.folder,
                                            self.manifest.select(job.labs), self.policy, plots=job.plots))
        return ClassOutcome(grade_here(job, self.manifest, self.policy, chosen, self.emit, self.toolchain))
