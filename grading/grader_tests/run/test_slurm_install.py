"""slurm_cluster.sh (CTest grader.slurm) where Slurm is missing: it installs slurm-wlm and munge,
skips (the skip code of grading/contract.json, the reason on a SKIPPED: line) where they cannot be
had, and fails where a mirror answers and apt-get still cannot install them. Run against a stub apt-get on a PATH without Slurm,
so the answer does not depend on this machine's network or packages; nothing is installed."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.contract import SKIP_CODE
from grader_tests.helpers import GRADING

SCRIPT = GRADING / "grader_tests" / "slurm_cluster.sh"
SKIPPED = SKIP_CODE
TOOLS = ("id", "dirname", "grep", "tr", "tail", "head", "cat")   # what the script uses before it installs

OFFLINE_UPDATE = """Err:1 http://deb.debian.org/debian bookworm InRelease
  Temporary failure resolving 'deb.debian.org'
Reading package lists...
W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'
W: Some index files failed to download. They have been ignored, or old ones used instead.
"""
ONLINE_UPDATE = """Hit:1 http://deb.debian.org/debian bookworm InRelease
Reading package lists...
"""


class ScriptCase(unittest.TestCase):
    """A PATH of a few real tools, without Slurm; apt-get is what a test makes it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = Path(self.tmp.name) / "bin"
        self.bin.mkdir()
        for tool in TOOLS:
            found = shutil.which(tool)
            if found is None:
                self.skipTest(f"{tool} is not installed")
            (self.bin / tool).symlink_to(found)
        self.log = Path(self.tmp.name) / "apt-get.log"

    def tearDown(self):
        self.tmp.cleanup()

    def stub_apt_get(self, update: str, update_status: int = 0, simulate: str = "", simulate_status: int = 0):
        """An apt-get that answers `update` and `install --simulate` as given, logs every call, and
        refuses a real install (the test must never get that far)."""
        (self.bin / "update.txt").write_text(update, encoding="utf-8")
        (self.bin / "simulate.txt").write_text(simulate, encoding="utf-8")
        script = self.bin / "apt-get"
        script.write_text(f"""#!{shutil.which('bash')}
echo "$*" >>{self.log}
case "$*" in
  update*) cat {self.bin}/update.txt; exit {update_status} ;;
  *--simulate*) cat {self.bin}/simulate.txt; exit {simulate_status} ;;
  *) echo "E: the test's apt-get installs nothing"; exit 100 ;;
esac
""", encoding="utf-8")
        script.chmod(0o755)

    def run_script(self) -> subprocess.CompletedProcess:
        env = {"PATH": str(self.bin), "LANG": "C.UTF-8", "HOME": self.tmp.name}
        return subprocess.run([shutil.which("bash"), str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)

    def assert_skipped(self, result, reason: str):
        self.assertEqual(result.returncode, SKIPPED, result.stdout + result.stderr)
        self.assertTrue(result.stdout.startswith("SKIPPED: ") or "\nSKIPPED: " in result.stdout, result.stdout)
        self.assertIn(reason, result.stdout)

    def assert_failed(self, result, message: str):
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn(message, result.stdout)
        self.assertNotIn("install -y", self.log.read_text() if self.log.exists() else "")



@unittest.skipIf(os.geteuid() == 0, "as root the script goes on to its install decision (InstallDecisionAsRoot)")
class WithoutRoot(ScriptCase):
    def test_it_is_skipped_before_anything_is_installed(self):
        self.stub_apt_get(ONLINE_UPDATE)
        self.assert_skipped(self.run_script(), "needs root")
        self.assertFalse(self.log.exists())


@unittest.skipUnless(os.geteuid() == 0, "the install decision comes after the root check: run as root to test it")
class InstallDecisionAsRoot(ScriptCase):
    def test_without_apt_get_it_is_skipped(self):
        self.assert_skipped(self.run_script(), "there is no apt-get")

    def test_without_a_reachable_mirror_it_is_skipped_with_apt_gets_words(self):
        self.stub_apt_get(OFFLINE_UPDATE)
        result = self.run_script()
        self.assert_skipped(result, "no package mirror answered apt-get update")
        self.assertIn("Temporary failure resolving", result.stdout)
        self.assertEqual(self.log.read_text().splitlines()[0].split()[0], "update")
        self.assertEqual(len(self.log.read_text().splitlines()), 1, "nothing is tried after the update")

    def test_a_failed_update_that_is_not_the_network_fails(self):
        self.stub_apt_get("E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)\n",
                          update_status=100)
        self.assert_failed(self.run_script(), "apt-get update failed")

    def test_packages_no_source_offers_are_skipped(self):
        self.stub_apt_get(ONLINE_UPDATE, simulate="E: Unable to locate package slurm-wlm\n", simulate_status=100)
        self.assert_skipped(self.run_script(), "no package source offers them (E: Unable to locate package slurm-wlm)")

    def test_an_install_apt_cannot_plan_with_a_mirror_answering_fails(self):
        self.stub_apt_get(ONLINE_UPDATE, simulate="E: Unable to correct problems, you have held broken packages.\n",
                          simulate_status=100)
        self.assert_failed(self.run_script(), "apt-get cannot install slurm-wlm and munge")


if __name__ == "__main__":
    unittest.main()
