#!/usr/bin/env python3
"""Profile one lab's kernels with Nsight Compute and print the metrics that lab teaches.

    python3 grading/tools/profile_lab.py --lab 05 [--build-dir build/student] [--who student|reference|both]
                                   [--n 2^24] [--type float]

Runs `ncu` (clocks left as they are: --clock-control none) on `reduction_bench --run-once`, which
calls the lab once, and prints for each kernel the lesson's metrics in plain words beside their
ncu names; --who both prints your build and the reference side by side. Only kernels whose name
contains `reduce_` are profiled (ncu --kernel-name regex:reduce_): name yours reduce_<something>,
as the lab texts do, or this finds none (CUB's kernels and the harness's own are left out so).
"""
import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # grading/
from grader.stages.benchmark import parse_size  # noqa: E402  (the one size syntax: 2^24, 16777216, 1e6)
from grader.manifest import WHERE_THE_REFERENCES_ARE  # noqa: E402

# (plain words, ncu metric or derived key, unit, labs whose lesson it is; None: every lab)
ROWS = [
    ("kernel time", "gpu__time_duration.sum", "us", None),
    ("DRAM bytes read", "dram__bytes_read.sum", "MB", None),
    ("achieved DRAM read bandwidth", "dram__bytes_read.sum.per_second", "GB/s", None),
    ("DRAM throughput, % of peak", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", None),
    ("active threads per warp instruction (of 32; warp execution efficiency)",
     "smsp__thread_inst_executed_per_inst_executed.ratio", "", {4, 5, 6}),
    ("threads doing work per warp instruction (of 32; predicated-off threads not counted)",
     "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "", {4, 5, 6}),
    ("shared-memory bank conflicts, loads", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", {4, 5}),
    ("shared-memory bank conflicts, stores", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "", {4, 5}),
    ("barrier stall share (stall_sync then; % of warp stalls at __syncthreads)", "derived:barrier_share", "%",
     {5, 6, 7, 8, 9}),
    ("memory-barrier stall share (% of warp stalls at __threadfence: membar)", "derived:membar_share", "%", {11}),
    ("instructions per warp (inst_per_warp)", "derived:inst_per_warp", "", None),
    ("global load efficiency (% of each fetched sector used)",
     "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", "%", {2, 3, 6, 10, 11}),
    ("global load throughput (gld_throughput)", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second", "GB/s",
     {2, 3, 6, 10, 11}),
]
STALL_REASONS = ["barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle",
                 "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
                 "not_selected", "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait"]
STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
INSTRUCTIONS = "smsp__inst_executed.sum"
WARPS = "smsp__warps_launched.sum"


def metric_names():
    names = {metric for _, metric, _, _ in ROWS if not metric.startswith("derived:")}
    names.update(STALL_METRIC.format(r) for r in STALL_REASONS)
    names.update({INSTRUCTIONS, WARPS})
    return sorted(names)


def to_number(text):
    try:
        return float(text.replace(",", ""))
    except (ValueError, AttributeError):
        return None


def parse_ncu_csv(text):
    """ncu --csv --page raw: one row per kernel launch, a header row of metric names, then units."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) < 3:
        return []
    header, units = rows[0], rows[1]
    kernels = []
    for row in rows[2:]:
        record = dict(zip(header, row))
        record["_units"] = dict(zip(header, units))
        kernels.append(record)
    return kernels


PREFIXES = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
TIMES = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3,
         "s": 1.0, "second": 1.0, "cycle": None}
TARGETS = {"us": (1e-6, "time"), "MB": (1e6, "bytes"), "GB/s": (1e9, "rate")}


def unit_in_base(unit):
    """ncu's unit string ('nsecond', 'ns', 'Mbyte', 'MB', 'byte/second', 'Gbyte/s', ...) as a factor
    to seconds, bytes or bytes per second, and its kind; (None, None) for anything else."""
    unit = (unit or "").strip()
    numerator, _, denominator = unit.partition("/")
    if not denominator and numerator in TIMES and TIMES[numerator]:
        return TIMES[numerator], "time"
    for name in ("byte", "B"):
        if numerator.endswith(name) and numerator[: -len(name)] in PREFIXES:
            factor = PREFIXES[numerator[: -len(name)]]
            if not denominator:
                return factor, "bytes"
            if TIMES.get(denominator):
                return factor / TIMES[denominator], "rate"
    return None, None


def scale(value, unit, source_unit):
    """Converts a value from ncu's unit to the table's (us, MB, GB/s); others pass through."""
    if unit not in TARGETS:
        return value
    factor, kind = unit_in_base(source_unit)
    target_factor, target_kind = TARGETS[unit]
    if factor is None or kind != target_kind:
        raise ValueError(f"unexpected unit '{source_unit}' for a value shown in {unit}")
    return value * factor / target_factor


def kernel_values(record):
    values = {}
    for _, metric, unit, _ in ROWS:
        if metric.startswith("derived:"):
            continue
        value = to_number(record.get(metric))
        if value is None:
            continue
        source_unit = record["_units"].get(metric, "")
        try:
            values[metric] = scale(value, unit, source_unit)
        except ValueError as problem:  # show the number as ncu gave it rather than a wrong one
            print(f"warning: {metric}: {problem}; shown in {source_unit}", file=sys.stderr)
            values[metric] = value
    stalls = {r: to_number(record.get(STALL_METRIC.format(r))) for r in STALL_REASONS}
    total = sum(v for v in stalls.values() if v)
    for reason in ("barrier", "membar"):
        if total and stalls.get(reason) is not None:
            values[f"derived:{reason}_share"] = 100.0 * stalls[reason] / total
    instructions, warps = to_number(record.get(INSTRUCTIONS)), to_number(record.get(WARPS))
    if instructions is not None and warps:
        values["derived:inst_per_warp"] = instructions / warps
    return values


def find_ncu():
    """Nsight Compute's command line: on PATH, or where the CUDA Toolkit installs it."""
    for candidate in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def profile(ncu, bench, lab, who, module_dirs, n, type_):
    command = [ncu, "--clock-control", "none", "--kernel-name", "regex:reduce_", "--csv", "--page", "raw",
               "--metrics", ",".join(metric_names()), bench, "--run-once", "--labs", lab,
               "--sizes", str(n), "--types", type_]
    if who == "reference":  # only the reference module is loaded, so only its kernels run
        command += ["--references-only", "--reference-dir", module_dirs["reference"]]
    else:
        command += ["--student-dir", module_dirs["student"], "--reference-dir", ""]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as problem:  # found but not runnable (a broken install)
        sys.exit(f"error: cannot run {ncu}: {problem}")
    if result.returncode != 0:
        sys.exit(f"error: ncu failed ({result.returncode}):\n{result.stderr[-3000:]}")
    kernels = parse_ncu_csv(result.stdout)
    if not kernels:
        sys.exit("error: ncu profiled no kernel whose name contains reduce_ (the only ones this profiles: name "
                 "your kernels reduce_<something>): " + result.stdout[-2000:])
    return kernels


def format_value(value):
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"


def print_table(lab_number, columns):
    """columns: [(title, [(kernel name, values)])]: one table per kernel position."""
    width = 62
    for position in range(max(len(kernels) for _, kernels in columns)):
        names = [kernels[position][0] if position < len(kernels) else "-" for _, kernels in columns]
        print(f"\nkernel {position + 1}: " + " | ".join(dict.fromkeys(names)))
        print(f"{'what it shows':<{width}} {'ncu metric':<64} " + " ".join(f"{t:>12}" for t, _ in columns))
        for words, metric, unit, labs in ROWS:
            if labs is not None and lab_number not in labs:
                continue
            cells = []
            for _, kernels in columns:
                values = kernels[position][1] if position < len(kernels) else {}
                cells.append(format_value(values.get(metric)))
            label = f"{words} [{unit}]" if unit else words
            print(f"{label:<{width}.{width}} {metric:<64} " + " ".join(f"{c:>12}" for c in cells))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="Only kernels whose name contains reduce_ are profiled: name yours so.")
    parser.add_argument("--lab", required=True, help="lab number, e.g. 05")
    parser.add_argument("--build-dir", default="build/student")
    parser.add_argument("--who", choices=["student", "reference", "both"], default="student")
    parser.add_argument("--n", default="2^24")
    parser.add_argument("--type", choices=["float", "int"], default="float")
    parser.add_argument("--json", help="also write the values as JSON here")
    args = parser.parse_args(argv)

    manifest_path = os.path.join(args.build_dir, "reduction_labs.json")
    if not os.path.exists(manifest_path):
        sys.exit(f"error: {manifest_path} not found: build first (cmake --workflow --preset student)")
    with open(manifest_path, encoding="utf-8") as handle:
        manifest = json.load(handle)
    dirs = {"student": os.path.join(args.build_dir, "labs"), "reference": manifest.get("reference_dir") or ""}
    bench = os.path.join(args.build_dir, "common", "bench", "reduction_bench")
    lab = f"{int(args.lab):02d}"
    if lab == "01":
        print("lab 01 runs on the host CPU: it launches no kernel, so there is nothing for Nsight Compute to show")
        return 0
    ncu = find_ncu()
    if ncu is None:
        sys.exit("error: Nsight Compute (ncu) not found: it is not on PATH nor in /usr/local/cuda/bin. Install "
                 "it (the full CUDA Toolkit installer includes it; https://developer.nvidia.com/nsight-compute), "
                 "put the folder holding ncu on PATH, and run this again. It also needs an NVIDIA GPU.")
    if not os.path.exists(bench):
        sys.exit(f"error: {bench} not found: build first (cmake --build --preset student)")
    n = parse_size(args.n)
    columns = []
    for who in (["student", "reference"] if args.who == "both" else [args.who]):
        if who == "reference" and not os.path.isdir(dirs["reference"]):
            sys.exit(f"error: no reference modules in {dirs['reference'] or 'this build'}. {WHERE_THE_REFERENCES_ARE}")
        kernels = profile(ncu, bench, lab, who, dirs, n, args.type)
        columns.append((who, [(k.get("Kernel Name", "?"), kernel_values(k)) for k in kernels]))
    print(f"lab {lab}, n = {n}, {args.type}; ncu --clock-control none (clocks as they are)")
    print_table(int(lab), columns)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({who: [{"kernel": k, "values": v} for k, v in kernels] for who, kernels in columns}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
