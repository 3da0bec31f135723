"""Finding every copy of CUB, Thrust and libcu++ a graded compile could include (libraries.py)."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from grader_tests import helpers  # noqa: F401  (puts grading/ on sys.path)
from grader.libraries import hidden_library_folders, library_folders


def make_tree(root: Path) -> dict[str, Path]:
    """A toolkit whose include/cccl holds all three, a distribution's /usr/include copies of CUB and
    libcu++, and a toolkit folder that is itself named cuda (which must stay visible)."""
    paths = {
        "cccl": root / "toolkit" / "include" / "cccl",
        "usr_cub": root / "usr" / "include" / "cub",
        "usr_cuda": root / "usr" / "include" / "cuda",
        "opt_cuda": root / "opt" / "cuda",
    }
    for name in ("cub", "thrust", "cuda/std"):
        (paths["cccl"] / name).mkdir(parents=True)
    (paths["cccl"] / "cub" / "version.cuh").touch()
    (paths["cccl"] / "thrust" / "version.h").touch()
    (paths["usr_cub"]).mkdir(parents=True)
    (paths["usr_cub"] / "version.cuh").touch()
    (paths["usr_cuda"] / "std").mkdir(parents=True)
    (paths["opt_cuda"] / "include").mkdir(parents=True)
    return paths


class LibraryFoldersTest(unittest.TestCase):
    def test_finds_the_library_folder_of_each_header_and_leaves_a_toolkit_named_cuda(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = make_tree(Path(folder))
            dependencies = (f"probe.o: probe.cu {paths['opt_cuda']}/include/cuda_runtime.h \\\n"
                            f" {paths['cccl']}/cub/version.cuh {paths['cccl']}/cuda/std/version \\\n"
                            f" {paths['usr_cub']}/version.cuh {paths['usr_cuda']}/std/__config\n")
            self.assertEqual(library_folders(dependencies), {paths["cccl"], paths["usr_cub"], paths["usr_cuda"]})

    def test_hides_until_the_compiler_finds_none(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = make_tree(Path(folder))
            # The compiler finds the first copy not hidden, as include paths in order would.
            copies = [paths["cccl"] / "cub" / "version.cuh", paths["usr_cub"] / "version.cuh"]
            calls = []

            def probe(hidden):
                calls.append(hidden)
                shown = [path for path in copies if not any(h in path.parents for h in hidden)]
                return f"probe.o: probe.cu {shown[0]}\n" if shown else "probe.o: probe.cu\n"

            hidden = hidden_library_folders(probe, (paths["cccl"],))
            self.assertEqual(set(hidden), {paths["cccl"], paths["usr_cub"]})
            self.assertEqual(len(calls), 2)

    def test_refuses_when_a_copy_cannot_be_hidden(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = make_tree(Path(folder))
            stubborn = f"probe.o: {paths['usr_cub']}/version.cuh\n"
            with self.assertRaises(RuntimeError):
                hidden_library_folders(lambda hidden: stubborn, ())


if __name__ == "__main__":
    unittest.main()
