"""Seed 000's Graph500 model on fastnet: the FOGSim variant against FOGSim v4's measured runs, and the Table IV
dragonfly sweeps of query time and link bandwidth (Figs 8 and 9).

Writes the tables between the `graph500-fogsim` and `graph500-table4` markers of docs/workloads.md.

    python docs/gen_graph500.py --fogsim [--seeds 5]
    python docs/gen_graph500.py --table4 [--roots 3] [--scale 26]

--fogsim runs `variant = "fogsim"` on the network of FOGSim's example config (presets.fogsim_reference) for
every (scale, t_q) of shared/reference/fogsim/graph500_runs.csv with d_r = 2 and root host 60, as FOGSim's
runs had them, and for its root-degree sweep at s = 16, t_q = 4 cycles.

--table4 runs the paper variant on Table IV's dragonfly (presets.table4) at scale 26, edgefactor 16, c_s = 256,
for t_q in 0.5-15 ns and link bandwidths 10, 40 and 100 Gb/s. Each point is the mean over `--roots` BFS roots
whose degrees are drawn from eqs 18-19 with seeds 1.. (the same roots for every point, as the paper's 10).
"""

from __future__ import annotations

import argparse
import multiprocessing
import csv
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SPAWN = multiprocessing.get_context("spawn")  # the parent has run numba's OpenMP layer: never fork it
sys.path.insert(0, str(ROOT))

from markers import replace_section  # noqa: E402 (docs/markers.py, next to this script)

CSV = ROOT.parent / "shared" / "reference" / "fogsim" / "graph500_runs.csv"
TQ_NS = (0.5, 1.0, 1.5, 2.5, 4.0, 7.0, 10.0, 15.0)
GBPS = (10.0, 40.0, 100.0)


def run_fogsim(args: tuple) -> tuple:
    scale, tq, dr, seed = args
    import fastnet
    from fastnet.workloads.presets import fogsim_reference

    ds = fastnet.run(fogsim_reference(scale, tq, seed=seed, root_degree=dr))
    return (scale, tq, dr, seed, int(ds.execution_cycles.item()), int(ds.level_messages.sum()),
            int(ds.levels.item()), ds.level_messages.values.tolist(), float(ds.queries_received.item()))


def run_table4(args: tuple) -> tuple:
    scale, tq, gbps, dr = args
    import fastnet
    from fastnet.workloads.presets import table4

    t0 = time.perf_counter()
    ds = fastnet.run(table4(scale, tq, gbps, root_degree=dr))
    return (tq, gbps, dr, float(ds.execution_seconds.item()), float(ds.network_usage_phits_per_node_cycle.item()),
            int(ds.execution_cycles.item()), time.perf_counter() - t0)


def warm() -> None:
    import fastnet  # fill the numba cache once before the workers start
    from fastnet.workloads.presets import fogsim_reference

    fastnet.run(fogsim_reference(8, 1.0))


def reference_rows() -> list[dict]:
    with CSV.open() as f:
        return list(csv.DictReader(f))


def fogsim_tables(seeds: int, workers: int) -> str:
    rows = reference_rows()
    cases = sorted({(int(r["scale"]), float(r["query_time_cycles"]), int(r["root_degree"])) for r in rows})
    jobs = [(s, tq, dr, seed) for (s, tq, dr) in cases for seed in range(1, seeds + 1)]
    warm()
    with ProcessPoolExecutor(workers, mp_context=SPAWN) as ex:
        res = list(ex.map(run_fogsim, jobs, chunksize=1))
    out = ["| s | t_q (cycles) | d_r | FOGSim cycles (mean ± sd) | fastnet cycles (mean ± sd) | ratio | "
           "FOGSim msgs | fastnet msgs | FOGSim levels | fastnet levels |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s, tq, dr in cases:
        ref = [r for r in rows if (int(r["scale"]), float(r["query_time_cycles"]), int(r["root_degree"])) ==
               (s, tq, dr)]
        rc = np.array([float(r["exec_cycles"]) for r in ref])
        rm = np.array([float(r["p2p_messages"]) for r in ref])
        rl = sorted({int(r["levels"]) for r in ref})
        mine = [x for x in res if x[:3] == (s, tq, dr)]
        fc = np.array([x[4] for x in mine])
        fm = np.array([x[5] for x in mine])
        fl = sorted({x[6] for x in mine})
        out.append(f"| {s} | {tq:g} | {dr} | {rc.mean():,.0f} ± {rc.std():,.0f} | {fc.mean():,.0f} ± "
                   f"{fc.std():,.0f} | {fc.mean() / rc.mean():.3f} | {rm.mean():,.0f} | {fm.mean():,.0f} | "
                   f"{'/'.join(map(str, rl))} | {'/'.join(map(str, fl))} |")
    return "\n".join(out) + (f"\n\nFOGSim: {len(rows)} runs of graph500_runs.csv (3-5 seeds per row); fastnet: "
                             f"{seeds} seeds per row. Messages are query messages (p2p_messages).")


def table4_tables(scale: int, roots: int, workers: int) -> str:
    from fastnet.workloads.build import draw_root_degree

    degrees = [draw_root_degree(scale, np.random.default_rng([seed, 0x6500])) for seed in range(1, roots + 1)]
    jobs = [(scale, tq, g, dr) for g in GBPS for tq in TQ_NS for dr in degrees]
    warm()
    with ProcessPoolExecutor(workers, mp_context=SPAWN) as ex:
        res = list(ex.map(run_table4, jobs, chunksize=1))
    secs = {(tq, g): np.mean([x[3] for x in res if x[:2] == (tq, g)]) for tq in TQ_NS for g in GBPS}
    use = {(tq, g): np.mean([x[4] for x in res if x[:2] == (tq, g)]) for tq in TQ_NS for g in GBPS}
    head = "| t_q (ns) | " + " | ".join(f"{g:g} Gb/s" for g in GBPS) + " |"
    sep = "|---:|" + "---:|" * len(GBPS)
    a = [head, sep] + [f"| {tq:g} | " + " | ".join(f"{secs[(tq, g)] * 1e3:,.1f}" for g in GBPS) + " |"
                       for tq in TQ_NS]
    b = [head, sep] + [f"| {tq:g} | " + " | ".join(f"{use[(tq, g)]:.3f}" for g in GBPS) + " |" for tq in TQ_NS]
    wall = sum(x[6] for x in res)
    return ("**BFS execution time (ms), mean over roots** (Fig 8a; each column is a link bandwidth):\n\n"
            + "\n".join(a) + "\n\n**Network usage (phits/node/cycle)** (Fig 9):\n\n" + "\n".join(b)
            + f"\n\nScale {scale}, edgefactor 16, c_s = 256, paper variant, MIN routing; root degrees "
              f"{degrees} (drawn from eqs 18-19, seeds 1-{roots}); {len(res)} BFS runs, {wall / 60:.0f} min of "
              f"simulation.")


def write_section(marker: str, body: str) -> None:
    replace_section(ROOT / "docs" / "workloads.md", marker, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fogsim", action="store_true")
    ap.add_argument("--table4", action="store_true")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--roots", type=int, default=3)
    ap.add_argument("--scale", type=int, default=26)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    if a.fogsim:
        t0 = time.perf_counter()
        body = fogsim_tables(a.seeds, a.workers)
        write_section("graph500-fogsim", body + f"\nGenerated {time.strftime('%Y-%m-%d')} by `python docs/"
                      f"gen_graph500.py --fogsim --seeds {a.seeds}` ({time.perf_counter() - t0:.0f} s).")
        print(body)
    if a.table4:
        t0 = time.perf_counter()
        body = table4_tables(a.scale, a.roots, a.workers)
        write_section("graph500-table4", body + f"\nGenerated {time.strftime('%Y-%m-%d')} by `python docs/"
                      f"gen_graph500.py --table4 --roots {a.roots} --scale {a.scale}` "
                      f"({time.perf_counter() - t0:.0f} s).")
        print(body)


if __name__ == "__main__":
    main()
