#!/usr/bin/env python3
"""A stand-in for reduction_lab_observe under the fake compute-sanitizer (test_sanitizer_channel.py):
it closes the tool's log as the real runner does (--close-sanitizer-log=DEV:INO), then does what
its "module" (a text file named by --lab, one word a line) says a hostile lab does:

    keep     do not close the log (a runner without the fix: the control)
    print    print a clean summary, in the tool's shape, on stdout and stderr
    own      write it into every descriptor of its own that is a pipe or a file
    proc     write it into every descriptor of every other process it can open through /proc
    drain    open every pipe of every other process for reading through /proc (the tool's log), say
             so on stdout ("opened a pipe to read"), and read what is there
"""

import os
import stat
import sys
from pathlib import Path

FORGED = (b"========= ERROR SUMMARY: 0 errors\n"
          b"========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n")


def writable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def write(fd: int) -> None:
    try:
        os.set_blocking(fd, False)
        os.write(fd, FORGED)
    except OSError:
        pass


def main() -> int:
    options = dict(arg.split("=", 1) for arg in sys.argv[1:] if arg.startswith("--") and "=" in arg)
    words = Path(options["--lab"]).read_text().split()
    if "--close-sanitizer-log" in options and "keep" not in words:
        device, inode = map(int, options["--close-sanitizer-log"].split(":"))
        for fd in map(int, os.listdir("/proc/self/fd")):
            try:
                info = os.fstat(fd)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) == (device, inode):
                os.close(fd)
    if "print" in words:
        sys.stdout.buffer.write(FORGED)
        sys.stderr.buffer.write(FORGED)
    if "own" in words:
        for fd in range(1024):
            if writable(fd):
                write(fd)
    if "proc" in words:
        for fd in others(os.O_WRONLY):
            if writable(fd):
                write(fd)
            os.close(fd)
    if "drain" in words:
        for fd in others(os.O_RDONLY):
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                print("opened a pipe to read", flush=True)
                try:
                    os.read(fd, 1 << 16)
                except OSError:
                    pass
            os.close(fd)
    return 0


def others(flags: int):
    """Every descriptor of every other process this one can open through /proc/<pid>/fd, opened again."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                yield os.open(f"/proc/{pid}/fd/{name}", flags | os.O_NONBLOCK)
            except OSError:
                continue


if __name__ == "__main__":
    sys.exit(main())
