"""Shared pieces of the grader tests: canned runner outputs, a simulated toolchain, the example class."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

GRADING = Path(__file__).resolve().parent.parent
REPO = GRADING.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = REPO / "examples"
if str(GRADING) not in sys.path:
    sys.path.insert(0, str(GRADING))

from grader.manifest import Lab, Manifest  # noqa: E402
from grader.verdicts import ProcessResult  # noqa: E402


def fixture(name: str, timed_out: bool = False, timeout_s: float | None = None) -> ProcessResult:
    """A canned run: '# returncode: N', then '--- stdout ---' and '--- stderr ---' sections."""
    text = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")
    returncode = int(re.search(r"^# returncode: (-?\d+)$", text, re.MULTILINE).group(1))
    stdout = text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]
    stderr = text.split("--- stderr ---\n", 1)[1]
    return ProcessResult(returncode, stdout, stderr, timed_out, 1.0, ["fake", name], timeout_s)


def course_labs() -> list[Lab]:
    """The labs of the top-level CMakeLists.txt, as a build's manifest would list them."""
    text = (REPO / "CMakeLists.txt").read_text(encoding="utf-8")
    labs = []
    for folder, file in re.findall(r"^\s*reduction_lab\(\s*(\d\d_[a-z0-9_]+)\s+([\w.]+)\s*\)", text, re.MULTILINE):
        labs.append(Lab(folder, file, f"lab{folder[:2]}_{folder[3:]}"))
    return labs


def expected_class() -> dict:
    return json.loads((EXAMPLES / "expected_verdicts.json").read_text(encoding="utf-8"))


def example_labs() -> list[Lab]:
    wanted = expected_class()["labs"]
    return [lab for lab in course_labs() if lab.folder in wanted]


def fake_manifest(build_dir: Path, labs: list[Lab] | None = None) -> Manifest:
    return Manifest(source_dir=REPO, binary_dir=Path(build_dir), reference_dir=Path(build_dir) / "solutions",
                    nvcc="nvcc", module_flags=["-O3"], include_dirs=[str(REPO / "common" / "include")],
                    labs=labs if labs is not None else example_labs())


FIXTURE_FOR = {"PASSED": "pass", "WRONG_ANSWER": "wrong_answer", "TIMEOUT": "timeout", "RUNTIME_ERROR": "exit_atexit"}


class FakeToolchain:
    """Stands in for nvcc, the test runner, compute-sanitizer and the benchmark.

    `outcomes[student][lab folder]` is an expected_verdicts.json entry ({"verdict", "why",
    "hazards", "slow"}): the fake compiles (or fails to, for COMPILE_ERROR), answers the tests with
    the matching canned runner output, reports the listed sanitizer hazards, and times a slow lab
    at `slow_ratio` x the reference. MISSING labs are never asked for: the grader must find them
    missing on its own. Every call is recorded in `calls`."""

    def __init__(self, outcomes: dict, gpu: bool = True, sanitizer: bool = True, slow_ratio: float = 3.0):
        self.outcomes = outcomes
        self.gpu = gpu
        self.sanitizer = sanitizer
        self.slow_ratio = slow_ratio
        self.calls: list[tuple] = []

    def _outcome(self, student: str, lab: Lab) -> dict:
        return self.outcomes.get(student, {}).get(lab.folder, {"verdict": "PASSED", "why": ""})

    def gpu_available(self) -> bool:
        return self.gpu

    def sanitizer_available(self) -> bool:
        return self.sanitizer

    def compile(self, student, lab, source, module, timeout):
        self.calls.append(("compile", student, lab.folder))
        assert Path(source).is_file(), source
        text = Path(source).read_text(encoding="utf-8")
        assert "// ==== BEGIN STUDENT CODE ====" in text
        if self._outcome(student, lab)["verdict"] == "COMPILE_ERROR":
            return ProcessResult(1, "", f"{source}(23): error: no instance of overloaded function \"atomicAdd_block\" "
                                        "matches the argument list\n1 error detected", False, 0.5, ["nvcc"], timeout)
        Path(module).parent.mkdir(parents=True, exist_ok=True)
        Path(module).write_text(text, encoding="utf-8")  # the "module" keeps the spliced source for the fake runner
        return ProcessResult(0, "", "", False, 0.5, ["nvcc", str(source)], timeout)

    def run_tests(self, student, lab, module, gtest_filter, timeout, call_timeout):
        self.calls.append(("tests", student, lab.folder))
        if not self.gpu and not lab.host:
            return fixture("no_gpu")
        outcome = self._outcome(student, lab)
        if "reduction::not_implemented(" in Path(module).read_text(encoding="utf-8"):
            return fixture("not_implemented")
        return fixture(FIXTURE_FOR[outcome["verdict"]])

    def run_sanitizer(self, student, lab, tool, module, cases, timeout, call_timeout):
        self.calls.append(("sanitizer", student, lab.folder, tool))
        if tool in self._outcome(student, lab).get("hazards", []):
            return fixture("racecheck_hazard")
        return fixture("memcheck_clean")

    def benchmark(self, student, module_dir, labs, sizes, types, budget_s, csv_path, json_path, timeout):
        self.calls.append(("bench", student, tuple(lab.folder for lab in labs)))
        columns = ["student", "lab", "type", "n", "median_us", "min_us", "iqr_us", "gbps", "pct_roof",
                   "ref_median_us", "ratio_to_ref", "status", "gpu", "date"]
        rows = []
        gpu = "NVIDIA H100 80GB HBM3"
        for dtype in types:
            for size in sizes:
                n = 1 << int(size.split("^")[1]) if "^" in size else int(size)
                rows.append(["baseline", "roof", dtype, n, "20.0", "19.8", "0.1", "3350.0", "100.0", "", "", "ok", gpu,
                             "2026-11-21"])
                rows.append(["baseline", "cub", dtype, n, "24.0", "23.3", "0.5", "2796.2", "83.5", "", "", "ok", gpu,
                             "2026-11-21"])
                for lab in labs:
                    reference = 400.0 / lab.number
                    ratio = self.slow_ratio if self._outcome(student, lab).get("slow") else 1.02
                    rows.append([student, lab.folder, dtype, n, f"{reference * ratio:.3f}", "", "", "", "",
                                 f"{reference:.3f}", f"{ratio:.4f}", "ok", gpu, "2026-11-21"])
                    rows.append(["reference", lab.folder, dtype, n, f"{reference:.3f}", "", "", "", "", "", "", "ok",
                                 gpu, "2026-11-21"])
        with open(csv_path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            writer.writerows(rows)
        Path(json_path).write_text(json.dumps({"device": {"name": gpu, "compute_capability": "9.0"},
                                               "date": "2026-11-21"}), encoding="utf-8")
        return ProcessResult(0, "", "", False, 2.0, ["reduction_bench"], timeout)
