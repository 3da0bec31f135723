"""The attack class: hostile submissions, each with the verdicts and points it must get.

Student code is hostile and knows this repository (issue 10). Each attacker below hands in only
the labs it attacks (every other lab is MISSING, so grading stays fast), with a STUDENT CODE
region written by hand in examples/attacks/regions/<attacker>/<lab folder>.<ext>, sometimes
after the reference solution's region (`region="reference+own"`: the solution's `reduce_sum`
renamed `honest_reduce_sum`, so the attack wraps a correct, fast sum). Layout attacks are links
and odd names, made by make_examples.py. Two honest classmates ("victims", the reference
regions of labs 01, 02 and 10) are graded before and after the attackers; their records must
come out as if the attackers did not exist.

`kind` says where an attacker is graded: "cpu" when every lab it hands in is decided without a
GPU (lab 01 is host code; compile errors and missing files are decided before anything runs),
"gpu" otherwise. Without a GPU, a GPU lab that compiles must be NOT_RUN (blank, never points).

`items` are the numbers of the attack list this class covers (ATTACK_ITEMS, from issue 10's
list of what hostile students did and the brief that asked for this class).

    python3 examples/make_examples.py --class attacks --out build/classes/attacks
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.judge.compile_view import RULE as OUTSIDE_VIEW  # the importer (make_examples.py) puts grading/ on sys.path

FULL = "full"   # all of the lab's points of that kind (from grading/policy.toml)
ANY = "any"     # anything from 0 to all of them


@dataclass(frozen=True)
class Without:
    """Anything from 0 to all of the lab's points but these sanitizer tools' shares ([sanitizer.penalty]):
    what a lab whose hazards these tools must report may keep."""
    tools: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    """One acceptable result for a lab: a verdict and its correctness and performance points
    (FULL, ANY or a number), words its detail must hold when the reason is to be named, and the
    integrity flags (grading/grader/judge/flags.py) of which the record must hold one for the lab when
    the grader must have seen the attack, not only given no points."""
    verdict: str
    correctness: str | float | Without = 0
    performance: str | float | Without = 0
    names: str = ""   # "" for any detail
    flags: tuple[str, ...] = ()   # () for no flag needed; else one of these kinds, for this lab


def passed(performance: str | float = FULL, flags: tuple[str, ...] = ()) -> tuple[Outcome, ...]:
    return (Outcome("PASSED", FULL, performance, flags=flags),)


# A timing the grader refused, as flagged: its own clock contradicts the times, a timed call returned
# a wrong sum (or the run's report was unusable), or the time is below the read roof.
CLOCK_REFUSED = ("time_contradicted", "time_unverified")
TIME_REFUSED = CLOCK_REFUSED + ("time_impossible",)


def zero(*verdicts: str, names: str = "") -> tuple[Outcome, ...]:
    """Any of these verdicts, with no points at all (and a detail holding `names`)."""
    return tuple(Outcome(verdict, names=names) for verdict in verdicts)


MISSING = zero("MISSING")


@dataclass(frozen=True)
class HandIn:
    """What an attacker hands in for one lab, and the outcomes it may get (the first is the one
    the grader should give; the others are also sound, e.g. a run the sandbox had to kill)."""
    outcomes: tuple[Outcome, ...]
    why: str
    region: str = "own"          # "own", "reference" or "reference+own" (see the module doc)
    link: str | None = None      # the lab file is a symbolic link to this ({repo}: the repository)
    folder_link: str | None = None  # the lab folder is a symbolic link to this
    needs_library: bool = False  # compiles with nvcc as it is (a student's own build), but the grader refuses it by
                                 # the library reduction's header it includes (grading/grader/judge/libraries.py)
    edits: tuple[tuple[str, str], ...] = ()  # region "reference": (regex, replacement) edits of the solution's
                                             # region, each must match (as the example class's Planted edits)
    reaches_outside: bool = False  # names files no compile of the grader sees (grading/grader/judge/compile_view.py): a
                                   # student's own build compiles it where they exist, the grader's never does


@dataclass
class Attacker:
    kind: str                     # "cpu", "gpu" or "victim"
    items: tuple[int, ...]        # ATTACK_ITEMS covered
    attack: str                   # what it tries, one sentence
    labs: dict[str, HandIn] = field(default_factory=dict)
    folder: str | None = None     # the student folder's name, when it is not the attacker's id
    folder_link: str | None = None  # the student folder is a symbolic link to this classmate's folder
    extra_files: dict[str, str] = field(default_factory=dict)  # path -> text, beside the lab files
    refused: str = ""             # the grader must refuse the folder (no record, no gradebook row), listing it
                                  # in refused-folders.json with a reason that holds these words


ATTACK_ITEMS = {
    1: "forged success markers / observations, exit 0 before doing work",
    2: "writes into records, the output folder, a phantom record, its own forged record; kills the grader",
    3: "leaves processes running (daemon, GPU hog), fork bomb",
    4: "#includes, embeds (.incbin) or reads the solution, a classmate, the environment, /etc/passwd into its "
       "report; calls the library reduction (CUB) the course times against",
    5: "dlopens the reference module and calls it",
    6: "caches results per input pointer or per n",
    7: "detects the benchmark, escapes the timed stream, rewrites timings, swaps its module",
    8: "switches the watchdog off through the environment, then hangs",
    9: "redefines the lab's identity or float error depth after its region",
    10: "exit status 77 or 0 from a host lab; a GPU lab that passes only on a machine without a GPU",
    11: "floods stdout/stderr, fills its scratch, takes all host memory",
    12: "replaces the test runner or build-tree binaries",
    13: "a student folder or lab file that is a symbolic link",
    14: "CSV/formula injection through the student folder name",
    15: "opens the network and exfiltrates",
    16: "prints, as honest students do: a banner without a newline, device printf, text shaped like the "
        "runner's report, terminal escapes",
    17: "calls a library at run time (dlopen of cuBLAS and the like)",
    18: "holds a resource its classmates share: GPU memory, the process table",
    19: "reaches the other GPUs of the host",
    20: "forges on the runner's report channel, or rewrites its results after the report ends",
    21: "student folder names that a file-name mapping could merge",
    22: "writes past the scratch it was handed (temp_storage_bytes), into the harness's memory",
    23: "markup in its folder name and printed output, for the class report (a web page) to run",
    24: "passes answers to a classmate through the kernel keyring; reads the grader's session keyring into its "
        "report",
    25: "any UTF-8 folder name: accents and spaces, CJK, an e-mail address, one too long for its %XX file name; "
        "and names no output can hold as they are (a control character, a bidirectional override)",
    26: "forges compute-sanitizer's report: prints a clean summary, writes one into every descriptor it has "
        "and into the tool's log through /proc",
    27: "times from inside the timing worker: rewrites its own clock, or works outside the timed window on inputs "
        "it predicts",
}

HOST = "01_host_sum"
# A region sits inside the skeleton's anonymous namespace: an #include closes it and reopens it.
_CLOSE, _REOPEN = "}  // namespace\n", "namespace {\n"
_CG = _CLOSE + "#include <cooperative_groups.h>\n" + _REOPEN + "namespace cg = cooperative_groups;\n\n"
_CG_BY_HAND = ((r"\A", _CG), (r"__syncthreads\(\);", "cg::this_thread_block().sync();"),
               (r"__shfl_down_sync\(kFullWarp, value, offset\)",
                "cg::tiled_partition<kWarpThreads>(cg::this_thread_block()).shfl_down(value, offset)"))
_CG_REDUCE = ((r"\A", _CLOSE + "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n" + _REOPEN
               + "namespace cg = cooperative_groups;\n\n"),
              (r"#pragma unroll\n  for \(int offset = kWarpThreads / 2; offset > 0; offset /= 2\)\n"
               r"    value \+= __shfl_down_sync\(kFullWarp, value, offset\);\n  return value;",
               "  return cg::reduce(cg::tiled_partition<kWarpThreads>(cg::this_thread_block()), value, cg::plus<T>());"))
REFERENCE = HandIn(passed(), "the reference region", region="reference")
_CRASHED = ("RUNTIME_ERROR", "WRONG_ANSWER", "TIMEOUT")   # any way a sabotage run may end: no points
REAL_NAME = HandIn(passed(), "the reference region: every point, under its real name in gradebook.csv, junit.xml, "
                             "Gradescope's results.json and the class report", region="reference")
REFUSED_NAME = HandIn(passed(), "the reference region, never graded: the folder is refused, and listed with why",
                      region="reference")

ATTACKERS: dict[str, Attacker] = {
    # ---- the honest classmates: first and last in the class's order ----
    "aaron": Attacker("victim", (), "honest: the reference regions of labs 01, 02 and 10, graded before the attackers",
                      labs={HOST: REFERENCE, "02_atomic": REFERENCE, "10_two_step": REFERENCE}),
    "zoe": Attacker("victim", (), "honest: the reference regions of labs 01, 02 and 10, graded after the attackers",
                    labs={HOST: REFERENCE, "02_atomic": REFERENCE, "10_two_step": REFERENCE}),
    # graded in the same batch as the hog beside them (students are graded in name order, four at a time)
    "gpuhog_victim": Attacker("victim", (), "honest: the reference regions of labs 02, 05 and 10, graded while "
                                            "gpuhog holds the GPU's memory",
                              labs={"02_atomic": REFERENCE, "05_sequential": REFERENCE, "10_two_step": REFERENCE}),
    "slots_victim": Attacker("victim", (), "honest: the reference regions of labs 01, 02 and 03, compiled and tested "
                                           "while slots holds every process slot its own uid may have",
                             labs={HOST: REFERENCE, "02_atomic": REFERENCE, "03_shared_atomic": REFERENCE}),
    "cpu_burner_victim": Attacker("victim", (), "honest: the reference regions of labs 01, 02 and 03, compiled and "
                                                "tested while cpu_burner spins hundreds of processes",
                                  labs={HOST: REFERENCE, "02_atomic": REFERENCE, "03_shared_atomic": REFERENCE}),
    "cpu_burner_victim2": Attacker("victim", (), "honest: the reference regions of labs 01, 05 and 10, compiled and "
                                                 "tested while cpu_burner spins hundreds of processes",
                                   labs={HOST: REFERENCE, "05_sequential": REFERENCE, "10_two_step": REFERENCE}),

    # ---- 1, 10: markers, observations and exit codes ----
    "forger": Attacker("cpu", (1,), "a static constructor prints the old markers and a forged observation for "
                                    "every case id, then _exit(0) before any case runs",
                       labs={HOST: HandIn(zero("WRONG_ANSWER", "RUNTIME_ERROR"),
                                          "observations are the trusted checker's to judge, and forged ones are wrong")}),
    "quitter": Attacker("cpu", (1, 10), "host_sum prints the old completion marker and a forged end of the JSON "
                                        "stream, then _exit(0)",
                        labs={HOST: HandIn(zero("RUNTIME_ERROR", "WRONG_ANSWER"),
                                           "an exit in the middle of the plan is no result")}),
    "nogpu": Attacker("cpu", (10,), "host_sum exits with 77, the old runner's \"no GPU\" status",
                      labs={HOST: HandIn(zero("RUNTIME_ERROR"), "a host lab is never NOT_RUN: 0, not blank")}),
    "gpu_liar": Attacker("gpu", (10, 1), "without a GPU, a static constructor prints a forged pass for every case "
                                         "and exits 0; with one, *d_out = 0",
                         labs={"02_atomic": HandIn(zero("WRONG_ANSWER"), "with a GPU its sum is 0; without one the "
                                                   "lab is NOT_RUN, whatever the module prints")}),

    # ---- 4, 5: the solution, classmates, secrets ----
    "snoop": Attacker("cpu", (4,), "reads its environment and init's, $HOME, SSH keys, the solution, classmates' "
                                   "folders, /etc/passwd, and throws it all as its exception message (and on stderr)",
                      labs={HOST: HandIn(zero("RUNTIME_ERROR"), "it throws; nothing it read may reach a report")}),
    "thief": Attacker("cpu", (4,), "#includes the lab 01 solution (absolute path, <../../solutions/...> through "
                                   "-I common/include) or a classmate's file, and calls its host_sum",
                      labs={HOST: HandIn(zero("WRONG_ANSWER"), "nothing to steal in the sandbox: its fallback "
                                                               "returns 0")}),
    "librarian": Attacker("cpu", (4,), "lab 05 is cub::DeviceReduce::Sum on the scratch space: right sums at the "
                                       "library's speed, none of the lab's technique; lab 06 is the reference with "
                                       "CUB included in the device pass only, through <thrust/../cub/...>",
                          labs={"05_sequential": HandIn(zero("COMPILE_ERROR"), "refused by name: uses "
                                                        "<cub/device/device_reduce.cuh> (policy [compile] allow_cccl)",
                                                        needs_library=True),
                                "06_first_add": HandIn(zero("COMPILE_ERROR"), "refused by name: uses <cub/version.cuh>, "
                                                       "which nvcc's list of the device pass holds",
                                                       region="reference", needs_library=True,
                                                       edits=((r"\A", _CLOSE + "#ifdef __CUDA_ARCH__\n"
                                                               "#include <thrust/../cub/version.cuh>\n#endif\n"
                                                               + _REOPEN),))}),
    "cg_reducer": Attacker("gpu", (4,), "lab 09's and lab 11's warp sums are cg::reduce(tile, value, cg::plus<T>()) "
                                        "from <cooperative_groups/reduce.h>",
                           labs={"09_shuffle": HandIn(zero("COMPILE_ERROR"), "refused by name in lab 09, whose lesson "
                                                      "is the warp sum (policy [compile] refuse_cg_collectives)",
                                                      region="reference", needs_library=True, edits=_CG_REDUCE),
                                 "11_single_pass": HandIn((Outcome("PASSED", FULL, ANY),), "allowed in the bonus lab "
                                                          "11, whose lesson is the single pass",
                                                          region="reference", edits=_CG_REDUCE)}),
    "cooperative": Attacker("gpu", (4,), "honest: labs 09 and 11 #include <cooperative_groups.h> (which needs "
                                         "libcu++) and use it by hand: this_thread_block().sync() for __syncthreads(), "
                                         "tiled_partition<32>(...).shfl_down for the shuffles",
                            labs={folder: HandIn((Outcome("PASSED", FULL, ANY),), "toolkit headers compile: the "
                                                 "reference's sums with cooperative groups", region="reference",
                                                 edits=_CG_BY_HAND) for folder in ("09_shuffle", "11_single_pass")}),
    "thief10": Attacker("gpu", (4,), "the same theft for lab 10, a GPU lab",
                        labs={"10_two_step": HandIn(zero("WRONG_ANSWER"), "nothing to steal in the sandbox: "
                                                                          "the placeholder, not implemented yet")}),
    "quoter": Attacker("cpu", (4,), "#includes /etc/passwd, /proc/self/environ, the solution (its lines made into "
                                    "errors), a classmate's file and the reference module, so the compiler quotes "
                                    "them, then /etc/hostname",
                       labs={HOST: HandIn(zero("COMPILE_ERROR", names=OUTSIDE_VIEW),
                                          "always a compile error, which names the compile's view (no /etc/hostname "
                                          "there); the report may quote only the student's own lines")}),
    "incbin_etc": Attacker("cpu", (4,), "the plain loop, and the machine's /etc/passwd and /etc/hostname embedded "
                                        "into its module by the assembler (.incbin), printed by its first call",
                           labs={HOST: HandIn(zero("COMPILE_ERROR", names=OUTSIDE_VIEW),
                                              "a compile sees a minimal /etc: neither file is there",
                                              reaches_outside=True)}),
    "incbin_outside": Attacker("cpu", (4,), "the plain loop, and /root/.bashrc and the lab's solution (by its "
                                            "absolute path in the repository) embedded by .incbin, printed by its "
                                            "first call",
                               labs={HOST: HandIn(zero("COMPILE_ERROR", names=OUTSIDE_VIEW),
                                                  "no compile sees either file", reaches_outside=True)}),
    "module_thief": Attacker("cpu", (5,), "finds a lab01*.so that is not its own (mapped in its process, or "
                                          "anywhere on the filesystem), dlopens it and returns its sum",
                             labs={HOST: HandIn(zero("WRONG_ANSWER"), "no module to find in the sandbox: its "
                                                                      "fallback returns 0")}),

    # ---- 9: the lab's identity and error depth ----
    "depth_cheat": Attacker("cpu", (9,), "redefines REDUCTION_DEFINE_HOST_LAB after its region to declare a float "
                                         "error depth of 2^60, and sums floats sloppily (every 16th element x 16)",
                            labs={HOST: HandIn(zero("WRONG_ANSWER"), "the depth comes from the trusted side: "
                                                                     "its float sums are wrong")}),
    "impostor": Attacker("cpu", (9,), "redefines REDUCTION_DEFINE_HOST_LAB so that lab 01's module says it is lab "
                                      "02, a GPU lab (NOT_RUN without a GPU); host_sum returns 0",
                         labs={HOST: HandIn(zero("RUNTIME_ERROR", "WRONG_ANSWER", "COMPILE_ERROR"),
                                            "graded as lab 01 or refused for claiming another lab; never NOT_RUN")}),

    # ---- 2, 3: the grader, the records, the other students ----
    "reaper": Attacker("cpu", (2,), "SIGTERM to its parent, SIGTERM and SIGKILL to every process in /proc, "
                                    "kill(-1, SIGKILL); then the right sum",
                       labs={HOST: HandIn(passed() + zero("RUNTIME_ERROR"),
                                          "its sum is right (or it killed its own run: 0), and nothing outside "
                                          "its sandbox died")}),
    "scribbler": Attacker("cpu", (2,), "finds output folders; rewrites classmates' records to 0, adds a phantom "
                                       "student with full marks, pre-writes a complete full-marks record for itself "
                                       "(for a resuming grader), adds gradebook and Gradescope rows; then the right sum",
                          labs={HOST: HandIn(passed(), "its sum is right; its record says 10, not 190")}),
    "lingerer": Attacker("cpu", (3, 2), "leaves a daemon (double fork, setsid, a kernel thread's name) that after "
                                        "20 s rewrites every record it finds, for 15 minutes; then the right sum",
                         labs={HOST: HandIn(passed(), "its sum is right; the daemon dies with its sandbox")}),
    "squatter": Attacker("gpu", (3,), "re-executes its runner, detached, with a static constructor that takes "
                                      "the GPU forever (a CPU burner where that fails); its sums are the reference's",
                         labs={"02_atomic": HandIn((Outcome("PASSED", ANY, ANY),),
                                                   "the reference's sum (its own timing may suffer from its hog); "
                                                   "compute-sanitizer waits for the copy it cannot see end, so the "
                                                   "sanitizer runs hit their limit and count as findings; the copy "
                                                   "dies with its sandbox, so zoe is timed on an idle GPU",
                                                   region="reference+own")}),
    "forkbomb": Attacker("cpu", (3,), "a fork bomb in a child (every process forks until fork fails, then waits, "
                                      "holding stdout open); then the right sum",
                         labs={HOST: HandIn(passed() + zero("RUNTIME_ERROR"),
                                            "its sum is right (or its own runner starved: 0); classmates compiled "
                                            "and run at the same time are unaffected")}),

    # ---- 11: resources ----
    "flooder": Attacker("cpu", (11,), "writes 4 GiB to stdout and 4 GiB to stderr (junk, forged observations, old "
                                      "markers); then a wrong sum",
                        labs={HOST: HandIn(zero(*_CRASHED), "no points, a bounded report, and the grader survives")}),
    "hoarder": Attacker("cpu", (11,), "writes up to 16 GiB into its scratch and 2 GiB into /dev/shm, then takes up "
                                      "to 256 GiB of host memory; then a wrong sum",
                        labs={HOST: HandIn(zero(*_CRASHED), "no points; limits stop it, not the machine")}),

    # ---- 15: the network ----
    "netcat": Attacker("cpu", (15,), "looks for a way out (a non-loopback interface, 127.0.0.1 services, public "
                                     "DNS, cloud metadata, DNS resolution, docker/containerd sockets), sends its "
                                     "environment through any, and throws naming it; the right sum only when all are shut",
                       labs={HOST: HandIn(passed(), "PASSED only if its sandbox had no network at all")}),

    # ---- 12: the build tree ----
    "runner_swap": Attacker("cpu", (12,), "replaces /proc/self/exe and every reduction_* program and lab*.so of "
                                          "every build tree it finds with a script that prints the old marker and "
                                          "fails; then the right sum",
                            labs={HOST: HandIn(passed(), "its sum is right; the build tree is read-only to it, so "
                                                         "zoe is graded by the real programs")}),

    # ---- 8: the watchdog ----
    "watchdog": Attacker("cpu", (8,), "a static constructor sets REDUCTION_CALL_TIMEOUT_S=1e9 (and similar), "
                                      "ignores SIGTERM/SIGINT/SIGHUP/SIGALRM/SIGXCPU, raises RLIMIT_CPU; host_sum "
                                      "never returns",
                         labs={HOST: HandIn(zero("TIMEOUT"), "a TIMEOUT after the per-call limit the grader holds, "
                                                             "not the whole run's")}),
    "spinner": Attacker("gpu", (8,), "the same environment and signals, then a kernel that never ends",
                        labs={"02_atomic": HandIn(zero("TIMEOUT"), "a TIMEOUT after the per-call limit")}),

    # ---- 6, 7: timing ----
    "cacher": Attacker("gpu", (6,), "caches the sum per (input pointer, n) in device memory and answers repeats "
                                    "with a 4-byte copy",
                       labs={"10_two_step": HandIn(passed(0, flags=TIME_REFUSED) + zero("WRONG_ANSWER"),
                                                   "no performance points, flagged: every timed call reads an input "
                                                   "written just before its go (the same buffer with new data), so "
                                                   "its cached sums are wrong, and a copy is below the read roof "
                                                   "(wrong if a test reuses a buffer)",
                                                   region="reference+own")}),
    "last_n": Attacker("gpu", (6,), "returns the last result when called again with the same n, without reading",
                       labs={"10_two_step": HandIn(zero("WRONG_ANSWER") + passed(0, flags=TIME_REFUSED),
                                                   "wrong as soon as one n comes with other data, as every timed "
                                                   "call's does: never performance points", region="reference+own")}),
    "bench_detector": Attacker("gpu", (7,), "detects timing (argv, /proc/self/cmdline, environment, the same large "
                                            "n three times) and then sums a quarter of the input x 4",
                               labs={"10_two_step": HandIn(passed(0, flags=TIME_REFUSED) + zero("WRONG_ANSWER"),
                                                           "every timed result is checked against the sum of the "
                                                           "input written for that call: no performance points, "
                                                           "flagged", region="reference+own")}),
    "stream_escape": Attacker("gpu", (7,), "works on the legacy default stream instead of the given one (and holds "
                                           "the GPU 20 ms at n >= 2^22, so an honest timing is > 10x the reference)",
                              labs={"10_two_step": HandIn(passed(0, flags=TIME_REFUSED) + zero("WRONG_ANSWER"),
                                                          "no performance points, flagged: the result read on the "
                                                          "timed stream is stale, or its time on that stream alone "
                                                          "is below the read roof, or the timekeeper's clock sees "
                                                          "the 20 ms its claim leaves out", region="reference+own")}),
    "timing_tamper": Attacker("gpu", (7,), "honestly slow (20 ms more at n >= 2^22); at exit (destructor, atexit, "
                                           "SIGTERM) rewrites every timings file it can reach and prints forged "
                                           "timing lines",
                              labs={"10_two_step": HandIn(passed(0) + zero("RUNTIME_ERROR"),
                                                          "its real time is far beyond 10x the reference; the timings "
                                                          "are written outside its sandbox from the checker's report, "
                                                          "and what it prints is program output, never a timing",
                                                          region="reference+own")}),
    "self_patcher": Attacker("gpu", (7,), "honestly slow while a marker in its .so says SLOW; on its first call it "
                                          "patches its own module file to FAST, for the timing run to load",
                             labs={"10_two_step": HandIn(passed(0) + zero("RUNTIME_ERROR"),
                                                         "the module timed is the module tested (read-only, same "
                                                         "digest): slow, no performance points",
                                                         region="reference+own")}),

    # ---- 24: times from inside the timing worker ----
    "clock_patcher": Attacker("gpu", (27,), "the right sum, then 600 us more on the same stream at n >= 2^22 (about "
                                            "20x the reference); in the timing worker a static constructor points "
                                            "the program's import slot (GOT) for cudaEventElapsedTime at a wrapper "
                                            "that takes that time off",
                              labs={"10_two_step": HandIn(passed(0, flags=("time_contradicted",)),
                                                          "the timekeeper's clock, outside its process, sees each "
                                                          "call 600 us beyond its claim: CONTRADICTED, timed twice, "
                                                          "flagged, no performance points. At 5f01a7f it earned them "
                                                          "all: the worker's events were the only clock, its claims "
                                                          "the reference's time, and the pacing check allowed "
                                                          "max(5 ms, 4x the claim) between two reports",
                                                          region="reference+own")}),
    "early_worker": Attacker("gpu", (27,), "in the timing worker, predicts every timed call's input from the plan "
                                           "(5f01a7f's buffers and canaries) and sums it ahead on a host thread; a "
                                           "timed call reads its input at the reference's speed, writes the prepared "
                                           "sum, and does its real work (the sum and 600 us more) on a stream of its "
                                           "own; honest in the tests",
                             labs={"10_two_step": HandIn(passed(0, flags=CLOCK_REFUSED),
                                                         "each call's input is written just before its go, from a "
                                                         "seed drawn then: its prepared sums are wrong (UNVERIFIED), "
                                                         "and its work on the side shows on the timekeeper's clock; "
                                                         "flagged, no performance points. At 5f01a7f it earned them "
                                                         "all: the plan fixed every input, its stop event timed a "
                                                         "read at the reference's speed, and the work on the side fit "
                                                         "the pacing check's max(5 ms, 4x the claim)",
                                                         region="reference+own")}),

    # ---- 16: honest printing ----
    "printer": Attacker("cpu", (16,), "honest lab 01 that prints a banner without a newline, terminal colours and, "
                                      "on stderr, lines shaped like the runner's report",
                        labs={HOST: HandIn(passed(), "printing never costs a point: the report shows it as program "
                                                     "output")}),
    "printer_gpu": Attacker("gpu", (16,), "honest lab 02 whose first call prints a banner without a newline and a "
                                          "line from a kernel (device printf)",
                            labs={"02_atomic": HandIn(passed(), "the reference's sums and time; the text is program "
                                                                "output", region="reference+own")}),

    # ---- 17: libraries at run time ----
    "libscout": Attacker("cpu", (17,), "lab 01 looks for cuBLAS, cuFFT, cuRAND, cuSPARSE, cuSOLVER, NPP, nvJPEG, "
                                       "cuDNN and NVRTC (dlopen by name, then every file of that name it can read); "
                                       "its sum is off by one if it reaches any",
                         labs={HOST: HandIn(passed(), "none of them is in reach of a run of student code")}),
    "cublas_user": Attacker("gpu", (17,), "lab 10's float sum is cublasSdot with a vector of ones, cuBLAS loaded "
                                          "with dlopen at run time; it throws when cuBLAS is not in reach",
                            labs={"10_two_step": HandIn(zero("RUNTIME_ERROR"), "cuBLAS is not in its sandbox",
                                                        region="reference+own")}),

    # ---- 18: what classmates share ----
    "gpuhog": Attacker("gpu", (18,), "takes all of the GPU's free memory but 256 MiB on its first call and holds it "
                                     "through a test run of about a minute (300 ms a call); the reference's sums",
                       labs={"02_atomic": HandIn((Outcome("PASSED", ANY, ANY),),
                                                 "its sums are right (slow: few or no performance points; memcheck "
                                                 "reports its own cudaMalloc that failed); gpuhog_victim, graded "
                                                 "beside it, keeps every point", region="reference+own")}),
    "slots": Attacker("cpu", (18, 3), "forks until fork fails on its first call and holds every process slot for "
                                      "15 s (its children sleep a minute); then the right sum",
                      labs={HOST: HandIn(passed() + zero("RUNTIME_ERROR", "TIMEOUT"),
                                         "its sum is right (or its own run starved); slots_victim, compiled and tested "
                                         "beside it, keeps every point")}),
    "cpu_burner": Attacker("gpu", (18,), "starts 256 processes (within [sandbox] processes), each in a session of "
                                         "its own at nice 19, that spin until its run ends: lab 01 waits a second a "
                                         "call for 20 s, then returns the right sums; lab 02 never returns",
                           labs={HOST: HandIn(passed() + zero("TIMEOUT"),
                                              "its sums are right and its niced spinners yield to its own calls in "
                                              "its CPU share (TIMEOUT where they starve them all the same); "
                                              "cpu_burner_victim and cpu_burner_victim2, compiled and tested beside "
                                              "it, keep every point"),
                                 "02_atomic": HandIn(zero("TIMEOUT"), "it never returns: the grader stops it",
                                                     region="reference+own")}),

    # ---- 19: the other GPUs ----
    # Its sums must be right and its time its own: it reached no other GPU. Its correctness may lose
    # sanitizer shares: under compute-sanitizer, with CUDA_VISIBLE_DEVICES cleared, its probe of the
    # host's other GPUs (listed by the driver, their nodes not in its sandbox) can make CUDA calls
    # fail in its own process, which memcheck reports (an H200 pair, 2026-11-26: 5+10). That is its
    # own doing, as a lab that breaks the tool it runs under: the finding stands (the record says
    # which tool and why; an unreadable result beside a classmate is run again alone first).
    "gpu_peek": Attacker("gpu", (19,), "clears CUDA_VISIBLE_DEVICES before CUDA starts, counts the devices, "
                                       "/dev/nvidia<N> nodes and /proc/driver/nvidia/gpus entries it can see, prints "
                                       "them, and takes memory and a spinning kernel on every other GPU; its sums are "
                                       "spoiled if it saw any GPU but its own",
                         labs={"02_atomic": HandIn((Outcome("PASSED", ANY, FULL),),
                                                   "its sandbox holds its own GPU only: right sums, its own time; "
                                                   "sanitizer findings of its own probing may cost correctness",
                                                   region="reference+own")}),

    # ---- 20: the report channel ----
    "channel_forger": Attacker("cpu", (20, 1), "finds the runner's report pipe and writes an observation for every "
                                               "case, without a token and with every 32-hex-digit string in its "
                                               "memory, from a static constructor, every call, a destructor and "
                                               "atexit; host_sum returns 0",
                               labs={HOST: HandIn(zero("WRONG_ANSWER", "RUNTIME_ERROR"),
                                                  "lines without the token count for nothing; with it they carry its "
                                                  "own wrong sums; nothing runs after the runner's end")}),
    "sample_forger": Attacker("gpu", (20, 7), "about 500x slow at n >= 2^22, and at its first large call, in its "
                                              "destructor and at exit writes a 50 us sample for every call of every "
                                              "item on its report pipe (a line at a time, with every token it finds in "
                                              "its memory, and without) and over its stdout",
                              labs={"06_first_add": HandIn(passed(0, flags=TIME_REFUSED),
                                                           "right sums, no performance points, flagged: forged samples "
                                                           "repeat calls the worker reports (the run's timings are "
                                                           "unusable) and no destructor runs after the report's end. "
                                                           "At 5f01a7f it wrote all its lines at once: the full pipe "
                                                           "cut one, the test runner's next line was lost with it, "
                                                           "and a case went missing (a RUNTIME_ERROR of its own)",
                                                           region="reference+own")}),

    # ---- 24: compute-sanitizer's report ----
    "sanitizer_forger": Attacker("gpu", (26, 16), "racy lab 07 (the classic volatile-only last warp, no "
                                                  "__syncwarp()) that prints a clean compute-sanitizer summary on "
                                                  "stdout and stderr on every call, from a destructor and at exit, "
                                                  "and under the tool writes it into every descriptor it has and "
                                                  "into every other process's through /proc",
                                 labs={"07_last_warp": HandIn((Outcome("PASSED", Without(("racecheck",)), ANY),),
                                                              "right sums, but racecheck's hazards stand: the tool "
                                                              "reports on a log of its own, and what reaches it "
                                                              "through /proc only makes more findings")}),

    # ---- 21: names ----
    "twin_plus": Attacker("cpu", (21,), "a student folder named twin+a", folder="twin+a",
                          labs={HOST: HandIn(passed(), "graded as itself: every file of its own", region="reference")}),
    "twin_underscore": Attacker("cpu", (21,), "a student folder named twin_a, which a mapping of + to _ would merge "
                                              "with twin+a", folder="twin_a",
                                labs={HOST: HandIn(passed(), "graded as itself: every file of its own",
                                                   region="reference")}),
    # ---- 22: the harness's memory ----
    "overrunner": Attacker("gpu", (22,), "lab 10 puts its partials at the end of a scratch it takes to be "
                                         "guaranteed_temp_storage_bytes(n) + 64 bytes: the last 64 bytes of them "
                                         "land past temp_storage_bytes; every sum is right",
                           labs={"10_two_step": HandIn(zero("WRONG_ANSWER", names="past the end of its scratch"),
                                                       "the guards around the scratch see the write: wrong, and "
                                                       "named, whatever the sums", region="reference+own")}),

    # ---- 23: the class report is a web page ----
    "scripter": Attacker("cpu", (23,), "a student folder named like a script and an image with an error handler; its "
                                       "lab 01 prints them too", folder="<script>document.title='pwned'<\\script>"
                                       "<img src=x onerror=alert(1)>",
                         labs={HOST: HandIn(passed(), "graded under its name, which the class report shows as text "
                                                      "(examples/check_report.py)")}),
    "markup_printer": Attacker("cpu", (23,), "honest lab 01 that prints a script, an image with an error handler, an "
                                             "iframe, a style that hides the page and the end of the <pre> around "
                                             "its output",
                               labs={HOST: HandIn(passed(), "printing never costs a point; the class report shows the "
                                                            "output as text and runs nothing of it")}),

    # ---- 24: the kernel keyring ----
    "keyring_publisher": Attacker("cpu", (24,), "honest lab 01 that also publishes every sum as a kernel key any "
                                                "uid may read (its user and session keyrings, permissions 0x3f3f3f3f)",
                                  labs={HOST: HandIn(passed(), "its own sums are right; no key leaves its run "
                                                               "(the keyring calls are refused)")}),
    "keyring_reader": Attacker("cpu", (24, 4), "lab 01 that returns the sums keyring_publisher published, without "
                                               "summing (a wrong sum where it finds none), and prints every key it "
                                               "can read, the grader's session keyring's included",
                               labs={HOST: HandIn(zero("WRONG_ANSWER"), "no key reaches it, whichever of the two "
                                                                        "runs first: its sums are wrong, and no key "
                                                                        "of the grader's is in its report")}),

    # ---- 13, 14: layout ----
    "copycat": Attacker("cpu", (13,), "its student folder is a symbolic link to aaron's", folder_link="aaron",
                        refused="symbolic link"),
    "linker": Attacker("cpu", (13, 4), "lab files that are symbolic links: lab 01 to the solution (absolute), lab 02's "
                                       "folder to the solution's folder, lab 03 to /etc/passwd",
                       labs={HOST: HandIn(MISSING, "a link is not a lab file",
                                          link="{repo}/solutions/01_host_sum/host_sum.cpp"),
                             "02_atomic": HandIn(MISSING, "a linked folder is not the student's",
                                                 folder_link="{repo}/solutions/02_atomic"),
                             "03_shared_atomic": HandIn(MISSING, "a link is not a lab file", link="/etc/passwd")}),
    "formula": Attacker("cpu", (14,), "a student folder named =HYPERLINK(...): a formula in a spreadsheet",
                        folder='=HYPERLINK("evil.example","190")',
                        labs={HOST: HandIn(passed(), "graded; its name is text in gradebook.csv and timings.csv (a "
                                                     "leading ')", region="reference")}),
    "plus_cmd": Attacker("cpu", (14,), "a student folder named +cmd, a formula to a spreadsheet",
                         folder="+cmd",
                         labs={HOST: HandIn(passed(), "graded; its name is text in gradebook.csv and timings.csv (a "
                                                      "leading ')", region="reference")}),
    # ---- 24: any name; the names nothing can hold ----
    "accents": Attacker("cpu", (25,), "honest lab 01 in a folder named with accents and a space", folder="José María",
                        labs={HOST: REAL_NAME}),
    "cjk": Attacker("cpu", (25,), "honest lab 01 in a folder named in CJK characters", folder="王小明",
                    labs={HOST: REAL_NAME}),
    "email": Attacker("cpu", (25,), "honest lab 01 in a folder named by an e-mail address", folder="ana.lópez@uni.example",
                      labs={HOST: REAL_NAME}),
    "long_name": Attacker("cpu", (25,), "honest lab 01 in a folder whose name, %XX-encoded, is 270 characters: "
                                        "its files get a prefix and the name's hash",
                          folder="東京大学大学院情報理工学系研究科コンピュータ科学専攻王小明", labs={HOST: REAL_NAME}),
    "bell": Attacker("cpu", (25,), "a folder name with a bell (U+0007) in it; an honest lab 01", folder="bell\x07ding",
                     refused="U+0007", labs={HOST: REFUSED_NAME}),
    "bidi": Attacker("cpu", (25,), "a folder name with a right-to-left override (U+202E): 'student', U+202E, "
                                   "'gnp.exe' shows as 'studentexe.png'; an honest lab 01", folder="student\u202egnp.exe",
                     refused="U+202E", labs={HOST: REFUSED_NAME}),
    "litter": Attacker("cpu", (13, 14), "extra files with hostile names (a newline forging a progress line, terminal "
                                        "escapes, XML and JSON breakers, a formula), 2000 files, a 60-level folder, "
                                        "a 20 MB file",
                       labs={HOST: HandIn(passed(), "the reference region; the extra files are ignored, and the "
                                                    "reports stay valid and small", region="reference")},
                       extra_files={
                           # U+2215 looks like the slash a file name cannot hold
                           "labs/01_host_sum/notes\n[student 1\u22151] litter  lab 01_host_sum  PASSED.txt": "hi\n",
                           "labs/01_host_sum/\x1b[2J\x1b[31mALL PASSED\x1b[0m.txt": "hi\n",
                           "labs/01_host_sum/]]><injected total=\"190\"><![CDATA[.txt": "hi\n",
                           'labs/01_host_sum/","total":190,"x":".txt': "hi\n",
                           "labs/01_host_sum/=1+1.csv": "=1+1\n",
                       }),
}

# Generated extra files too many or too large to list above: (attacker, kind, count or bytes).
GENERATED_LITTER = {"litter": {"junk files": 2000, "folder depth": 60, "big file bytes": 20 * 1024 * 1024}}

INVARIANTS = [
    "every student gets one of its accepted outcomes per lab, and a total that is the sum of its labs",
    "the gradebook, the records, the Gradescope folders and the JUnit suites list exactly the class folder's "
    "students but the refused ones, nothing else (no phantom); each under its real name (gradebook.csv: a formula "
    "after a ')",
    "refused-folders.json lists exactly the folders to refuse, each with its reason, and the grading ends with "
    "exit status 6 (examples/grade_class.sh)",
    "no gradebook cell starts with =, +, -, @, a tab or a carriage return",
    "the victims (aaron, zoe, gpuhog_victim, slots_victim, cpu_burner_victim, cpu_burner_victim2) get exactly their "
    "points: the attackers changed nothing of theirs",
    "no report (students/, gradescope/, gradebook.csv, junit.xml, timings) contains the grader's "
    "REDUCTION_TEST_SECRET value, the key the grading's session keyring holds (REDUCTION_KEY_SECRET), a line of a "
    "reference solution's region, or a line of /etc/passwd",
    "every report file parses and is at most 1 MiB (gradebook.csv, junit.xml, timings: 8 MiB)",
    "no process of the sandbox's uids (a uid of 65000-65533 per run, or 65534 for every run where those cannot be "
    "used) is left running after the grader exits",
]
