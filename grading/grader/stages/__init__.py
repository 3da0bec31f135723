"""The grading pipeline, one stage a file: what happens to one student's record, in order.

    compile -> test -> sanitize -> time          (each: run(who, record, work), the record saved after it;
                                                   the host lab's timing begins beside sanitize: Time.begin)
    score                                         (points from the verdicts, hazards and ratios)

`PIPELINE` declares the order; engine.Grader schedules the students and runs each through it. A
stage reads the run's context (policy, toolchain, plans, gates) from the grader it is made with,
and writes only the student's record; `runs.Runs` is where a run waits for its turn on the cores
or the GPU, and runs again alone after a failure a classmate may have caused.
"""

from .compile import Compile
from .run_tests import Test
from .sanitize import Sanitize
from .score import Score
from .timing import Time

PIPELINE = (Compile, Test, Sanitize, Time)   # then Score, which also carries over labs not graded now

__all__ = ["PIPELINE", "Compile", "Test", "Sanitize", "Time", "Score"]
