"""reduction-labs grader: grades student submissions by running the C++ test runner, compute-sanitizer
and the benchmark as subprocesses (student code never runs inside the grader). Standard library only.

Entry point: grading/grade.py (cli.py). A run, top to bottom (grading/README.md draws it):

    run/       the job (job.py) and the launchers that run it: local, --gpus, --slurm; the console
    stages/    the pipeline: compile, test, sanitize, time, score, and the scheduler (engine.py)
    report/    the class outputs rebuilt from the records: gradebook, timings, JUnit, Gradescope, site/
    judge/     what the grader decides from what it saw: checker reports, verdicts, findings, points
    outputs/   the signed per-student record (record_store.py), the progress events, file names
    sandbox/   where student code runs: bubblewrap, seccomp, uids, CPU shares, subprocesses
    policy.py, settings.py, manifest.py, contract.py, paths.py: what a run reads

Each folder imports only the folders below it.
"""
