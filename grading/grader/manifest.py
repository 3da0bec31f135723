"""The build the grader works against: <build>/reduction_labs.json, and building it when missing.

reduction_finish_labs() (common/cmake/ReductionLabs.cmake) writes the manifest: the labs in course
order, their module names, the nvcc flags that build one lab file into a module, and where the
reference modules are. The grader compiles student files with exactly those flags.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST_NAME = "reduction_labs.json"
HOST_SUFFIXES = (".cpp", ".cc", ".cxx")  # a lab written for the host (lab 01); GPU labs are .cu
# Where a student build finds the compiled references. Never "build the solutions into it": that
# makes a student's tree the instructor build (its sanitize tests then check the references, and
# the instructor tests join it). The benchmark says the same (common/bench/reference_note.cpp).
WHERE_THE_REFERENCES_ARE = (
    "The student release's student preset takes the references from its reference/; in the course repository, "
    "build the solutions preset once (cmake --preset solutions && cmake --build --preset solutions) and the "
    "student preset takes them from build/solutions/solutions.")


class GraderError(Exception):
    """A problem with the grader's inputs (not a student's): reported, exit status 2."""


@dataclass(frozen=True)
class Lab:
    folder: str      # "02_atomic"
    file: str        # "atomic.cu"
    module: str      # "lab02_atomic"

    @property
    def number(self) -> int:
        return int(self.folder[:2])

    @property
    def name(self) -> str:
        return self.folder[3:]

    @property
    def host(self) -> bool:
        """Runs on the CPU (lab 01): graded normally on a machine without a GPU."""
        return self.file.endswith(HOST_SUFFIXES)

    @property
    def module_file(self) -> str:
        return self.module + ".so"


@dataclass
class Manifest:
    source_dir: Path
    binary_dir: Path
    reference_dir: Path | None
    nvcc: str
    module_flags: list[str]
    include_dirs: list[str]
    labs: list[Lab] = field(default_factory=list)

    # The grader's programs (grading/runner): untrusted runner and timing worker, trusted checker.
    @property
    def observer(self) -> Path:
        return self.binary_dir / "grading" / "runner" / "reduction_lab_observe"

    @property
    def time_worker(self) -> Path:
        return self.binary_dir / "grading" / "runner" / "reduction_time_worker"

    @property
    def student_worker(self) -> Path:  # the timing worker without CUB, for a student's sandboxed run
        return self.binary_dir / "grading" / "runner" / "reduction_student_worker"

    @property
    def checker(self) -> Path:
        return self.binary_dir / "grading" / "runner" / "reduction_lab_check"

    @property
    def timekeeper(self) -> Path:  # the trusted clock that starts every timing worker (timekeeper_main.cpp)
        return self.binary_dir / "grading" / "runner" / "reduction_timekeeper"

    def reference_module(self, lab: Lab) -> Path | None:
        return self.reference_dir / lab.module_file if self.reference_dir else None

    def select(self, wanted: list[str] | None) -> list[Lab]:
        """Labs named by number ("02", "5") or folder ("05_sequential"); all when `wanted` is empty."""
        if not wanted:
            return list(self.labs)
        chosen = []
        for item in wanted:
            item = item.strip()
            matches = [lab for lab in self.labs
                       if item == lab.folder or (item.isdigit() and int(item) == lab.number)]
            if not matches:
                known = ", ".join(lab.folder for lab in self.labs)
                raise GraderError(f"--labs: no lab '{item}' in this build (labs: {known})")
            chosen += [lab for lab in matches if lab not in chosen]
        return [lab for lab in self.labs if lab in chosen]


def load_manifest(build_dir: Path) -> Manifest:
    path = Path(build_dir) / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        labs = [Lab(entry["folder"], entry["file"], entry["module"]) for entry in data["labs"]]
        for lab in labs:
            if not re.fullmatch(r"\d\d_[a-z0-9_]+", lab.folder):
                raise ValueError(f"bad lab folder '{lab.folder}'")
        return Manifest(
            source_dir=Path(data["source_dir"]),
            binary_dir=Path(data["binary_dir"]),
            reference_dir=Path(data["reference_dir"]) if data.get("reference_dir") else None,
            nvcc=data["nvcc"],
            module_flags=list(data["module_flags"]),
            include_dirs=list(data["include_dirs"]),
            labs=labs,
        )
    except FileNotFoundError:
        raise GraderError(f"{path}: not found (configure the build first)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise GraderError(f"{path}: unreadable manifest ({exc})") from None


def _run(command: list[str], log) -> None:
    log("$ " + " ".join(command))
    completed = subprocess.run(command, stdout=sys.stderr, stderr=sys.stderr)
    if completed.returncode != 0:
        raise GraderError(f"'{' '.join(command)}' failed with status {completed.returncode}")


def configure_command(repo: Path, build_dir: Path) -> list[str]:
    """CMake configure line for a build the grader can use: references from solutions/ when the
    repository has them (the course repository), else the prebuilt reference/ (the student release)."""
    command = ["cmake", "-S", str(repo), "-B", str(build_dir)]
    if shutil.which("ninja"):
        command += ["-G", "Ninja"]
    command.append("-DCMAKE_BUILD_TYPE=Release")
    if (repo / "solutions").is_dir():
        command.append("-DREDUCTION_BUILD_SOLUTIONS=ON")
    else:
        command.append("-DREDUCTION_BUILD_SOLUTIONS=OFF")
        if (repo / "reference").is_dir():
            command.append(f"-DREDUCTION_REFERENCE_DIR={(repo / 'reference').resolve()}")
    return command


def ensure_build(repo: Path, build_dir: Path, log) -> Manifest:
    """Configures and builds `build_dir` once when it has no manifest. Afterwards it only brings the
    pieces the grader uses up to date (runner, timing worker, checker, reference modules): a no-op
    when nothing changed, and CMake re-runs itself when a lab was added."""
    build_dir = Path(build_dir)
    if not (build_dir / MANIFEST_NAME).is_file():
        log(f"{build_dir}: no {MANIFEST_NAME}; configuring and building it once")
        _run(configure_command(repo, build_dir), log)
        _run(["cmake", "--build", str(build_dir)], log)
    manifest = load_manifest(build_dir)
    targets = ["reduction_lab_observe", "reduction_time_worker", "reduction_student_worker", "reduction_lab_check",
               "reduction_timekeeper"]
    if manifest.reference_dir == manifest.binary_dir / "solutions":
        targets += [f"{lab.module}_solution" for lab in manifest.labs]
    _run(["cmake", "--build", str(build_dir), "--target", *targets], log)
    manifest = load_manifest(build_dir)  # CMake may have rewritten it (a lab added)
    check_programs(manifest)
    return manifest


def check_programs(manifest: Manifest) -> None:
    """The grader's programs and the reference modules (the checker's source of truth) exist."""
    for program in (manifest.observer, manifest.time_worker, manifest.student_worker, manifest.checker,
                    manifest.timekeeper):
        if not program.is_file():
            raise GraderError(f"{program}: missing (build the grader's programs first)")
    for lab in manifest.labs:
        reference = manifest.reference_module(lab)
        if reference is None or not reference.is_file():
            raise GraderError(f"{reference or lab.module_file}: no reference module for {lab.folder} (the checker takes "
                              f"float tolerances and lab identity from it). {WHERE_THE_REFERENCES_ARE}")
