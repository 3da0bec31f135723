"""Compiled modules by content (stages/compile_cache.py): an identical lab file is compiled once,
whoever hands it in, and gets the same verdicts and points as compiled again; what a compile printed
is never reused; a kept module that changed is dropped; the file compiled names no student; without
a sandbox nothing is cached. On the simulated toolchain; the toolchain's identity with the real nvcc."""

import json
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from collections import Counter
from pathlib import Path

from grader_tests.helpers import GRADING, REPO, FakeToolchain, expected_class, fake_manifest, write_example_class
from grader.manifest import Manifest
from grader.sandbox.bubblewrap import Sandbox
from grader.sandbox.gpu_nodes import GpuView
from grader.policy import Policy
from grader.sandbox.process import ProcessResult
from grader.stages.compile_cache import CACHE_FOLDER, CompileCache
from grader.stages.engine import Grader, Options
from grader.stages.toolchain import CompileRun, Toolchain
from grader_tests.stages.test_compile import find_nvcc


class CachingToolchain(FakeToolchain):
    """The simulated toolchain with an identity: the grader caches its modules. `warn`: students whose
    compiles print a warning."""

    def __init__(self, outcomes, warn=(), sandbox="fake sandbox (tests)"):
        super().__init__(outcomes)
        self.warn, self.status, self.sources = set(warn), sandbox, []

    def compile_identity(self) -> str:
        return "fake nvcc 1.0"

    def sandbox_status(self) -> str:
        return self.status

    def compile(self, student, lab, source, module, timeout, refuse=()):
        self.sources.append(str(source))
        run = super().compile(student, lab, source, module, timeout, refuse)
        if student in self.warn and run.process.returncode == 0:
            run.process.stderr = f"{source}(3): warning: variable declared but never referenced"
        return run


class CacheUnitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def file(self, name: str, text: str) -> Path:
        path = self.tmp / name / "reduce.cu"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        return path

    def test_the_key_is_the_content_the_lab_the_refusal_and_the_toolchain(self):
        cache = CompileCache(self.tmp / "cache", "nvcc 1")
        amy, ben, cat = self.file("amy", "int x;"), self.file("ben", "int x;"), self.file("cat", "int y;")
        self.assertEqual(cache.key("04", amy, ("CUB",)), cache.key("04", ben, ("CUB",)))
        self.assertNotEqual(cache.key("04", amy, ("CUB",)), cache.key("04", cat, ("CUB",)))
        self.assertNotEqual(cache.key("04", amy, ("CUB",)), cache.key("05", amy, ("CUB",)))
        self.assertNotEqual(cache.key("04", amy, ("CUB",)), cache.key("04", amy, ()))
        self.assertNotEqual(cache.key("04", amy, ()), CompileCache(self.tmp / "cache", "nvcc 2").key("04", amy, ()))

    def test_the_file_compiled_names_no_student_and_is_shared_by_identical_files(self):
        cache = CompileCache(self.tmp / "cache", "nvcc 1")
        amy, ben = self.file("amy", "int x;"), self.file("ben", "int x;")
        first, second = cache.source(cache.key("04", amy, ()), amy), cache.source(cache.key("04", ben, ()), ben)
        self.assertEqual(first, second)
        self.assertNotIn("amy", str(first))
        self.assertEqual(first.read_text(encoding="utf-8"), "int x;")
        self.assertEqual(first.stat().st_mode & 0o777, 0o644)

    def test_two_graders_of_one_cache_build_a_key_one_after_the_other(self):
        """The --gpus workers are processes: the second to miss a key waits for the first one's module
        (a file lock), where a thread lock let both compile it at once. Another key is not held up: a
        holder of "same" stays inside until the holder of "other" has been inside too."""
        folder, log, other_was_in = self.tmp / "cache", self.tmp / "log", self.tmp / "other-was-in"
        script = (
            "import pathlib, sys, time\n"
            "from grader.stages.compile_cache import CompileCache\n"
            "cache, key, other_was_in = CompileCache(pathlib.Path(sys.argv[1]), 'nvcc 1'), sys.argv[3], pathlib.Path(sys.argv[4])\n"
            "with open(sys.argv[2], 'a') as log, cache.building(key):\n"
            "    log.write(f'{time.monotonic()} in {key}\\n'); log.flush()\n"
            "    if key == 'other': other_was_in.touch()\n"
            "    deadline = time.monotonic() + 30\n"
            "    while key == 'same' and not other_was_in.exists() and time.monotonic() < deadline: time.sleep(0.01)\n"
            "    time.sleep(0.2)\n"
            "    log.write(f'{time.monotonic()} out {key}\\n'); log.flush()\n")
        start = lambda key: subprocess.Popen([sys.executable, "-c", script, str(folder), str(log), key,  # noqa: E731
                                              str(other_was_in)], cwd=GRADING)
        started = [start("same"), start("same")]
        deadline = time.monotonic() + 60
        while not (log.is_file() and " in " in log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)   # "other" starts once a holder of "same" is inside
        started.append(start("other"))
        self.assertEqual([process.wait(timeout=90) for process in started], [0, 0, 0])
        events = sorted((float(time), what, key) for time, what, key in
                        (line.split() for line in log.read_text().splitlines()))
        self.assertEqual([what for _, what, key in events if key == "same"], ["in", "out", "in", "out"])   # never both
        first_out = next(time for time, what, key in events if key == "same" and what == "out")
        other_in = next(time for time, what, key in events if key == "other" and what == "in")
        self.assertLess(other_in, first_out)   # "other" got in while "same" was held: not one lock for every key

    def test_a_kept_module_is_fetched_whole_and_one_that_changed_is_dropped(self):
        cache = CompileCache(self.tmp / "cache", "nvcc 1")
        module = self.tmp / "built.so"
        module.write_bytes(b"\x7fELF module")
        self.assertFalse(cache.fetch("k1", self.tmp / "out.so"))
        cache.keep("k1", module)
        self.assertTrue(cache.fetch("k1", self.tmp / "out.so"))
        self.assertEqual((self.tmp / "out.so").read_bytes(), b"\x7fELF module")
        (self.tmp / "cache" / "k1.module").write_bytes(b"\x7fELF other")
        self.assertFalse(cache.fetch("k1", self.tmp / "again.so"))
        self.assertFalse((self.tmp / "again.so").exists())
        self.assertFalse((self.tmp / "cache" / "k1.module").exists(), "a changed entry is dropped")
        self.assertEqual(cache.hits, 1)


class CachedGradingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.manifest = fake_manifest(self.tmp / "build")
        example = write_example_class(self.tmp / "example")
        expected = expected_class()["students"]
        # twins: the same files as alice (all the reference's regions) and as bob, under other names
        for twin, of in (("alice2", "alice"), ("bob2", "bob")):
            shutil.copytree(example / of, example / twin)
            expected[twin] = expected[of]
        self.expected = expected
        self.students = [(p.name, p) for p in sorted(example.iterdir()) if p.is_dir()]

    def grade(self, name: str, toolchain, cache: bool = True, in_flight: int = 1) -> dict:
        out = self.tmp / name
        options = Options(labs=self.manifest.labs, jobs=4, seed=11, in_flight=in_flight, compile_cache=cache)
        Grader(self.manifest, Policy.load(GRADING / "policy.toml"), toolchain, out, options,
               log=lambda text: None).grade_class(self.students)
        records = {}
        for student, _ in self.students:
            data = json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
            records[student] = data
        return records

    @staticmethod
    def grades(records: dict) -> dict:
        return {student: {folder: (lab["verdict"], lab["score"]["correctness"], lab["score"]["performance"],
                                   lab["compile"]["output"])
                          for folder, lab in record["labs"].items()} for student, record in records.items()}

    def test_identical_files_compile_once_with_the_grades_of_compiling_each(self):
        plain, cached = CachingToolchain(self.expected), CachingToolchain(self.expected)
        without = self.grade("without", plain, cache=False)
        with_cache = self.grade("with", cached, in_flight=3)
        self.assertEqual(self.grades(with_cache), self.grades(without))
        compiled = Counter(call[1] for call in cached.calls if call[0] == "compile")
        everyone = Counter(call[1] for call in plain.calls if call[0] == "compile")
        self.assertLess(sum(compiled.values()), sum(everyone.values()))
        reused = {student: sorted(folder for folder, lab in record["labs"].items() if lab["compile"]["cached"])
                  for student, record in with_cache.items()}
        self.assertTrue(reused["alice"] or reused["alice2"], "alice's twin compiled nothing alice compiled")
        for student, record in with_cache.items():
            for folder, lab in record["labs"].items():
                if lab["compile"]["cached"]:
                    self.assertEqual(lab["compile"]["seconds"], 0.0)
                    self.assertTrue(lab["compile"]["module_sha256"])
        for source in cached.sources:   # every compile saw a file that names no student
            self.assertIn(CACHE_FOLDER, source)
            self.assertFalse(any(f"/{student}/" in source for student, _ in self.students), source)
        self.assertTrue(all(CACHE_FOLDER not in source for source in plain.sources))

    def test_a_compile_that_printed_anything_is_not_reused(self):
        toolchain = CachingToolchain(self.expected, warn={"alice", "alice2"})
        records = self.grade("warned", toolchain)
        compiled = Counter(call[1] for call in toolchain.calls if call[0] == "compile")
        self.assertEqual(compiled["alice"], compiled["alice2"], "alice's twin compiled every lab alice compiled")
        self.assertFalse(any(lab["compile"]["cached"] for lab in records["alice2"]["labs"].values()))
        warned = [lab["compile"]["output"] for lab in records["alice2"]["labs"].values() if lab["compile"]["output"]]
        self.assertTrue(warned and all("labs/" in text and "alice" not in text for text in warned), warned)

    def test_nothing_is_cached_where_compiles_are_not_sandboxed(self):
        toolchain = CachingToolchain(self.expected, sandbox="UNSANDBOXED (tests)")
        records = self.grade("unsandboxed", toolchain)
        self.assertFalse(any(lab["compile"]["cached"] for record in records.values() for lab in record["labs"].values()))
        self.assertFalse((self.tmp / "unsandboxed" / "work" / CACHE_FOLDER).exists())


class IdentityTest(unittest.TestCase):
    def test_the_identity_is_stable_and_changes_with_the_projects_headers(self):
        nvcc = find_nvcc()
        if nvcc is None:
            self.skipTest("nvcc not found (PATH, /usr/local/cuda/bin)")
        with tempfile.TemporaryDirectory() as tmp:
            include = Path(tmp) / "include"
            shutil.copytree(REPO / "common" / "include", include)
            manifest = Manifest(source_dir=REPO, binary_dir=REPO / "build", reference_dir=None, nvcc=nvcc,
                                module_flags=["-std=c++17"], include_dirs=[str(include)], labs=[])
            tools = Toolchain(manifest)
            first, again = tools.compile_identity(), tools.compile_identity()
            header = next(path for path in include.rglob("*.hpp"))
            header.write_text(header.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
            changed = tools.compile_identity()
        self.assertEqual(first, again)
        self.assertNotEqual(first, changed)

    def test_the_workers_of_several_gpus_share_an_identity(self):
        nvcc = find_nvcc()
        if nvcc is None:
            self.skipTest("nvcc not found (PATH, /usr/local/cuda/bin)")
        manifest = Manifest(source_dir=REPO, binary_dir=REPO / "build", reference_dir=None, nvcc=nvcc,
                            module_flags=["-std=c++17"], include_dirs=[str(REPO / "common" / "include")], labs=[])
        identities = []
        for node, version in ((0, "bubblewrap 0.8.0"), (1, "bubblewrap 0.8.0"), (0, "bubblewrap 0.9.0")):
            gpu = GpuView(((Path(f"/dev/nvidia{node}"),) * 2,), (), True, f"GPU: its own device node only (/dev/nvidia{node})")
            tools = Toolchain(manifest, sandbox=Sandbox(True, version=version, gpu=gpu))
            tools._libraries = ()   # no probe: this is about the sandbox's part of the identity
            identities.append(tools.compile_identity())
        self.assertEqual(identities[0], identities[1], "the GPU node is not a compile's")
        self.assertNotEqual(identities[0], identities[2], "bubblewrap's version is")


if __name__ == "__main__":
    unittest.main()
