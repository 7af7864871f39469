"""Seed 002 §4 on fastnet: 8x4 torus vs 8x4 twisted torus (twist 4) under the micro-kernels, and Fig 8's wave sweep.

Writes the tables between the `seed002` markers of docs/workloads.md.

    python docs/gen_seed002.py [--seeds 10] [--workers 2] [--fig8-seeds 3] [--vcs 12 | --vcs auto]

Setup (fastnet/workloads/presets.py: seed002; seed 002 does not give INSEE's router parameters, these are
assumptions): 32 nodes, one per router; 4-byte phits, 16-phit (64-byte) packets, virtual cut-through, 4 packets
of buffer per VC, random minimal routing with hop-indexed VCs, link latency 1, router delay 3 cycles, multiple
consumption (FSIN's: every input port of a router delivers to its node at once). VCs: hop
indexing needs 6 classes on the torus (diameter 6) and 4 on the twisted torus (diameter 4). `--vcs 12` (the
default) gives both networks the same router, 12 VCs per port (2 per class on the torus, 3 on the twisted
torus); `--vcs auto` gives each the fewest it needs (6 and 4), so the torus has more buffering. A2A, A2O and O2A
move 10 KB
messages; SR10, SR100, SR1000 and GUPS move 10,000 messages of 1 KB in waves of 10, 100, 1000 and 10,000.
Each workload runs with `--seeds` seeds (different message sets for SR/GUPS, different routing choices for the
collectives); tables give the mean and the 99 % confidence interval of the mean (Student t).
"""

from __future__ import annotations

import argparse
import multiprocessing
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
SPAWN = multiprocessing.get_context("spawn")  # the parent has run numba's OpenMP layer: never fork it
sys.path.insert(0, str(ROOT))

from markers import replace_section  # noqa: E402 (docs/markers.py, next to this script)

TOPOLOGIES = ("torus", "twisted")
WORKLOADS = {
    "A2A": {"kind": "a2a", "message_bytes": 10240},
    "A2O": {"kind": "a2o", "message_bytes": 10240},
    "O2A": {"kind": "o2a", "message_bytes": 10240},
    "SR10": {"kind": "sr", "message_bytes": 1024, "messages": 10000, "wave": 10},
    "SR100": {"kind": "sr", "message_bytes": 1024, "messages": 10000, "wave": 100},
    "SR1000": {"kind": "sr", "message_bytes": 1024, "messages": 10000, "wave": 1000},
    "GUPS": {"kind": "gups", "message_bytes": 1024, "messages": 10000},
}


def run_one(args: tuple) -> tuple:
    topology, name, workload, seed, vcs = args
    import fastnet
    from fastnet.workloads.presets import seed002

    t0 = time.perf_counter()
    ds = fastnet.run(seed002(topology, workload, seed, vcs))
    return topology, name, seed, int(ds.execution_cycles.item()), time.perf_counter() - t0


def mean_ci(x: list[float], level: float = 0.99) -> tuple[float, float]:
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return float(x.mean()), float("nan")
    half = stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return float(x.mean()), float(half)


def run_all(jobs: list[tuple], workers: int) -> list[tuple]:
    import fastnet  # compile (or load) the kernels once before the workers start (numba cache, house style 10)
    from fastnet.workloads.presets import seed002

    fastnet.run(seed002("torus", {"kind": "a2a", "message_bytes": 64, "tasks": 4}))
    with ProcessPoolExecutor(workers, mp_context=SPAWN) as ex:
        return list(ex.map(run_one, jobs, chunksize=1))


def fig7_table(results: list[tuple], n_seeds: int) -> str:
    cycles: dict[tuple[str, str], list[int]] = {}
    for topology, name, _, c, _ in results:
        cycles.setdefault((topology, name), []).append(c)
    lines = [
        "| workload | torus (cycles) | twisted torus (cycles) | twisted / torus | 99 % CI of the ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in WORKLOADS:
        a, b = cycles[("torus", name)], cycles[("twisted", name)]
        ma, ha = mean_ci(a)
        mb, hb = mean_ci(b)
        r = mb / ma
        hr = r * math.sqrt((ha / ma) ** 2 + (hb / mb) ** 2)  # first-order propagation of the two intervals
        lines.append(f"| {name} | {ma:,.0f} ± {ha:,.0f} | {mb:,.0f} ± {hb:,.0f} | {r:.3f} | ± {hr:.3f} |")
    return "\n".join(lines) + f"\n\nMean ± half-width of the 99 % confidence interval over {n_seeds} seeds."


def fig8_table(results: list[tuple], n_seeds: int) -> str:
    cycles: dict[tuple[str, int], list[int]] = {}
    for topology, name, _, c, _ in results:
        cycles.setdefault((topology, int(name)), []).append(c)
    lines = ["| W | torus (cycles) | twisted torus (cycles) | (torus - twisted) / torus |", "|---:|---:|---:|---:|"]
    for k in range(1, 15):
        W = 2**k
        ma, ha = mean_ci(cycles[("torus", W)])
        mb, hb = mean_ci(cycles[("twisted", W)])
        lines.append(f"| {W:,} | {ma:,.0f} ± {ha:,.0f} | {mb:,.0f} ± {hb:,.0f} | {(ma - mb) / ma:+.1%} |")
    return "\n".join(lines) + f"\n\n16,384 messages of 1 KB, W = 2^k; mean ± 99 % CI over {n_seeds} seeds."


def write_section(marker: str, body: str) -> None:
    replace_section(ROOT / "docs" / "workloads.md", marker, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--fig8-seeds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-fig7", action="store_true")
    ap.add_argument("--skip-fig8", action="store_true")
    ap.add_argument("--vcs", default="12", help='VCs per port on both networks, or "auto"')
    a = ap.parse_args()
    vcs = a.vcs if a.vcs == "auto" else int(a.vcs)
    tag = "auto" if vcs == "auto" else "equal"
    if not a.skip_fig7:
        t0 = time.perf_counter()
        jobs = [(topo, name, w, seed, vcs) for name, w in WORKLOADS.items() for topo in TOPOLOGIES
                for seed in range(1, a.seeds + 1)]
        res = run_all(jobs, a.workers)
        stamp = f"Generated {time.strftime('%Y-%m-%d')} by `python docs/gen_seed002.py --seeds {a.seeds} --vcs {a.vcs}`"
        elapsed = time.perf_counter() - t0
        write_section(f"seed002-fig7-{tag}", fig7_table(res, a.seeds) + f"\n{stamp} ({elapsed:.0f} s).")
        print(fig7_table(res, a.seeds))
    if not a.skip_fig8:
        t1 = time.perf_counter()
        jobs = [(topo, str(2**k), {"kind": "sr", "message_bytes": 1024, "messages": 16384, "wave": 2**k}, seed, vcs)
                for k in range(1, 15) for topo in TOPOLOGIES for seed in range(1, a.fig8_seeds + 1)]
        res8 = run_all(jobs, a.workers)
        body = fig8_table(res8, a.fig8_seeds)
        write_section(f"seed002-fig8-{tag}", body + f"\nGenerated {time.strftime('%Y-%m-%d')} by `python docs/gen_"
                      f"seed002.py --fig8-seeds {a.fig8_seeds} --vcs {a.vcs}` ({time.perf_counter() - t1:.0f} s).")
        print(body)


if __name__ == "__main__":
    main()
