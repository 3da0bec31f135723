"""The student distribution, and the check that no reference solution leaks into it.

    python3 grading/release.py --build-dir BUILD --out DIR [--no-modules] [--force]

DIR gets: labs/ (skeletons and lab texts, as committed in git: a working tree's solved lab never
ships), common/, grading/ (the test sources and their CMake, grade.py and the grader for --self,
pristine copies of the skeletons in grading/skeletons/, the student tools), plots/, docs/,
tools/ (the prerequisite check and the test command), CMakeLists.txt, a CMakePresets.json with
only the student presets (REDUCTION_REFERENCE_DIR = the release's reference/), the students'
README.md (from docs/student/README.md), and reference/*.so: the reference solutions as compiled
modules only, for the benchmark's comparison. No solutions/, no examples/, no grader tests, no
reference source, no instructor documents (INSTRUCTOR_DOCS).

release_leaks(DIR) fails the release when any file holds a solution's student region (compared
with whitespace collapsed) or several of its distinctive lines, or when a path names solutions/
or examples/.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.judge.submission import RegionError, split_regions
from grader.manifest import GraderError, load_manifest

REPO = Path(__file__).resolve().parent.parent.parent
TOP_LEVEL = ["common", "plots", "docs", "tools", "CMakeLists.txt"]
STUDENT_README = "docs/student/README.md"   # the release's README.md: the repository's is the instructors'
# Instructor-only parts of the top level: the template (it becomes README.md) and the main job.
TOP_LEVEL_EXCLUDE = ("docs/student", "tools/grade-example.sh")
# Instructor documents: grading a class, its security, its report and its tests, Slurm, the graded
# example class and its figures, writing a lab. They describe and link release.py, examples/ and
# solutions/, which the release leaves out (a link there would be broken); the student README
# covers grade.py --self.
INSTRUCTOR_DOCS = ("grading/README.md", "docs/grading-at-scale.md", "docs/grading-security.md", "docs/class-report.md",
                   "docs/grading-tests.md", "docs/slurm.md", "docs/results.md", "docs/LAB_AUTHORING.md", "docs/images")
# Instructor-only parts of grading/: the release builder (release.py, student_release/), the
# grader's own tests and the throughput benchmark (they need examples/), the test fixtures (full
# lab implementations, e.g. the deliberately racy lab 07, that give solutions away) and the host
# replays of the references' combine orders (the solutions' algorithms, restated).
# The device check is the instructors' one call on a GPU machine: it builds the solutions preset,
# which a release does not have.
RELEASE_EXCLUDE = ("grading/release.py", "grading/student_release", "grading/grader_tests",
                   "grading/tools/bench_throughput.py", "grading/tools/throughput_summary.py",
                   "grading/tests/fixtures", "grading/tests/solution_replays", "grading/skeletons",
                   "grading/device_check.sh")
SKIP_NAMES = {"__pycache__", ".pytest_cache", ".DS_Store"}
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp")
GRADER_CMAKE_MARKER = "# ---- grader (instructor only: not in the student release) ----"
FORBIDDEN_PARTS = ("solutions", "examples")
MIN_DISTINCTIVE_CHARS = 24


def _normalize(text: str) -> str:
    return " ".join(text.split())


def _norm_lines(text: str) -> set[str]:
    return {_normalize(line) for line in text.splitlines() if _normalize(line)}


@dataclass
class Fingerprint:
    source: str                      # "solutions/05_sequential/sequential.cu"
    region: str                      # whitespace-collapsed student region
    distinctive: list[str] = field(default_factory=list)

    @property
    def threshold(self) -> int:
        """Distinctive lines that make a leak: 3, or about half of them for a short region."""
        return max(1, min(3, (len(self.distinctive) + 1) // 2))


def committed_tree(repo: Path, folder: str) -> dict[str, bytes]:
    """`folder` as committed at HEAD ({path: content}), whatever the working tree holds."""
    try:
        archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", "HEAD", "--", folder],
                                 capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = exc.stderr.decode(errors="replace").strip() if isinstance(exc, subprocess.CalledProcessError) else exc
        raise GraderError(f"cannot read the committed {folder}/ from git in {repo} ({detail}): the release is "
                          "built from the committed skeletons, so run release.py in a git checkout") from None
    files = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if member.isfile():
                files[member.name] = tar.extractfile(member).read()
    return files


def solution_fingerprints(repo: Path = REPO) -> list[Fingerprint]:
    """What each solution file would leave in a leaked copy: its region and its distinctive lines
    (lines of at least 24 characters that no committed skeleton and no common/ header has)."""
    repo = Path(repo)
    public: set[str] = set()
    for name, content in committed_tree(repo, "labs").items():
        if name.endswith(SOURCE_SUFFIXES):
            public |= _norm_lines(content.decode("utf-8", errors="replace"))
    common = repo / "common"
    for path in common.rglob("*") if common.is_dir() else []:
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            public |= _norm_lines(path.read_text(encoding="utf-8", errors="replace"))
    prints = []
    solutions = repo / "solutions"
    for path in sorted(solutions.rglob("*")) if solutions.is_dir() else []:
        if not path.is_file() or path.suffix not in SOURCE_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            region = split_regions(text).region
        except RegionError:
            region = text  # a helper file without markers: all of it is reference code
        lines = [_normalize(line) for line in region.splitlines()]
        distinctive = sorted({line for line in lines if len(line) >= MIN_DISTINCTIVE_CHARS and line not in public})
        prints.append(Fingerprint(path.relative_to(repo).as_posix(), _normalize(region), distinctive))
    return prints


def _is_text(path: Path) -> bool:
    with open(path, "rb") as handle:
        return b"\0" not in handle.read(8192)


def release_leaks(release_dir: Path, repo: Path = REPO) -> list[str]:
    """Problems that make `release_dir` unfit to give to students; empty when it is clean."""
    release_dir = Path(release_dir)
    prints = [p for p in solution_fingerprints(repo) if p.region]
    problems = []
    for path in sorted(release_dir.rglob("*")):
        relative = path.relative_to(release_dir)
        if any(part in FORBIDDEN_PARTS for part in relative.parts):
            if path.is_file() or not any(path.iterdir()):
                problems.append(f"{relative.as_posix()}: a {'/'.join(p for p in relative.parts if p in FORBIDDEN_PARTS)}/ "
                                "path in the release")
            continue
        if not path.is_file() or not _is_text(path):
            continue  # the reference modules are binaries: no source text in them
        text = _normalize(path.read_text(encoding="utf-8", errors="replace"))
        for fingerprint in prints:
            if fingerprint.region and fingerprint.region in text:
                problems.append(f"{relative.as_posix()}: contains the student region of {fingerprint.source}")
                continue
            found = [line for line in fingerprint.distinctive if line in text]
            if found and len(found) >= fingerprint.threshold:
                # Named, never quoted: this message may reach a student (their own solved lab).
                problems.append(f"{relative.as_posix()}: contains {len(found)} distinctive line(s) of "
                                f"{fingerprint.source}'s student region")
    return problems


# ---------------------------------------------------------------------------------------------
# building the release


def student_presets(presets: dict, reference_dir: str = "${sourceDir}/reference") -> dict:
    """The student preset and what it needs, with the reference modules taken from the release."""
    configure = {p["name"]: p for p in presets.get("configurePresets", [])}
    if "student" not in configure:
        raise GraderError("CMakePresets.json has no 'student' configure preset")
    kept, todo = set(), ["student"]
    while todo:
        name = todo.pop()
        if name in kept or name not in configure:
            continue
        kept.add(name)
        inherits = configure[name].get("inherits", [])
        todo += [inherits] if isinstance(inherits, str) else list(inherits)
    result = {key: value for key, value in presets.items()
              if key not in ("configurePresets", "buildPresets", "testPresets", "workflowPresets", "packagePresets")}
    result["configurePresets"] = [json.loads(json.dumps(configure[name])) for name in configure if name in kept]
    for preset in result["configurePresets"]:
        if preset["name"] == "student":
            preset.setdefault("cacheVariables", {})["REDUCTION_REFERENCE_DIR"] = reference_dir
            preset["cacheVariables"]["REDUCTION_BUILD_SOLUTIONS"] = "OFF"

    def kept_family(kind: str) -> list[dict]:
        entries = presets.get(kind, [])
        by_name = {p["name"]: p for p in entries}
        chosen = [p for p in entries if not p.get("hidden") and p.get("configurePreset") in kept]
        needed = set()
        for preset in chosen:
            todo = [preset.get("inherits", [])]
            while todo:
                item = todo.pop()
                for name in [item] if isinstance(item, str) else item:
                    if name in by_name and name not in needed:
                        needed.add(name)
                        todo.append(by_name[name].get("inherits", []))
        return [p for p in entries if p in chosen or p["name"] in needed]

    for kind in ("buildPresets", "testPresets"):
        if kind in presets:
            result[kind] = kept_family(kind)
    if "workflowPresets" in presets:
        names = {p["name"] for kind in ("configurePresets", "buildPresets", "testPresets")
                 for p in result.get(kind, [])}
        result["workflowPresets"] = [w for w in presets["workflowPresets"]
                                     if all(step["name"] in names for step in w.get("steps", []))]
    return result


FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
MARKDOWN_LINK = re.compile(r"(!?\[[^\]\n]*\]\(\s*<?)([^)\s>#]+)")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def rebase_links(text: str, source: str, target: str) -> str:
    """A Markdown text moved from folder `source` to folder `target` (both relative to the tree):
    each relative link of its prose rewritten to lead where it led before. The students' README is
    written in docs/student/ (its links work in this repository) and becomes the release's top
    README.md."""
    def rebase(match: re.Match) -> str:
        link = match.group(2)
        if URL.match(link) or link.startswith("/"):
            return match.group(0)
        moved = os.path.relpath(os.path.normpath(os.path.join(source, link)), target or ".")
        return match.group(1) + Path(moved).as_posix()

    pieces, last = [], 0
    for fence in FENCE.finditer(text):  # links inside code blocks are code, not links
        pieces += [MARKDOWN_LINK.sub(rebase, text[last:fence.start()]), fence.group(0)]
        last = fence.end()
    return "".join(pieces + [MARKDOWN_LINK.sub(rebase, text[last:])])


def student_grading_cmake(text: str) -> str:
    """grading/CMakeLists.txt without the instructor-only grader block (its tests need examples/)."""
    if GRADER_CMAKE_MARKER in text:
        text = text.split(GRADER_CMAKE_MARKER, 1)[0].rstrip() + "\n"
    return text


def make_release(build_dir: Path | None, out: Path, with_modules: bool = True, repo: Path = REPO,
                 force: bool = False, log=print) -> list[str]:
    """The student distribution of `repo` in `out` (the module's docstring says what it holds), with
    the reference modules of `build_dir` unless not `with_modules`. Returns its files; `log` gets
    notes and warnings."""
    repo, out = Path(repo), Path(out)
    _make_empty_folder(out, force)
    labs = _write_committed_labs(repo, out, log)
    ignore = _ignore_instructor_only(repo)
    for name in TOP_LEVEL:
        source = repo / name
        if source.is_dir():
            shutil.copytree(source, out / name, ignore=ignore, dirs_exist_ok=True)
        elif source.is_file():
            shutil.copy2(source, out / name)
    readme = (repo / STUDENT_README).read_text(encoding="utf-8")
    (out / "README.md").write_text(rebase_links(readme, str(Path(STUDENT_README).parent), ""), encoding="utf-8")
    _write_student_grading(repo, out / "grading", labs, ignore, log)
    presets = json.loads((repo / "CMakePresets.json").read_text(encoding="utf-8"))
    (out / "CMakePresets.json").write_text(json.dumps(student_presets(presets), indent=2) + "\n", encoding="utf-8")
    (out / ".gitignore").write_text("build/\n", encoding="utf-8")

    for line in re.findall(r"add_subdirectory\(\s*([\w/]+)", (repo / "CMakeLists.txt").read_text(encoding="utf-8")):
        if not (out / line).is_dir():
            log(f"warning: CMakeLists.txt adds '{line}', which the release does not have")

    if with_modules:
        _copy_reference_modules(build_dir, out / "reference")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    log(f"{out}: {len(files)} files")
    return files


def _make_empty_folder(out: Path, force: bool) -> None:
    """`out`, made empty: an existing folder with files in it is replaced only with `force`."""
    if out.exists():
        if not force and any(out.iterdir()):
            raise GraderError(f"{out}: exists and is not empty (use --force to replace it)")
        shutil.rmtree(out)
    out.mkdir(parents=True)


def _write_committed_labs(repo: Path, out: Path, log) -> dict[str, bytes]:
    """labs/ written into `out` from git, not from the working tree: an instructor's solved or
    half-edited lab must not become the students' skeleton (nor the pristine copy --self grades
    against). Returns the committed files ({path: content})."""
    labs = committed_tree(repo, "labs")
    modified = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "labs"],
                              capture_output=True, text=True).stdout.strip()
    if modified:
        log("note: labs/ has uncommitted changes; the release takes the committed skeletons (HEAD)")
    for name, content in labs.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(content)
    return labs


def _ignore_instructor_only(repo: Path):
    """A copytree `ignore` for folders of `repo`: the instructor-only parts and the caches."""
    def ignore(directory, names):
        relative = Path(directory).relative_to(repo).as_posix()
        excluded = RELEASE_EXCLUDE + TOP_LEVEL_EXCLUDE + INSTRUCTOR_DOCS
        return {name for name in names if name in SKIP_NAMES or f"{relative}/{name}" in excluded}
    return ignore


def _write_student_grading(repo: Path, grading: Path, labs: dict[str, bytes], ignore, log) -> None:
    """The release's grading/: the repository's without its instructor-only parts, its CMake without
    the grader block, and pristine copies of the committed skeletons."""
    shutil.copytree(repo / "grading", grading, ignore=ignore)
    cmake = grading / "CMakeLists.txt"
    cmake.write_text(student_grading_cmake(cmake.read_text(encoding="utf-8")), encoding="utf-8")
    for excluded in RELEASE_EXCLUDE:
        name = excluded.removeprefix("grading/")
        if name in cmake.read_text(encoding="utf-8") and excluded != "grading/skeletons":
            log(f"warning: the release's grading/CMakeLists.txt mentions {name}, which the release leaves out")
    # Pristine skeletons: grade.py --self splices a student's region into these, so edits
    # outside the region in their own labs/ are reported rather than graded.
    for name, content in sorted(labs.items()):
        if name.endswith(SOURCE_SUFFIXES):
            target = grading / "skeletons" / Path(name).relative_to("labs")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)


def _copy_reference_modules(build_dir: Path | None, reference: Path) -> None:
    """The reference solutions as compiled modules only (`reference`, made here), from `build_dir`;
    every lab's, or GraderError."""
    if build_dir is None:
        raise GraderError("--build-dir is needed for the reference modules (or --no-modules)")
    manifest = load_manifest(Path(build_dir))
    reference.mkdir()
    missing = []
    for lab in manifest.labs:
        module = manifest.reference_module(lab)
        if module is None or not module.is_file():
            missing.append(lab.module_file)
            continue
        shutil.copy2(module, reference / lab.module_file)
    if missing:
        raise GraderError(f"reference modules missing in {manifest.reference_dir}: {', '.join(missing)} "
                          "(build the solutions first: cmake --build BUILD)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description="Build the student distribution of "
                                     "reduction-labs and check it for leaked solutions.")
    parser.add_argument("--build-dir", type=Path, help="a build with the reference modules (solutions preset)")
    parser.add_argument("--out", type=Path, required=True, help="release folder (created)")
    parser.add_argument("--no-modules", action="store_true", help="leave out reference/*.so (no build needed)")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    parser.add_argument("--check-only", action="store_true", help="only run the leak check on --out")
    args = parser.parse_args(argv)
    try:
        if not args.check_only:
            make_release(args.build_dir, args.out, with_modules=not args.no_modules, force=args.force)
        problems = release_leaks(args.out)
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if problems:
        print(f"error: the release in {args.out} leaks reference solutions:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"leak check: no solution region, distinctive solution line or solutions/ path in {args.out}")
    return 0
