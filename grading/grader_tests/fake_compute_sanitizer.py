#!/usr/bin/env python3
"""A stand-in for compute-sanitizer in the grader's tests (test_sanitizer_channel.py), where there
is no GPU and no compute-sanitizer: it behaves as the real one does with --log-file, in the shape
of the real one's lines (grader_tests/fixtures/*.txt).

    compute-sanitizer --tool T --error-exitcode N --log-file PATH [...] PROGRAM [ARGS...]

It opens PATH, writes its banner there, runs PROGRAM as its child, waits, then writes its report
and summary there and ends with 0 or N. Its copy of the log is left inheritable, so the program
inherits it as well as the descriptor PATH names: the worst case the runner must close.

What it reports comes from fake-sanitizer.json in the folder above its own (the sandbox shows that
folder: the toolchain binds the tool's home), not from its environment (the sandbox's whitelist
drops other variables): {"hazards": 2, "summary": "one" | "none" | "two", "after": "<lines written
after the summary>", "status": <exit status, or null for what the summary says>}.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

PREFIX = "========="


def parse(argv: list[str]) -> tuple[dict, list[str]]:
    options, i = {}, 0
    while i < len(argv) and argv[i].startswith("--"):
        options[argv[i]] = argv[i + 1]
        i += 2
    return options, argv[i:]


def summary(tool: str, errors: int) -> str:
    if tool == "racecheck":
        return f"{PREFIX} RACECHECK SUMMARY: {errors} hazards displayed ({errors} errors, 0 warnings)\n"
    return f"{PREFIX} ERROR SUMMARY: {errors} errors\n"


def report(tool: str, hazards: int) -> str:
    line = (f"{PREFIX} Error: Race reported between Write access at f in last_warp.cu:31\n"
            if tool == "racecheck" else f"{PREFIX} Invalid __global__ read of size 4 bytes\n")
    return (line + f"{PREFIX}     at f in last_warp.cu:31\n{PREFIX}\n") * hazards


def main() -> int:
    options, program = parse(sys.argv[1:])
    tool, exitcode = options.get("--tool", "memcheck"), int(options.get("--error-exitcode", "0"))
    behaviour = json.loads((Path(__file__).resolve().parent.parent / "fake-sanitizer.json").read_text())
    log = os.open(options["--log-file"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.set_inheritable(log, True)
    os.write(log, f"{PREFIX} COMPUTE-SANITIZER\n".encode())
    status = subprocess.run(program, close_fds=False).returncode
    hazards = int(behaviour.get("hazards", 0)) + (1 if status else 0)   # --check-exit-code: a failed program is one
    text = report(tool, int(behaviour.get("hazards", 0)))
    if status:
        text += f"{PREFIX} Error: process didn't terminate successfully\n"
    shape = behaviour.get("summary", "one")
    text += {"one": summary(tool, hazards), "none": "", "two": summary(tool, 0) + summary(tool, hazards)}[shape]
    os.write(log, (text + behaviour.get("after", "")).encode())
    if behaviour.get("status") is not None:
        return int(behaviour["status"])
    return status or (exitcode if hazards else 0)


if __name__ == "__main__":
    sys.exit(main())
