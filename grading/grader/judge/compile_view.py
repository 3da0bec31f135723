"""What a compile of a student's file sees, and which files it asked for outside that (issue 25).

A compile reads every file its source names: `#include "/etc/hostname"`, `asm(".incbin \\"/etc/passwd\\"")`
(the assembler copies the file into the module, which prints it at run time, into the student's
report), `#embed` (C23; gcc 15). So a compile runs in the sandbox of a run, with less of the machine:

- the CUDA toolkit, read-only at its real path, run by its own nvcc (`<TOP>/bin/nvcc`, the toolkit's
  own word: toolkit.py), CUB and Thrust hidden (libraries.py), the denied libraries masked;
- the host compiler's folders, read-only: /usr/bin (gcc, g++, as, ld, sh), /usr/lib and /usr/lib64
  (cc1plus, collect2, the C and C++ libraries, crt files; /usr/lib64 holds the loader's link and,
  on Fedora and RHEL, the libraries), /usr/libexec/gcc (gcc's own programs on Fedora and RHEL),
  /usr/include (the system headers); /bin, /lib and /lib64 (links into /usr, or the folders
  themselves where /usr is not merged);
- the lab's own files: the spliced source and the manifest's include folders (`common/include`);
- a writable scratch folder (its working folder), its own empty /tmp, /dev and /proc;
- /etc: the loader's files alone (minimal_etc.py): no tool of a compile reads another or looks a
  user up (measured with strace: nvcc 13, gcc 12, LC_ALL=C).

Nothing else: not /usr/local (other toolkits, anything put there; the toolkit is bound by its own
path), /usr/share (documentation and message catalogues, which LC_ALL=C never opens), /usr/src,
/usr/sbin, /opt, /sys, /home, /root, /var, /srv or the machine's /tmp. A file a compiler or assembler
was asked for and did not find, or was refused, is named back to the student with the rule
(`outside_view`), and the grader flags it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..sandbox.bubblewrap import Sandbox, View

COMPILE_SYSTEM_FOLDERS = ("/bin", "/lib", "/lib64", "/usr/bin", "/usr/lib", "/usr/lib64", "/usr/libexec/gcc",
                          "/usr/include")
# gcc's default search path that the view leaves out: a header found there on the machine is outside.
DROPPED_SEARCH_FOLDERS = (Path("/usr/local/include"),)
DOC = "docs/grading-security.md, 'The compile's view'"
RULE = "the compile sees only the toolkit, the compiler's system folders, the lab's own files and a minimal /etc"
MAX_NAME_CHARS = 160
MAX_NAMES = 5

# What each tool says of a file it was asked to read and could not: gcc's preprocessor (#include,
# #include_next, #pragma GCC dependency; #embed in gcc 15), clang's, the EDG front end's (cudafe++,
# cicc: nvcc preprocesses with the host compiler first, so only where the front end preprocesses
# itself), GNU as (.incbin, .include). ptxas has no directive that reads a file (`.incbin` in device
# code is a PTX syntax error), and nvcc's own "Could not open input file" names only the grader's
# arguments.
_MISSING = (
    re.compile(r"(?:fatal )?error: (?P<name>.+?): (?:No such file or directory|Permission denied)\s*$"),
    re.compile(r"(?:fatal )?error: '(?P<name>.+?)' file not found\s*$"),
    re.compile(r"catastrophic error: cannot open source file \"(?P<name>.+?)\"\s*$"),
    re.compile(r"Error: file not found: (?P<name>.+?)\s*$"),
    re.compile(r"Error: can't open (?P<name>.+?) for reading: (?:No such file or directory|Permission denied)\s*$"),
)
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def compile_view(toolkit: Path, source: Path, include_dirs: Iterable[str], scratch: Path,
                 hidden: tuple[Path, ...]) -> View:
    """The view of every compile of a lab file (the graded one, the include-tree one, the CCCL probe)."""
    return View(read_only=(source.resolve(), *map(Path, include_dirs), toolkit), writable=(scratch,), cwd=scratch,
                hidden=hidden, etc="loader", system=COMPILE_SYSTEM_FOLDERS)


def printable(name: str) -> str:
    """A path as the student wrote it, safe to quote: printable ASCII only, at most MAX_NAME_CHARS."""
    name = _UNPRINTABLE.sub("?", name)
    return name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS - 3] + "..."


def missing_files(output: str) -> list[str]:
    """The files the compiler's `output` says it could not read, as it names them, each once."""
    found: list[str] = []
    for line in output.splitlines():
        match = next((m for m in (pattern.search(line) for pattern in _MISSING) if m), None)
        if match and match.group("name") not in found:
            found.append(match.group("name"))
    return found


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _deepest(path: Path, entries: Iterable[tuple[Path, bool]]) -> bool:
    """The flag of the deepest entry that holds `path` (False when none does): the sandbox mounts the
    deeper over the shallower, and does not mask a path its view shows."""
    holding = [(len(folder.parts), shown) for folder, shown in entries if _within(path, folder)]
    return max(holding, default=(0, False))[1]


class Seen:
    """Whether a path is in a view as the sandbox shows it: where one of its mounts shows it (the
    system folders and the view's paths where they are, the minimal /etc's files from where the
    grader keeps them), followed through links as the machine resolves them, and not hidden."""

    def __init__(self, view: View, sandbox: Sandbox):
        system = [(Path(folder), Path(folder)) for folder in view.system if os.path.lexists(folder)]
        shown = [(Path(os.path.realpath(path)),) * 2 for path in (*view.read_only, *view.writable)]
        etc = list(sandbox.etc.seen(view.etc)) if view.etc != "full" else [(Path("/etc"), Path("/etc"))]
        self.mounts = [*system, *shown, *((inside, source) for source, inside in etc)]   # (in the sandbox, on the machine)
        self.entries = [*((Path(os.path.realpath(machine)), True) for _, machine in self.mounts),
                        *((Path(os.path.realpath(path)), False) for path in (*sandbox.hidden, *view.hidden,
                                                                              *sandbox.denied))]

    def __call__(self, path: Path) -> bool:
        lexical = Path(os.path.normpath(path))
        holding = [(inside, machine) for inside, machine in self.mounts if _within(lexical, inside)]
        if not holding:
            return False
        inside, machine = max(holding, key=lambda mount: len(mount[0].parts))
        return _deepest(Path(os.path.realpath(machine / lexical.relative_to(inside))), self.entries)


def outside_view(names: Iterable[str], seen: Seen, bases: Iterable[Path]) -> tuple[str, ...]:
    """The names (as the compiler printed them) of files outside the view: an absolute path it does
    not show; a relative one that climbs (`..`) out of a folder it was looked for in, or that names a
    file the machine has there and the view does not show. A plain missing header is none of these."""
    bases = tuple(bases) + DROPPED_SEARCH_FOLDERS
    outside = []
    for name in names:
        path = Path(name)
        if path.is_absolute():
            reached = not seen(path)
        else:
            candidates = [base / path for base in bases]
            reached = any(not seen(candidate) and (".." in path.parts or os.path.lexists(candidate))
                          for candidate in candidates)
        if reached and printable(name) not in outside:
            outside.append(printable(name))
    return tuple(outside[:MAX_NAMES])


def rule_sentence(outside: tuple[str, ...]) -> str:
    """The grader's words for a compile that reached outside its view (the names are the student's text)."""
    names = ", ".join(f'"{name}"' for name in outside)
    return f"{RULE}: {names} {'is' if len(outside) == 1 else 'are'} outside it ({DOC})"
