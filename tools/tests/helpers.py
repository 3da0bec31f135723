"""What the tools' tests share: the repository, CMake and CTest, a python3 without matplotlib, and
the Pythons of this machine that have it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CMAKE = os.environ.get("REDUCTION_CMAKE") or shutil.which("cmake") or "cmake"
CTEST = os.environ.get("REDUCTION_CTEST") or shutil.which("ctest") or "ctest"
# The places the build looks after python3 on PATH (common/cmake/FindPythonWithMatplotlib.cmake).
FIXED_CANDIDATES = ("/usr/bin/python3", "/usr/local/bin/python3")


def has_matplotlib(python: str) -> bool:
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        return False
    return subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode == 0


def fixed_python_with_matplotlib() -> str | None:
    """The first of the fixed candidates that imports matplotlib: what the build finds when python3
    on PATH has none."""
    return next((python for python in FIXED_CANDIDATES if has_matplotlib(python)), None)


def python_without_matplotlib(folder: Path) -> Path:
    """folder/python3: this test's Python without its site-packages (-S), where matplotlib would be:
    a real interpreter that cannot import it, like CI's python3 on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    python = folder / "python3"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    assert not has_matplotlib(str(python)), f"{python} imports matplotlib after all"
    return python


def generator_args() -> list[str]:
    """Ninja when it is here (the project's generator); else CMake's default."""
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def write_project(folder: Path, cmake_lists: str) -> tuple[Path, Path]:
    """A CMake project of one CMakeLists.txt in folder/project: (its source, its build folder)."""
    source = folder / "project"
    source.mkdir(parents=True)
    (source / "CMakeLists.txt").write_text(cmake_lists, encoding="utf-8")
    return source, folder / "build"


def configure(source: Path, build: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([CMAKE, "-S", str(source), "-B", str(build), *generator_args(), *args],
                          capture_output=True, text=True, env=env, timeout=300)
