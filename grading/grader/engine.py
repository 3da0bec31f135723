"""Grading a class: per student, compile their lab files, test, sanitize, benchmark, score.

Order per student (one student at a time):
  1. collect the lab files, splice each STUDENT CODE region into the official skeleton;
  2. compile them, one nvcc per lab, in parallel (--jobs);
  3. run each lab's tests in its own process, a few labs at a time (correctness only);
  4. run compute-sanitizer on the small cases of the labs that passed;
  5. benchmark the labs that passed against the reference, alone on the GPU;
  6. score, and write the student's JSON and the class files.
The student's JSON is rewritten after each step (complete = false until the end); a rerun skips
the students whose JSON is complete and redoes the others.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import reports, scoring
from .manifest import Lab, Manifest
from .policy import Policy
from .submission import RegionError, Submission, collect, read_text, splice
from .verdicts import (COMPILE_ERROR, MISSING, NOT_RUN, PASSED, ProcessResult, sanitizer_finding, tail,
                       test_verdict)

GRADER_VERSION = "reduction-labs grader 1.0"
NO_GPU_MESSAGE = "correctness and timing were not run: no GPU on this machine"
COMPILER_OUTPUT_CHARS = 12000
RESERVED_NAMES = ("reference", "baseline", "A/A")


@dataclass
class Options:
    labs: list[Lab]
    jobs: int = 2
    sanitizer: bool = True
    bench: bool = True
    force: bool = False
    large: bool = False
    self_check: bool = False


@dataclass
class ClassResult:
    records: list[dict] = field(default_factory=list)
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    no_gpu: bool = False
    sanitizer_missing: bool = False


def parse_size(text: str) -> int:
    text = text.strip()
    if "^" in text:
        base, exponent = text.split("^", 1)
        return round(float(base) ** float(exponent))
    return round(float(text))


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Grader:
    def __init__(self, manifest: Manifest, policy: Policy, toolchain, out: Path, options: Options,
                 skeleton_dirs: list[Path] | None = None, log=print):
        self.manifest = manifest
        self.policy = policy
        self.tools = toolchain
        self.out = Path(out).resolve()
        self.options = options
        self.log = log
        self._print_lock = threading.Lock()
        # Where the official skeletons are: a release's pristine copies first, then labs/.
        self.skeleton_dirs = skeleton_dirs or [manifest.source_dir / "labs"]
        self.gpu = False
        self.sanitizer_ok = False

    # ---- class level

    def grade_class(self, students: list[tuple[str, Path]]) -> ClassResult:
        result = ClassResult()
        self.gpu = bool(self.tools.gpu_available())
        self.sanitizer_ok = self.options.sanitizer and self.gpu and bool(self.tools.sanitizer_available())
        result.no_gpu = not self.gpu
        result.sanitizer_missing = self.options.sanitizer and self.gpu and not self.sanitizer_ok
        if result.no_gpu:
            self.say(f"note: {NO_GPU_MESSAGE}; GPU labs that compile are marked {NOT_RUN} (lab 01 runs on the "
                     "CPU and is graded normally)")
        if result.sanitizer_missing:
            self.say("note: compute-sanitizer not available: sanitizer checks skipped (no penalty)")
        total = len(students)
        for index, (name, root) in enumerate(students, 1):
            path = reports.student_json_path(self.out, name)
            if not self.options.force and self._complete(path):
                self.say(f"[student {index}/{total}] {name}  already graded ({path}); skipped (--force redoes it)")
                result.skipped.append(name)
                continue
            self.grade_student(index, total, name, root)
            reports.write_class_outputs(self.out, self.manifest.labs)
            result.graded.append(name)
        result.records = reports.write_class_outputs(self.out, self.manifest.labs)
        if any(entry["verdict"] == NOT_RUN for record in result.records for entry in record["labs"].values()):
            result.no_gpu = True
        return result

    @staticmethod
    def _complete_record(path: Path) -> dict | None:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and record.get("complete") else None

    def _complete(self, path: Path) -> bool:
        record = self._complete_record(path)
        return record is not None and all(lab.folder in record.get("labs", {}) for lab in self.options.labs)

    def say(self, text: str) -> None:
        with self._print_lock:
            self.log(text)

    # ---- one student

    def grade_student(self, index: int, total: int, name: str, root: Path) -> dict:
        prefix = f"[student {index}/{total}] {name}"
        work = self.out / "work" / name
        json_path = reports.student_json_path(self.out, name)
        previous = json_path.with_name(json_path.name + ".previous")
        if self._complete_record(json_path):
            json_path.replace(previous)  # the labs not graded now are carried over from it
        shutil.rmtree(work, ignore_errors=True)  # no module of an earlier grading may be timed
        submission = collect(name, root, self.options.labs)
        bench = self.policy.section("benchmark")
        record = {
            "student": name, "complete": False, "grader": GRADER_VERSION, "started": now(), "finished": None,
            "date": datetime.date.today().isoformat(), "submission": str(root), "policy": self.policy.path,
            "machine": {"gpu": self.gpu, "sanitizer": self.sanitizer_ok},
            "ignored": submission.ignored, "notes": [],
            "benchmark": {"types": list(bench["types"]), "sizes": list(bench["sizes"]),
                          "sizes_n": [parse_size(s) for s in bench["sizes"]], "status": "not run"},
            "labs": {}, "timings": [], "total": None, "max_total": None,
        }
        if not self.gpu:
            record["notes"].append(NO_GPU_MESSAGE)
        for path in submission.ignored:
            record["notes"].append(f"ignored: {path}")
        for lab in self.options.labs:
            record["labs"][lab.folder] = self._prepare_lab(lab, submission, work)
        reports.write_json(json_path, record)

        self._compile_all(prefix, record, work)
        reports.write_json(json_path, record)
        self._test_all(prefix, record)
        reports.write_json(json_path, record)
        self._sanitize_all(prefix, record)
        reports.write_json(json_path, record)
        self._benchmark(prefix, record, work)
        self._score(record)
        self._carry_over(record, json_path)
        record["complete"] = True
        record["finished"] = now()
        reports.write_json(json_path, record)
        if previous.exists():
            previous.unlink()
        total_text = (reports.format_points(record["total"]) if record["total"] is not None else "n/a (not all labs run)")
        self.say(f"{prefix}  total {total_text} / {reports.format_points(record['max_total'])}")
        return record

    def _lab(self, folder: str) -> Lab:
        return next(lab for lab in self.options.labs if lab.folder == folder)

    def _skeleton(self, lab: Lab) -> Path:
        for directory in self.skeleton_dirs:
            candidate = Path(directory) / lab.folder / lab.file
            if candidate.is_file():
                return candidate
        raise FileNotFoundError(f"no official skeleton for {lab.folder}/{lab.file}")

    def _prepare_lab(self, lab: Lab, submission: Submission, work: Path) -> dict:
        entry = {"folder": lab.folder, "file": lab.file, "module": lab.module, "verdict": None, "detail": "",
                 "submitted": None, "notes": [], "compile": {}, "tests": {}, "sanitizer": {}, "benchmark": {},
                 "score": {}}
        source = submission.files.get(lab.folder)
        if source is None:
            entry["verdict"] = MISSING
            entry["detail"] = f"no labs/{lab.folder}/{lab.file} in the submission"
            if lab.folder in submission.near_misses:
                entry["detail"] += " (found: " + ", ".join(submission.near_misses[lab.folder]) + ")"
            return entry
        entry["submitted"] = source.relative_to(submission.root).as_posix()
        try:
            text, notes = splice(read_text(self._skeleton(lab)), read_text(source), entry["submitted"])
        except RegionError as exc:
            entry["verdict"] = COMPILE_ERROR
            entry["detail"] = str(exc)
            return entry
        entry["notes"] += notes
        spliced = work / "src" / lab.folder / lab.file
        spliced.parent.mkdir(parents=True, exist_ok=True)
        spliced.write_text(text, encoding="utf-8")
        entry["source"] = str(spliced)
        return entry

    @contextlib.contextmanager
    def _pool(self, workers: int):
        """A thread pool (each job waits on a subprocess) that drops its queued jobs on an error."""
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def _compile_all(self, prefix: str, record: dict, work: Path) -> None:
        todo = [entry for entry in record["labs"].values() if entry["verdict"] is None]
        timeout = float(self.policy.section("compile")["timeout_s"])

        def build(entry):
            lab = self._lab(entry["folder"])
            module = work / "modules" / lab.module_file
            return entry, module, self.tools.compile(record["student"], lab, Path(entry["source"]), module, timeout)

        with self._pool(self.options.jobs) as pool:
            for entry, module, result in pool.map(build, todo):
                output = (result.stdout + result.stderr).strip()
                entry["compile"] = {"ok": result.returncode == 0 and not result.timed_out and module.is_file(),
                                    "seconds": round(result.seconds, 2), "command": result.command,
                                    "output": output[-COMPILER_OUTPUT_CHARS:]}
                if result.timed_out:
                    entry["verdict"] = COMPILE_ERROR
                    entry["detail"] = f"the compiler did not finish within {timeout:.0f} s"
                elif not entry["compile"]["ok"]:
                    entry["verdict"] = COMPILE_ERROR
                    first_error = next((line for line in output.splitlines() if "error" in line), "")
                    entry["detail"] = "does not compile" + (f": {first_error.strip()}" if first_error else "")
                else:
                    entry["module_path"] = str(module)
                if entry["verdict"] == COMPILE_ERROR:
                    self.say(f"{prefix}  lab {entry['folder']}  {COMPILE_ERROR}")
        for entry in record["labs"].values():
            if entry["verdict"] == MISSING:
                self.say(f"{prefix}  lab {entry['folder']}  {MISSING}")

    def _test_all(self, prefix: str, record: dict) -> None:
        tests = self.policy.section("tests")
        todo = [entry for entry in record["labs"].values() if entry["verdict"] is None]
        gtest_filter = "*" if (self.options.large or tests.get("large")) else "-Large.*"

        def run(entry):
            lab = self._lab(entry["folder"])
            return entry, self.tools.run_tests(record["student"], lab, Path(entry["module_path"]), gtest_filter,
                                               float(tests["timeout_s"]), float(tests["call_timeout_s"]))

        with self._pool(int(tests["concurrency"])) as pool:
            for entry, result in pool.map(run, todo):
                self._record_test(entry, result)
                detail = " ".join(entry["detail"].split())
                self.say(f"{prefix}  lab {entry['folder']}  {entry['verdict']}"
                         + (f"  ({detail[:110]}{'...' if len(detail) > 110 else ''})" if entry["verdict"] != PASSED
                            else ""))

    def _record_test(self, entry: dict, result: ProcessResult) -> None:
        verdict = test_verdict(result)
        entry["verdict"] = verdict.verdict
        entry["detail"] = verdict.detail
        entry["tests"] = {"returncode": result.returncode, "timed_out": result.timed_out,
                          "seconds": round(result.seconds, 2), "command": result.command,
                          "failed_tests": verdict.failed_tests,
                          "first_failure": verdict.first_failure.to_json() if verdict.first_failure else None,
                          "stdout_tail": tail(result.stdout, 30), "stderr_tail": tail(result.stderr, 15)}

    def _sanitize_all(self, prefix: str, record: dict) -> None:
        config = self.policy.section("sanitizer")
        passed = [entry for entry in record["labs"].values()
                  if entry["verdict"] == PASSED and not self._lab(entry["folder"]).host]
        for entry in record["labs"].values():
            if entry["verdict"] != PASSED:
                continue
            if self._lab(entry["folder"]).host:
                entry["sanitizer"] = {"status": "not applicable (host lab)", "findings": [], "hazards": {}}
            elif not self.options.sanitizer:
                entry["sanitizer"] = {"status": "skipped (--no-sanitizer)", "findings": [], "hazards": {}}
            elif not self.sanitizer_ok:
                entry["sanitizer"] = {"status": "sanitizer not available", "findings": [], "hazards": {}}
            else:
                entry["sanitizer"] = {"status": "run", "findings": [], "hazards": {}}
        if not self.sanitizer_ok or not passed:
            return
        jobs = [(entry, tool) for entry in passed for tool in config["tools"]]

        def run(job):
            entry, tool = job
            lab = self._lab(entry["folder"])
            return entry, tool, self.tools.run_sanitizer(record["student"], lab, tool, Path(entry["module_path"]),
                                                         list(config["cases"]), float(config["timeout_s"]),
                                                         float(config["call_timeout_s"]))

        with self._pool(int(self.policy.section("tests")["concurrency"])) as pool:
            for entry, tool, result in pool.map(run, jobs):
                finding = sanitizer_finding(tool, result)
                entry["sanitizer"]["findings"].append(finding.to_json())
                if finding.status == "hazards":
                    entry["sanitizer"]["hazards"][tool] = finding.count
                    self.say(f"{prefix}  lab {entry['folder']}  {tool}: {finding.count} hazard(s)"
                             + (f": {finding.report[0][:90]}" if finding.report else ""))

    def _benchmark(self, prefix: str, record: dict, work: Path) -> None:
        config = self.policy.section("benchmark")
        bench = record["benchmark"]
        passed = [self._lab(entry["folder"]) for entry in record["labs"].values() if entry["verdict"] == PASSED]
        if not self.options.bench:
            bench["status"] = "skipped (--no-bench)"
            return
        if not self.gpu:
            bench["status"] = "not run: no GPU on this machine"
            return
        if not passed:
            bench["status"] = "nothing to time: no lab passed"
            return
        self.say(f"{prefix}  benchmarking {', '.join(lab.folder for lab in passed)} (alone on the GPU)")
        rows, problems = self._run_bench(record["student"], passed, work, config, "bench")
        if problems and len(passed) > 1:  # one lab can take the run down: time them one by one
            rows, problems = [], []
            for lab in passed:
                lab_rows, lab_problems = self._run_bench(record["student"], [lab], work, config, f"bench_{lab.folder}")
                rows += lab_rows
                problems += lab_problems
        bench["status"] = "run" if not problems else "run with problems"
        bench["problems"] = problems
        record["timings"] = rows
        device = self._bench_device(work)
        if device:
            bench["device"] = device
            record["gpu_name"] = device.get("name", "")
        own = [row for row in rows if row["student"] == record["student"]]
        for lab in passed:
            entry = record["labs"][lab.folder]
            lab_rows = [row for row in own if row["lab"] == lab.folder]
            entry["benchmark"] = {"rows": lab_rows}
            wrong = [row for row in lab_rows if row["status"] != "ok"]
            ratios = [float(row["ratio_to_ref"]) for row in lab_rows if row["status"] == "ok" and row.get("ratio_to_ref")]
            if wrong:
                entry["benchmark"]["note"] = (f"the benchmark got a {wrong[0]['status']} at n = {wrong[0]['n']}, "
                                              f"{wrong[0]['type']}")
            elif not lab_rows:
                entry["benchmark"]["note"] = "the benchmark produced no timing for this lab" + (
                    f" ({problems[0]})" if problems else "")
            elif not ratios:
                entry["benchmark"]["note"] = "no reference timing to compare with (reference module missing?)"
                entry["benchmark"]["no_reference"] = True
            else:
                entry["benchmark"]["ratio"] = round(self.policy.combine_ratios(ratios), 4)
                entry["benchmark"]["statistic"] = self.policy.section("performance")["statistic"]

    def _run_bench(self, student: str, labs: list[Lab], work: Path, config: dict, stem: str):
        csv_path, json_path = work / f"{stem}.csv", work / f"{stem}.json"
        for path in (csv_path, json_path):
            if path.exists():
                path.unlink()
        result = self.tools.benchmark(student, work / "modules", labs, list(config["sizes"]), list(config["types"]),
                                      float(config["budget_s"]), csv_path, json_path, float(config["timeout_s"]))
        problems = []
        if result.timed_out:
            problems.append(f"the benchmark of {', '.join(l.folder for l in labs)} did not finish within "
                            f"{float(config['timeout_s']):.0f} s")
        elif result.returncode != 0:
            problems.append(f"the benchmark of {', '.join(l.folder for l in labs)} failed with status "
                            f"{result.returncode}: {tail(result.stderr, 3)}")
        rows = []
        if not problems and csv_path.is_file():
            with open(csv_path, newline="", encoding="utf-8") as handle:
                rows = [dict(row) for row in csv.DictReader(handle)]
        return rows, problems

    def _bench_device(self, work: Path) -> dict | None:
        for path in sorted(work.glob("bench*.json")):
            try:
                device = json.loads(path.read_text(encoding="utf-8")).get("device")
            except (OSError, ValueError):
                continue
            if isinstance(device, dict):
                return device
        return None

    def _carry_over(self, record: dict, json_path: Path) -> None:
        """Grading some labs (--labs) keeps the other labs of an earlier complete grading."""
        try:
            previous = json.loads(json_path.with_name(json_path.name + ".previous").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        kept = {folder: entry for folder, entry in previous.get("labs", {}).items() if folder not in record["labs"]}
        if not kept:
            return
        order = [lab.folder for lab in self.manifest.labs]
        merged = {**kept, **record["labs"]}
        record["labs"] = {folder: merged[folder] for folder in sorted(merged, key=lambda f: (f not in order,
                                                                                                order.index(f) if f in order else 0, f))}
        has_baselines = any(row["student"] == "baseline" for row in record["timings"])
        record["timings"] += [row for row in previous.get("timings", [])
                              if row["lab"] in kept or (row["student"] == "baseline" and not has_baselines)]
        record["notes"].append(f"kept from the earlier grading ({previous.get('finished')}): {', '.join(kept)}")
        record["total"], record["max_total"] = scoring.student_total([e["score"] for e in record["labs"].values()])

    def _score(self, record: dict) -> None:
        bench = record["benchmark"]
        bench_ran = bench["status"].startswith("run")
        for folder, entry in record["labs"].items():
            lab = self._lab(folder)
            hazards = entry.get("sanitizer", {}).get("hazards", {})
            ratio = entry.get("benchmark", {}).get("ratio")
            note = entry.get("benchmark", {}).get("note", "") if bench_ran else bench["status"]
            measured = bench_ran and not entry.get("benchmark", {}).get("no_reference")
            entry["score"] = scoring.score_lab(lab, self.policy, entry["verdict"], hazards, ratio, measured, note)
        record["total"], record["max_total"] = scoring.student_total([e["score"] for e in record["labs"].values()])
