"""Where the CUDA toolkit of an nvcc is, as that nvcc itself says.

The nvcc a grading uses may be a wrapper script (a machine's /usr/local/bin/nvcc that runs
`exec /usr/local/cuda-13.0/bin/nvcc "$@"`), so the folder above the file's own folder is not the
toolkit. nvcc's dry run names its real folder and include folders (`#$ TOP=`, `#$ INCLUDES=`,
`#$ SYSTEM_INCLUDES=`); those decide which headers a report may quote, which folder a graded
compile sees, and where the toolkit's CUB and Thrust are. Where nvcc cannot be asked (not there,
not a program: the grader tests' stand-ins), the folder above its resolved file's folder is used.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

DRY_RUN = ("-v", "--dryrun", "-E", "-x", "cu", os.devnull)
ASK_TIMEOUT_S = 60


@dataclass(frozen=True)
class Toolkit:
    root: Path                       # resolved: <root>/bin/nvcc is the real compiler driver
    include_dirs: tuple[Path, ...]   # resolved, in the order nvcc passes them (-I, then -isystem)
    asked: bool                      # False: nvcc could not be asked and the folders are guessed


def parse_dry_run(text: str) -> tuple[Path, tuple[Path, ...]] | None:
    """TOP and the include folders of `nvcc -v --dryrun` output, resolved; None without a TOP line."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("#$ ") and "=" in line:
            name, _, value = line[3:].partition("=")
            if name.strip() in ("TOP", "INCLUDES", "SYSTEM_INCLUDES"):
                values.setdefault(name.strip(), value.strip())
    if "TOP" not in values:
        return None
    folders = []
    for name in ("INCLUDES", "SYSTEM_INCLUDES"):
        try:
            tokens = shlex.split(values.get(name, ""))
        except ValueError:
            continue
        for index, token in enumerate(tokens):
            if token.startswith("-I") and len(token) > 2:
                folders.append(token[2:])
            elif token in ("-I", "-isystem") and index + 1 < len(tokens):
                folders.append(tokens[index + 1])
    root = Path(os.path.realpath(shlex.split(values["TOP"])[0] if values["TOP"] else ""))
    return root, tuple(dict.fromkeys(Path(os.path.realpath(folder)) for folder in folders))


@functools.lru_cache(maxsize=16)
def toolkit_of(nvcc: str) -> Toolkit:
    """The toolkit `nvcc` (a path, or a name found on PATH) belongs to. Trusted: this is the grader's
    own compiler, run outside the sandbox on no input."""
    found = nvcc if os.path.isabs(nvcc) else (shutil.which(nvcc) or nvcc)
    try:
        done = subprocess.run([found, *DRY_RUN], capture_output=True, text=True, timeout=ASK_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, errors="replace")
        parsed = parse_dry_run(done.stdout + "\n" + done.stderr) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        parsed = None
    if parsed is not None:
        root, include_dirs = parsed
        return Toolkit(root, include_dirs or (root / "include",), True)
    root = Path(os.path.realpath(found)).parent.parent
    guessed = [root / "include", *sorted((root / "targets").glob("*/include"))]
    return Toolkit(root, tuple(dict.fromkeys(Path(os.path.realpath(folder)) for folder in guessed)), False)
