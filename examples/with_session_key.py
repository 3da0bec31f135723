#!/usr/bin/env python3
"""Runs a command (the grader) in a new session keyring holding one key, as a grading machine's
session (a login's, a container's) may hold keys, for the attack class to look for.

    REDUCTION_KEY_SECRET=VALUE python3 examples/with_session_key.py -- COMMAND [ARG...]

The key is a "user" key named reduction-labs-grader-key whose value is REDUCTION_KEY_SECRET, with
the kernel's default permissions (its possessor may read it: every process of that session);
examples/check_class.py then checks that no report holds the value. Where the kernel refuses the
keyring (no support, or a container's seccomp profile) it says so and runs the command anyway: no
run can read a key that is not there. Standard library only (and grading/grader/sandbox/keyrings.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "grading"))
from grader.sandbox.keyrings import add_key, join_new_session_keyring  # noqa: E402  (one definition)

KEY_NAME = "reduction-labs-grader-key"


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--" or len(argv) < 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    value = os.environ.get("REDUCTION_KEY_SECRET", "")
    if not value:
        print("with_session_key.py: REDUCTION_KEY_SECRET is empty: no key", file=sys.stderr)
    elif not join_new_session_keyring():
        print("with_session_key.py: the kernel refuses a session keyring here: no key", file=sys.stderr)
    else:
        try:
            add_key(KEY_NAME, value.encode())
        except OSError as exc:
            print(f"with_session_key.py: no key: {exc}", file=sys.stderr)
    os.execvp(argv[1], argv[1:])
    return 127   # not reached: execvp raises OSError when it fails


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
