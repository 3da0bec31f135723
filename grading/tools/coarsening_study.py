#!/usr/bin/env python3
"""Lab 10's coarsening study in one command (labs/10_two_step/README.md, "The coarsening study").
Builds lab 10 once per coarsening C (-DREDUCTION_LAB10_COARSENING=C: C 16-byte vectors per thread,
a grid that follows n) and once with its own one-wave grid, times every variant in one run of
reduction_bench (--variant: all of them interleaved with the reference, sample by sample, beside
CUB and the read roof), writes its timings CSV and draws the figure (tools/plot.sh --figures
coarsening).

    python3 grading/tools/coarsening_study.py [--build-dir build/student] [--source FILE]
        [--coarsening 1,2,4,8,16,32] [--sizes 2^20,2^22,2^24,2^26,2^28] [--types float] [--out DIR]

--source is your labs/10_two_step/two_step.cu by default (the study needs a lab 10 that passes its
tests); an instructor points it at solutions/10_two_step/two_step.cu. Without a GPU the variants
are built and the command stops there with exit 2, saying that timing needs a GPU.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # grading/

from grader.manifest import GraderError, Manifest, load_manifest  # noqa: E402

LAB_FILE = Path("labs") / "10_two_step" / "two_step.cu"
MODULE = "lab10_two_step.so"   # the name reduction_bench finds lab 10 by, in each variant's folder
ONE_WAVE = "one wave"          # the lab's own grid (plots/plotting/coarsening.py draws it dashed)
NO_GPU = "no CUDA GPU"         # reduction_bench's words when it cannot time a GPU lab


@dataclass(frozen=True)
class Variant:
    name: str         # the CSV's student column: "C=4", or ONE_WAVE
    coarsening: int   # REDUCTION_LAB10_COARSENING; 0 is the lab as it is


def variants(coarsening: list[int]) -> list[Variant]:
    return [Variant(ONE_WAVE, 0)] + [Variant(f"C={c}", c) for c in coarsening]


def compile_command(manifest: Manifest, source: Path, variant: Variant, module: Path) -> list[str]:
    """nvcc as CMake builds a lab module (the manifest's flags), with the study's knob set."""
    return [manifest.nvcc, *manifest.module_flags, *[f"-I{folder}" for folder in manifest.include_dirs],
            f"-DREDUCTION_LAB10_COARSENING={variant.coarsening}", str(source), "-o", str(module)]


def build(manifest: Manifest, source: Path, variant: Variant, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(compile_command(manifest, source, variant, folder / MODULE), capture_output=True, text=True)
    if done.returncode != 0:
        raise GraderError(f"{source} does not build as {variant.name}:\n{done.stderr[-2000:]}")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", type=Path, default=Path("build/student"), help="a configured build")
    parser.add_argument("--source", type=Path, help=f"the lab 10 file to build (default: the build's {LAB_FILE})")
    parser.add_argument("--coarsening", default="1,2,4,8,16,32", help="the values of C (default: 1,2,4,8,16,32)")
    parser.add_argument("--sizes", default="2^20,2^22,2^24,2^26,2^28",
                        help="reduction_bench --sizes (default: 2^20,2^22,2^24,2^26,2^28)")
    parser.add_argument("--types", default="float", help="reduction_bench --types (default: float)")
    parser.add_argument("--budget", default="0.5", help="reduction_bench --budget, seconds per variant and size")
    parser.add_argument("--out", type=Path, help="output folder (default: BUILD/coarsening-study)")
    args = parser.parse_args(argv)
    try:
        args.coarsening = sorted({int(c) for c in args.coarsening.split(",") if c.strip()})
    except ValueError:
        parser.error(f"--coarsening: a list of positive integers, e.g. 1,2,4 (got '{args.coarsening}')")
    if not args.coarsening or min(args.coarsening) < 1:
        parser.error("--coarsening: a list of positive integers, e.g. 1,2,4")
    return args


def bench_command(bench: Path, folders: dict[Variant, Path], args, csv_path: Path) -> list[str]:
    """One reduction_bench run: every variant (--variant NAME:DIR) interleaved with the reference."""
    variants = [arg for variant, folder in folders.items() for arg in ("--variant", f"{variant.name}:{folder}")]
    return [str(bench), "--labs", "10", *variants, "--sizes", args.sizes, "--types", args.types,
            "--budget", args.budget, "--csv", str(csv_path)]


def time_all(bench: Path, folders: dict[Variant, Path], args, csv_path: Path) -> str:
    """"" once `csv_path` holds the run's timings, else why not (no GPU: the reason says so)."""
    done = subprocess.run(bench_command(bench, folders, args, csv_path), capture_output=True, text=True)
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        return done.stderr.strip() or f"reduction_bench exited {done.returncode}"
    return ""


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        manifest = load_manifest(args.build_dir)
        source = args.source or manifest.source_dir / LAB_FILE
        out = args.out or manifest.binary_dir / "coarsening-study"
        folders = {variant: out / variant.name.replace("=", "").replace(" ", "_") for variant in variants(args.coarsening)}
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:   # nvcc runs: side by side
            for variant, _ in zip(folders, pool.map(lambda item: build(manifest, source, *item), folders.items())):
                print(f"built {variant.name}: {folders[variant] / MODULE}", flush=True)
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    timings = out / "coarsening.csv"
    why = time_all(manifest.binary_dir / "common" / "bench" / "reduction_bench", folders, args, timings)
    if why:
        print(f"not timed: {why}" + (" (the variants are built; run this again on a GPU machine)" if NO_GPU in why else ""),
              file=sys.stderr)
        return 2
    print(f"timings: {timings}")
    status = 0
    for element_type in args.types.split(","):
        plot = subprocess.run(["bash", str(manifest.source_dir / "tools" / "plot.sh"), str(timings), "--out",
                               str(out / "plots"), "--figures", "coarsening", "--type", element_type])
        status = status or plot.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
