"""What a second thread could give the cycle loop on this machine (issue 35: `sim.threads`, 2 threads at least
1.6x one on Slim Fly q = 37 and q = 163), measured before such an engine exists:

    python perf/threads_ceiling.py [--cases sf37,sf163] [--rounds 2] [--no-readme]

- **Side by side**: each perf/scale_bench.py case (seed 004's router, uniform 10 % load, cycles 600-900 timed) run
  alone, then as many copies at once as the process may use cores, each in its own process. The copies share
  nothing but the machine (its memory controllers, caches and the host under this virtual machine), so
  copies x alone / at-once is the most a partitioned engine could gain: the work of one run split among threads
  that never wait for each other. Best of `--rounds` for both.
- **A stage boundary**: the round trip of a spin barrier between the threads (each publishes its epoch in a cache
  line of its own and waits for the others'), what a partitioned engine pays at each step of a cycle where
  threads exchange arrivals and credits; and the start of a numba `prange` region, called from Python.
Rewrites the `threads` section of perf/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))

from fastnet.kernels._jit import load_acquire, store_release  # noqa: E402
LINE = 8  # int64s per cache line: each thread's epoch in a line of its own


@njit(parallel=True)
def _barriers(epochs, threads, rounds):
    """`rounds` barriers among `threads` threads: each stores its epoch, then waits for every other's."""
    for k in prange(threads):
        for e in range(1, rounds + 1):
            store_release(epochs, k * LINE, e)
            for j in range(threads):
                while load_acquire(epochs, j * LINE) < e:
                    pass
    return 0


@njit(parallel=True)
def _region(out):
    for k in prange(len(out)):
        out[k] = k
    return 0


@njit
def _serial(out):
    out[0] = 0
    return 0


def stage_boundary(threads: int) -> tuple[float, float, float]:
    """(ns per spin barrier, best and worst of five runs: it swings with where the host runs the virtual CPUs; us
    per prange region started from Python beyond a serial kernel's call)."""
    epochs = np.zeros(threads * LINE, np.int64)
    _barriers(epochs, threads, 10)
    times = []
    for _ in range(5):
        epochs[:] = 0
        t = time.perf_counter()
        _barriers(epochs, threads, 200_000)
        times.append((time.perf_counter() - t) / 200_000 * 1e9)
    out = np.zeros(threads, np.int64)
    _region(out), _serial(out)
    calls = []
    for f in (_region, _serial):
        t = time.perf_counter()
        for _ in range(10_000):
            f(out)
        calls.append((time.perf_counter() - t) / 10_000 * 1e6)
    return min(times), max(times), calls[0] - calls[1]


def scale_case(name: str) -> dict:
    out = subprocess.run([sys.executable, str(ROOT / "perf" / "scale_bench.py"), "--child", name],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def side_by_side(name: str, copies: int, rounds: int) -> tuple[float, float]:
    """(ms per cycle alone, mean ms per cycle of `copies` runs at once), each the best of `rounds`."""
    from concurrent.futures import ThreadPoolExecutor

    alone = min(scale_case(name)["ms_per_cycle"] for _ in range(rounds))
    together = float("inf")
    with ThreadPoolExecutor(copies) as pool:
        for _ in range(rounds):
            runs = list(pool.map(scale_case, [name] * copies))
            together = min(together, sum(r["ms_per_cycle"] for r in runs) / copies)
    return alone, together


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="sf37,sf163", help="perf/scale_bench.py cases")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    numba.set_num_threads(min(cores, numba.config.NUMBA_NUM_THREADS))
    threads = numba.get_num_threads()
    barrier_lo, barrier_hi, region_us = stage_boundary(threads)
    print(f"spin barrier of {threads} threads: {barrier_lo:.0f}-{barrier_hi:.0f} ns; prange region: {region_us:.1f} us",
          flush=True)
    rows = [f"| case | wall per cycle alone (ms) | {cores} at once, each (ms) | work done at once / alone |",
            "|---|---:|---:|---:|"]
    for name in args.cases.split(","):
        alone, together = side_by_side(name, cores, args.rounds)
        rows.append(f"| {name} | {alone:.3g} | {together:.3g} | {cores * alone / together:.2f}x |")
        print(rows[-1], flush=True)
    body = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {cores} cores, Python "
            f"{platform.python_version()} by `python perf/threads_ceiling.py` (best of {args.rounds}).\n\n"
            + "\n".join(rows) + f"\n\nA spin barrier among {threads} threads: {barrier_lo:.0f}-{barrier_hi:.0f} ns a "
            "round trip (best and worst of five);\na "
            f"`prange` region started from Python: {region_us:.1f} us more than a serial kernel's call.")
    if not args.no_readme:
        from markers import replace_section

        replace_section(ROOT / "perf" / "README.md", "threads", body)


if __name__ == "__main__":
    main()
