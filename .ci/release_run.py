#!/usr/bin/env python3
"""CI: the release's commands work in a release. Builds a student release without the compiled
references (release.py --no-modules) in a temporary folder and runs each command of the first bash
block of its README.md there, as a student would on day one. A command passes when it exits 0, or
when the only tests that failed are unstarted labs saying "not implemented yet" (a fresh release's
labs are skeletons; without a GPU only lab 01 runs, the rest skip). Then every other command the
release's texts quote is checked in that built release, as far as a machine without a GPU can
(.ci/release_commands.py: presets, scripts, programs, their options, the tests they select).

    python3 .ci/release_run.py
"""
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from release_commands import check_release, report  # noqa: E402
FAILED_TEST = re.compile(r"^\s*\d+ - (\S+) \(Failed\)", re.MULTILINE)


def readme_commands(readme: Path) -> list[str]:
    """The lines of the README's first ```bash block."""
    block = re.search(r"```bash\n(.*?)```", readme.read_text(encoding="utf-8"), re.DOTALL)
    if block is None:
        raise SystemExit(f"release_run: {readme} has no ```bash block")
    return [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def only_unstarted_labs_failed(output: str) -> tuple[bool, str]:
    failed = FAILED_TEST.findall(output)
    if not failed:
        return False, "it failed before any test failed"
    for test in failed:
        match = re.fullmatch(r"lab(\d\d)", test)
        if match is None or f"lab {match.group(1)}: not implemented yet (" not in output:
            return False, f"{test} failed, and not as an unstarted lab"
    return True, f"only unstarted labs failed ({', '.join(failed)}: not implemented yet)"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="reduction-release-") as tmp:
        release = Path(tmp) / "release"
        subprocess.run([sys.executable, str(REPO / "grading" / "release.py"), "--no-modules", "--out", str(release)],
                       check=True)
        for command in readme_commands(release / "README.md"):
            began = time.monotonic()
            print(f"release_run: $ {command}", flush=True)
            run = subprocess.run(["bash", "-c", command], cwd=release, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            print(run.stdout, flush=True)
            print(f"release_run: it took {time.monotonic() - began:.0f} s", flush=True)
            if run.returncode != 0:
                ok, why = only_unstarted_labs_failed(run.stdout)
                print(f"release_run: exit {run.returncode}: {why}")
                if not ok:
                    return 1
        print("release_run: every README command ran in the release as a student would run it", flush=True)
        began = time.monotonic()
        verdicts = check_release(release)
        print(f"release_run: checking the quoted commands took {time.monotonic() - began:.0f} s", flush=True)
        return report(verdicts, "release_run")


if __name__ == "__main__":
    sys.exit(main())
