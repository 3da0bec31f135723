"""A grading that seems stuck says where its threads are: SIGUSR1 prints every thread's stack on the
process's stderr, and the process goes on (cli._stacks_on_usr1)."""

import subprocess
import sys
import unittest

from grader_tests.helpers import GRADING

PROGRAM = """
import os, signal, sys, threading, time
sys.path.insert(0, sys.argv[1])
from grader import cli
cli._stacks_on_usr1()
waiting = threading.Event()
threading.Thread(target=waiting.wait, name="a-waiting-thread", daemon=True).start()
os.kill(os.getpid(), signal.SIGUSR1)
time.sleep(0.2)
print("still running")
"""


class StacksOnSignalTest(unittest.TestCase):
    def test_sigusr1_prints_every_threads_stack_and_the_process_goes_on(self):
        result = subprocess.run([sys.executable, "-c", PROGRAM, str(GRADING)], capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "still running")
        self.assertIn("Current thread", result.stderr)
        self.assertGreaterEqual(result.stderr.count("hread 0x"), 2, result.stderr)   # the waiting one too
        self.assertIn("in wait", result.stderr)


if __name__ == "__main__":
    unittest.main()
