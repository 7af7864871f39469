"""Models vs the cycle engine on single-path routing: the table of docs/throughput.md "Cross-check".

Each case runs `fastnet.throughput.crosscheck.crosscheck` (the engine's pattern on the engine's routes) at 0.9 and
1.1 times the MCF saturation load and at 1.0, and prints one markdown row.

    python perf/throughput_crosscheck.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastnet.throughput.crosscheck import crosscheck  # noqa: E402

SIM = {"warmup": 10000, "measure": 20000, "drain": 20000}
CASES = [
    ("ring 11, min", {"kind": "torus", "dims": [11], "p": 1}, "min", "permutation", 3),
    ("torus 5x5, dor", {"kind": "torus", "dims": [5, 5], "p": 1}, "dor", "permutation", 1),
    ("torus 5x5, dor", {"kind": "torus", "dims": [5, 5], "p": 1}, "dor", "permutation", 2),
    ("torus 5x5, dor", {"kind": "torus", "dims": [5, 5], "p": 1}, "dor", "permutation", 3),
    ("torus 7x7, dor", {"kind": "torus", "dims": [7, 7], "p": 1}, "dor", "permutation", 1),
    ("torus 5x5, p = 2, dor", {"kind": "torus", "dims": [5, 5], "p": 2}, "dor", "permutation", 1),
    ("torus 3x3x3, dor", {"kind": "torus", "dims": [3, 3, 3], "p": 1}, "dor", "permutation", 1),
    ("mesh 4x4, dor", {"kind": "mesh", "dims": [4, 4], "p": 1}, "dor", "permutation", 1),
    ("torus 5x5, dor", {"kind": "torus", "dims": [5, 5], "p": 1}, "dor", "tornado", 1),
    ("torus 5x5, dor, 4 VCs", {"kind": "torus", "dims": [5, 5], "p": 1}, "dor", "tornado", 1),
    ("torus 5x5, dor", {"kind": "torus", "dims": [5, 5], "p": 1}, "dor", "uniform", 1),
]


def main() -> None:
    print("| network, routing | pattern (seed) | MCF | sim at 0.9 / 1.1 x MCF | sim at 1.0 | MMF | HM | JM | "
          "max total | sim / MMF | MMF-full links' sim utilisation |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, topo, routing, pattern, seed in CASES:
        t0 = time.perf_counter()
        router = {"vcs": 4} if "4 VCs" in name else {}
        ds = crosscheck({"topology": topo, "routing": {"algorithm": routing}, "traffic": {"pattern": pattern},
                         "router": router, "sim": dict(SIM, seed=seed)})
        m = {k: float(ds.model_throughput_per_node.sel(model=k)) for k in ds.model.values.tolist()}
        loads = ds["traffic.load"].values
        sat = ds.sim_saturated.values
        acc = ds.sim_accepted_phits_per_node_cycle.values
        state = " / ".join(("saturated" if s else "stable") + f" ({a:.3f})" for s, a in zip(sat[:-1], acc[:-1]))
        full = ds.mmf_saturated_link.values
        util = ds.sim_port_utilization.isel({"traffic.load": -1}).values[full].mean() if full.any() else float("nan")
        print(f"| {name} | {pattern} ({seed}) | {m['mcf']:.3f} | {state} | {acc[-1]:.3f} | {m['mmf']:.3f} | "
              f"{m['hm']:.3f} | {m['jm']:.3f} | {float(ds.max_total_per_node):.3f} | {acc[-1] / m['mmf']:.3f} | "
              f"{util:.3f} |", flush=True)
        print(f"  {name} {pattern}: loads {loads.tolist()}, {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
