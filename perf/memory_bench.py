"""Calibrate fastnet/memory.py's estimate: its figure against the peak RSS of real runs.

    python perf/memory_bench.py                 # every case, one at a time; rewrites perf/README.md's table
    python perf/memory_bench.py --cases q13_ur01 q37_ur01

Each case runs in its own process, so its peak RSS (fastnet.memory.peak_rss) is its own: fastnet.sim.prepare,
a run of the case's cycles from an empty network, the end-of-run audit, the results dataset and its zarr write.
The estimate is taken from the same prepared network. Kernels load from numba's cache (run a case twice after
changing kernels), so the runtime's compile allowance (fastnet/memory.py KERNEL_BYTES) is not used. The
million-node case builds in ~16 s and runs ~17 cycles/s: it runs 300 cycles, past the ~205-cycle latency of
its packets, so its packets in flight have reached their steady number.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from children import in_child

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))

SEED004 = {"links": {"latency": 20}, "router": {"vcs": 2, "buffer_phits": 1600, "delay": 39, "speedup": 1.0},
           "routing": {"algorithm": "min"}}


def slimfly(q: int, p: int | str, load: float, pattern: str = "uniform") -> dict:
    return {**SEED004, "topology": {"kind": "slimfly", "q": q, "p": p},
            "traffic": {"load": load, "packet_phits": 8, "pattern": pattern}}


CASES = {  # name: (what, config, cycles)
    "q13_ur01": ("Slim Fly q=13 p=9 (3,042 nodes), uniform 0.071", slimfly(13, 9, 0.071), 4000),
    "q13_ur09": ("Slim Fly q=13 p=9, uniform 0.639 (90 % of seed 004's scale)", slimfly(13, 9, 0.639), 4000),
    "q13_val04": ("Slim Fly q=13 p=9, Valiant (4 VCs of 800 phits), uniform 0.284", {
        **slimfly(13, 9, 0.284), "routing": {"algorithm": "val"}, "router": {**SEED004["router"], "vcs": 4,
                                                                              "buffer_phits": 800}}, 4000),
    "q37_ur01": ("Slim Fly q=37 p=27 (73,926 nodes), uniform 0.071", slimfly(37, "auto", 0.071), 1500),
    "q37_ur05": ("Slim Fly q=37 p=27, uniform 0.355", slimfly(37, "auto", 0.355), 1500),
    "q163_ur01": ("Slim Fly q=163 p=19 (1,009,622 nodes, 14.0 M ports), uniform 0.071", slimfly(163, 19, 0.071),
                  300),
}


def child(name: str) -> dict:
    import fastnet.sim as sim
    from fastnet.kernels.state import C_CREATED, C_DELIVERED
    from fastnet.memory import memory_estimate, peak_rss
    from fastnet.results import to_dataset
    from fastnet.store import write_dataset

    _, cfg, cycles = CASES[name]
    cfg = {**cfg, "sim": {"warmup": 0, "measure": cycles, "drain": 0}}
    t0 = time.perf_counter()
    s = sim.prepare(cfg)
    est = memory_estimate(s.net, s.routes, s.cfg, s.params.vcs, s.params.hop_limit, extra=(s.traffic, s.workload))
    built = time.perf_counter() - t0
    live = []
    sim.simulate(s, progress=lambda t, end: live.append(int(s.state.ctr[C_CREATED] - s.state.ctr[C_DELIVERED])))
    ds = to_dataset(s, wall_seconds=time.perf_counter() - t0)
    with tempfile.TemporaryDirectory() as tmp:
        write_dataset(ds, Path(tmp) / "r.zarr")
    return {"name": name, "ports": s.net.n_ports, "nodes": s.net.n_nodes, "cycles": int(s.cycle),
            "estimate": est.total, "parts": est._asdict(), "peak_rss": peak_rss(),
            "packets_pool": len(s.state.pk), "events_pool": len(s.state.ev), "live_max": max(live, default=0),
            "build_s": built, "wall_s": time.perf_counter() - t0}


def table(results: list[dict]) -> str:
    lines = [f"Measured {dt.date.today()} on {platform.machine()}, Python {platform.python_version()} by "
             "`python perf/memory_bench.py`; kernels loaded from the cache.", "",
             "| case | ports | cycles | packets in flight (est. / max seen) | pools (packets, events) | "
             "estimate (MB) | peak RSS (MB) | estimate / peak | wall (s) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        what = CASES[r["name"]][0]
        lines.append(f"| {what} | {r['ports']:,} | {r['cycles']:,} | {r['parts']['in_flight']:,} / "
                     f"{r['live_max']:,} | {r['packets_pool']:,}, {r['events_pool']:,} | "
                     f"{r['estimate'] / 2**20:,.0f} | {r['peak_rss'] / 2**20:,.0f} | "
                     f"{r['estimate'] / r['peak_rss']:.2f} | {r['wall_s']:.0f} |")
    big = results[-1]["parts"]
    lines += ["", "Estimate of the last case by part (MB): " + ", ".join(
        f"{k} {v / 2**20:,.0f}" for k, v in big.items() if k != "in_flight") + "."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--child")
    ap.add_argument("--no-write", action="store_true", help="print the table, leave perf/README.md alone")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    results = []
    for name in args.cases:  # one at a time: the largest takes 6 GB of this 23 GB machine
        results.append(in_child(__file__, name))
        r = results[-1]
        print(f"{name}: estimate {r['estimate'] / 2**20:,.0f} MB, peak RSS {r['peak_rss'] / 2**20:,.0f} MB "
              f"({r['wall_s']:.0f} s)", flush=True)
    text = table(results)
    print(text)
    if not args.no_write:
        from markers import replace_section

        replace_section(HERE / "README.md", "memory", text)


if __name__ == "__main__":
    main()
