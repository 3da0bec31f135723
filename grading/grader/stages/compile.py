"""Compile: each lab file into its module, in the sandbox, one nvcc per lab, in parallel (--jobs);
the module's digest kept, so that no later stage runs a module the student changed."""

from __future__ import annotations

from pathlib import Path

from ..judge.compile_view import rule_sentence
from ..judge.flags import add_flag
from ..judge.libraries import refusal_detail, refused_libraries
from ..judge.resources import COMPILE, TIMED_OUT, resource_failure
from ..judge.verdicts import COMPILE_ERROR, COMPILE_TIMED_OUT, MISSING
from ..outputs import events as ev
from ..outputs.records import LabRecord, StudentRecord
from ..report.diagnostics import first_error, public_folders, student_diagnostics
from ..sandbox.process import ProcessResult
from .base import Stage, pool
from .toolchain import CompileRun, sha256_of


def clean(run: CompileRun, module: Path) -> bool:
    """A compile another student's identical file may reuse (compile_cache.py): it built the module,
    refused nothing and said nothing (its words name the file it compiled)."""
    result = run.process
    return (result.returncode == 0 and not result.timed_out and not result.output_limit and module.is_file()
            and not (run.refused or run.unlisted or run.outside or run.cached)
            and not result.stdout.strip() and not result.stderr.strip())


class Compile(Stage):
    name = "compile"

    def run(self, who: tuple, record: StudentRecord, work: Path) -> None:
        todo = [entry for entry in record.labs.values() if entry.verdict is None]
        timeout = self.g.policy.compile.timeout_s
        (work / "modules").mkdir(parents=True, exist_ok=True)
        public = public_folders(self.g.manifest.nvcc, self.g.manifest.include_dirs)

        cache = self.g.compile_cache   # None: every lab file is compiled (compile_cache.py says when)

        def build(entry: LabRecord):
            lab = self.lab(entry.folder)
            module = work / "modules" / lab.module_file
            refuse = refused_libraries(self.g.policy.compile, lab.number)
            if cache is None:
                return entry, module, compiled(entry, lab, Path(entry.source), module, refuse), Path(entry.source)
            key = cache.key(lab.folder, Path(entry.source), tuple(library.name for library in refuse))
            source = cache.source(key, Path(entry.source))   # a path that names no student: the module may be another's
            with cache.building(key):   # a classmate compiling the same file now: wait for its module
                if cache.fetch(key, module):
                    return entry, module, CompileRun(ProcessResult(0, command=["nvcc"]), cached=True), source
                result = compiled(entry, lab, source, module, refuse)
                if clean(result, module):
                    cache.keep(key, module)
            return entry, module, result, source

        def compiled(entry: LabRecord, lab, source: Path, module: Path, refuse) -> CompileRun:
            def compile_():
                return self.g.tools.compile(record.student, lab, source, module, timeout, refuse)

            # The cores, shared by every student in flight (a slot first, then the gate: gpu_gate.py).
            with self.g.compile_slots, self.g.cpu_gate.shared(), self.g.neighbours.run(record.student, False, self.name) as met:
                result = compile_()
            if result.process.returncode != 0 or not module.is_file():
                timed_out = TIMED_OUT if result.process.timed_out else None
                failure = resource_failure(COMPILE, result.process) or timed_out
                result = self.g.runs.again_alone(who, record, entry, "compile", failure, met, False, compile_,
                                                 lambda again: "compiles" if again.process.returncode == 0 and module.is_file()
                                                 else COMPILE_ERROR) or result
            return result

        with pool(self.g.options.jobs) as runs:
            for entry, module, run, source in runs.map(build, todo):
                self._compiled(record, entry, module, run, public, timeout, source)
                if entry.verdict == COMPILE_ERROR:
                    self.g.emit(ev.LabVerdict(*who, lab=entry.folder, verdict=COMPILE_ERROR))
        for entry in record.labs.values():
            if entry.verdict == MISSING:
                self.g.emit(ev.LabVerdict(*who, lab=entry.folder, verdict=MISSING))

    def _compiled(self, record: StudentRecord, entry: LabRecord, module: Path, run: CompileRun,
                  public: tuple[Path, ...], timeout: float, source: Path) -> None:
        """A lab's compile into its record: what it said, its verdict and why, its module's digest."""
        result = run.process
        lab = self.lab(entry.folder)
        shown = f"labs/{entry.folder}/{entry.file}"
        output = student_diagnostics(result.stdout + "\n" + result.stderr, str(source), shown, public)
        entry.compile.cached, entry.compile.source = run.cached, str(source)
        rule = rule_sentence(run.outside) if run.outside else ""
        if rule:   # the assembler's own words are located in its temporary file, which a report never quotes
            output = f"{output}\n{rule}".strip()
            add_flag(record.flags, "outside_view", entry.folder, rule)
        ok = result.returncode == 0 and not result.timed_out and module.is_file()
        entry.compile.ok, entry.compile.seconds = ok, round(result.seconds, 2)
        entry.compile.command, entry.compile.output = ["nvcc", *self.g.manifest.module_flags, shown], output
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
            refused = refused_libraries(self.g.policy.compile, lab.number)
            entry.detail = refusal_detail(lab.number, list(run.refused), refused)
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
