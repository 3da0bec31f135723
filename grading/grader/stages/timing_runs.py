"""The timing runs of the real tools (for toolchain.py): one run of a timing plan, a host lab's
paired run, and the checker's timing plans.

Every timing run goes in its part's timing group of the CPU share (cpu_share.py: the host part's,
or the device part's where a second core is kept), whose cpuset is a core no student's run may use,
under the trusted timekeeper (a sandboxed student worker is started by
the timekeeper, outside the sandbox); a paired run also gives the timekeeper the reference's worker
and the freezer of the student's. Kept apart from toolchain.py, which runs the compiles, tests and
sanitizer runs: these have a cgroup, a core and a clock of their own.

TimingRuns is not used alone: it is Toolchain's base class, and runs through the toolchain's
`_sandboxed`, `_check`, `_run_view` and `_trusted`, with its `manifest`, `sandbox` and `cpu_share`.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..contract import (CLOCK_OUT_FD_FLAG, PAIR_FREEZE_FLAG, PAIR_OUT_FD_FLAG, PAIR_PLAN_FLAG, PAIR_TOKEN_FD_FLAG,
                        PAIR_WORKER_CGROUP_FLAG, PAIR_WORKER_FLAG, TOKEN_FD_FLAG)
from ..judge.checks import TimingCheck, parse_timing_check
from ..sandbox.cpu_share import DEVICE_TIMING, TIMING
from ..sandbox.process import Channel, Token, pinned, run_process
from ..sandbox.process import ProcessResult


@dataclass
class TimingRun:
    """A timing run and the checker's word on what it reported."""
    process: ProcessResult
    check: TimingCheck | None
    problem: str = ""   # why there is no check (the checker failed: a grader problem)


class TimingRuns:
    """The timing steps of Toolchain (its base class; see the module's docstring)."""

    @staticmethod
    def _plan_file(plan_text: str, work: Path) -> Path:
        work.mkdir(parents=True, exist_ok=True)
        plan = Path(tempfile.mkstemp(dir=work, prefix="timing-", suffix=".plan")[1])
        plan.write_text(plan_text, encoding="utf-8")
        os.chmod(plan, 0o644)
        return plan

    def _timing_run(self, plan: Path, run: ProcessResult, cache: Path | None, report: str | None = None,
                    token: str | None = None) -> TimingRun:
        checked = self._check("timing", plan, run, f"--reference-dir={self.manifest.reference_dir}",
                              *([f"--cache={cache}"] if cache else []), report=report, token=token)
        try:
            return TimingRun(run, parse_timing_check(checked.stdout))
        except ValueError as exc:
            return TimingRun(run, None, f"the timing check failed: {exc}; {checked.stderr.strip()[-300:]}")

    def time(self, plan_text: str, work: Path, sandboxed: bool, readable: tuple[Path, ...], gpu: bool,
             timeout: float, call_timeout: float, cache: Path | None = None, on_ended=None) -> TimingRun:
        """One timing run of a plan (written by the checker's `timing-plan`), then its check. The
        student's modules run sandboxed; references and baselines run trusted. `on_ended()` is
        called once the run's processes have ended, before the check (the check needs no GPU: a
        class's timing turn may end there, benchmark.py)."""
        plan = self._plan_file(plan_text, work)
        # Every timing run is in its part's timing group, whose cpuset is a core no student's run may use,
        # and pinned to it (cpu_share.py's timing_cpu): the same core for the references and the student.
        cpu = self.cpu_share.timing_cpu(host=not gpu)
        group = DEVICE_TIMING if gpu else TIMING
        with Channel() as channel:
            worker = [str(self.manifest.student_worker if sandboxed else self.manifest.time_worker), f"--plan={plan}",
                      f"{TOKEN_FD_FLAG}={channel.token_fd}"]
            clock = [str(self.manifest.timekeeper), f"--plan={plan}", f"{CLOCK_OUT_FD_FLAG}={channel.write_fd}", "--"]
            if sandboxed:  # the worker built without CUB: no library reduction in reach of the student's code
                view = self._run_view((self.manifest.student_worker, plan, *readable), gpu)
                run = self._sandboxed(worker, view, timeout, stall_s=call_timeout + 30, channel=channel, cpu=cpu,
                                      group=group, clock=clock)
            else:
                run = run_process(clock + worker, timeout, stall_s=call_timeout + 30, channel=channel,
                                  preexec=self.cpu_share.preexec(group, pinned(None, cpu)))
        if on_ended is not None:
            on_ended()
        timed = self._timing_run(plan, run, cache)
        plan.unlink()
        return timed

    @property
    def pairs_host_timing(self) -> bool:
        """Whether host items are timed paired (time_paired): the sandbox, and a freezer for the student."""
        return self.sandbox.enabled and self.cpu_share.paired is not None

    def pairing_status(self) -> str:
        if not self.sandbox.enabled:
            return "host labs timed run by run: no sandbox"
        paired = self.cpu_share.paired
        return ("host labs timed paired, call by call, the student's worker frozen during the reference's calls"
                if paired else f"host labs timed run by run: {self.cpu_share.paired_why_not}")

    def time_paired(self, plan_text: str, reference_plan_text: str, work: Path, readable: tuple[Path, ...],
                    timeout: float, call_timeout: float, cache: Path | None = None) -> tuple[TimingRun, TimingRun]:
        """One paired run of host items (timekeeper_main.cpp, contract.json "pair"): the student's worker
        sandboxed in the paired cgroup, the trusted reference worker beside it, call by call; the
        student's and the reference's timing runs, each checked as time()'s."""
        paired = self.cpu_share.paired
        plan, reference_plan = self._plan_file(plan_text, work), self._plan_file(reference_plan_text, work)
        with Channel() as channel, Token() as reference_token, tempfile.TemporaryFile(dir=work) as transcript:
            worker = [str(self.manifest.student_worker), f"--plan={plan}", f"{TOKEN_FD_FLAG}={channel.token_fd}"]
            clock = [str(self.manifest.timekeeper), f"--plan={plan}", f"{CLOCK_OUT_FD_FLAG}={channel.write_fd}",
                     f"{PAIR_WORKER_FLAG}={self.manifest.time_worker}", f"{PAIR_PLAN_FLAG}={reference_plan}",
                     f"{PAIR_OUT_FD_FLAG}={transcript.fileno()}", f"{PAIR_TOKEN_FD_FLAG}={reference_token.fd}",
                     f"{PAIR_FREEZE_FLAG}={paired.freeze}",
                     *[f"{PAIR_WORKER_CGROUP_FLAG}={folder}" for folder in paired.folders], "--"]
            view = self._run_view((self.manifest.student_worker, plan, *readable), False)
            try:
                run = self._sandboxed(worker, view, timeout, stall_s=2 * call_timeout + 30, channel=channel,
                                      cpu=self.cpu_share.timing_cpu(host=True), group=TIMING, clock=clock,
                                      clock_fds=(transcript.fileno(), reference_token.fd))
            finally:
                self.cpu_share.thaw_paired()   # a timekeeper killed mid-freeze leaves the student's frozen
            transcript.seek(0)
            reference_report = transcript.read().decode("utf-8", errors="replace")
        timed = self._timing_run(plan, run, cache)
        reference = self._timing_run(reference_plan, run, cache, report=reference_report, token=reference_token.token)
        plan.unlink()
        reference_plan.unlink()
        return timed, reference

    def timing_plan(self, seed: int, items: list[str], samples: int, warmup: int, call_timeout: float,
                    min_samples: int = 0, budget_ms: float = 0.0) -> str:
        """The checker writes a timing plan; `items` are "id,lab,where,type,n[,module]". An item ends
        after `min_samples` timed calls once they took `budget_ms` (0: every item its `samples`)."""
        argv = [str(self.manifest.checker), "timing-plan", f"--seed={seed}", f"--samples={samples}",
                f"--warmup={warmup}", f"--call-timeout={call_timeout:g}", f"--min-samples={min_samples or samples}",
                f"--budget-ms={budget_ms:g}", "--items=" + ";".join(items)]
        result = self._trusted(argv)
        if result.returncode != 0:
            raise RuntimeError(f"the checker could not write a timing plan: {result.stderr.strip()}")
        return result.stdout
