"""How the cost of a cycle grows with the network (issue: a million nodes on one small machine): Slim Fly q = 13,
37, 73, 163 and balanced dragonflies (a = 2p = 2h) from 1,056 to about a million nodes, all with seed 004's router
(perf/million_bench.py NETWORK: 2 VCs of 1,600 phits, 39-cycle routers, 20-cycle links, 8-phit packets of 32 B,
speedup 1), minimal routing, uniform traffic at 10 % load (Slim Fly: 0.071 phits/node/cycle, seed 004's 100 % being
0.71; dragonfly: 0.1).

    python perf/scale_bench.py [--cases sf13,sf37@2,...] [--no-readme]

A case named NAME@N runs with sim.threads = N (kernels/crew.py), NAME alone with one thread; the default runs
each network with 1 and 2.

Each case runs in its own process (peak RSS is its own; kernels come from numba's cache: run the script twice for
warm figures): `prepare` (the build), then cycles 0..WARM (the first packets cross the network), then MEASURE
cycles timed. Columns: build (s), wall per simulated cycle (ms), phit-hops per second over the timed cycles, peak
RSS (GB), bytes of RSS per node, and the wall time of one packet-hop (a switch traversal of an 8-phit packet: the
unit perf/memory_latency.py's miss latencies compare with).
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))
sys.path.insert(0, str(ROOT / "perf"))

from children import case_args, in_child  # noqa: E402
from million_bench import NETWORK  # noqa: E402

WARM, MEASURE = 600, 300
CASES = {  # name: (topology, load)
    "sf13": ({"kind": "slimfly", "q": 13, "p": "auto"}, 0.071),  # auto: p = ceil(k'/2), balanced
    "sf37": ({"kind": "slimfly", "q": 37, "p": "auto"}, 0.071),
    "sf73": ({"kind": "slimfly", "q": 73, "p": "auto"}, 0.071),
    "sf163": ({"kind": "slimfly", "q": 163, "p": 19}, 0.071),
    "df4": ({"kind": "dragonfly", "p": 4, "a": 8, "h": 4}, 0.1),
    "df8": ({"kind": "dragonfly", "p": 8, "a": 16, "h": 8}, 0.1),
    "df16": ({"kind": "dragonfly", "p": 16, "a": 32, "h": 16}, 0.1),
    "df22": ({"kind": "dragonfly", "p": 22, "a": 44, "h": 22}, 0.1),
}


def _case(name: str) -> tuple[str, int]:
    """(network, threads) of a case name NAME or NAME@THREADS."""
    network, _, threads = name.partition("@")
    return network, int(threads or 1)


def case_config(name: str, threads: int) -> dict:
    """The run of network `name` (CASES) with seed 004's router, its cycles timed by the caller."""
    topo, load = CASES[name]
    cfg = json.loads(json.dumps(NETWORK))
    del cfg["workload"]
    cfg["topology"] = topo
    cfg["traffic"].update(pattern="uniform", load=load)
    cfg["sim"] = {"warmup": 0, "measure": 10**6, "drain": 0, "threads": threads}
    return cfg


def advance(run, s, t: int, target: int) -> int:
    """Simulate s from cycle t to `target` with the cycle loop `run` (no budget), growing its pools as asked."""
    from fastnet.engine.loop import GROW
    from fastnet.sim import call_loop, grow_pools

    while t < target:
        status, t, low, _ = call_loop(run, s, t, target, 2**62, False)
        if status == GROW:
            grow_pools(s, low)
    return t


def network_label(name: str, p: int) -> str:
    """How the tables name network `name` (CASES), p its measured nodes a router."""
    topo = CASES[name][0]
    if topo["kind"] == "slimfly":
        return f"Slim Fly q={topo['q']}, p={topo['p']}" + (f" ({p})" if topo["p"] == "auto" else "")
    return f"dragonfly p={topo['p']}, a={topo['a']}, h={topo['h']}"


def child(name: str) -> dict:
    from fastnet.kernels.state import C_PHIT_HOPS
    from fastnet.memory import peak_rss
    from fastnet.sim import compile_kernels, prepare

    t0 = time.perf_counter()
    s = prepare(case_config(*_case(name)))
    run = compile_kernels(s)
    build = time.perf_counter() - t0
    t = advance(run, s, 0, WARM)
    w0, h0 = time.perf_counter(), int(s.state.ctr[C_PHIT_HOPS])
    advance(run, s, t, WARM + MEASURE)
    wall = time.perf_counter() - w0
    hops = int(s.state.ctr[C_PHIT_HOPS]) - h0
    return {"p": s.net.n_nodes // s.net.n_routers, "nodes": s.net.n_nodes, "ports": s.net.n_ports,
            "build_s": build, "ms_per_cycle": 1000 * wall / MEASURE, "phit_hops_per_s": hops / wall,
            "peak_gb": peak_rss() / 1e9}


def main() -> None:
    from markers import replace_section

    args = case_args([f"{name}@{n}" for name in CASES for n in (1, 2)], child)
    if args is None:
        return
    rows = ["| network | threads | nodes | ports | load | build (s) | wall per cycle (ms) | phit-hops/s "
            "| peak RSS (GB) | RSS per node (kB) | wall per packet-hop (ns) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case in args.cases.split(","):
        r = in_child(__file__, case)
        name, threads = _case(case)
        load = CASES[name][1]
        rows.append(f"| {network_label(name, r['p'])} | {threads} | {r['nodes']:,} | {r['ports']:,} | {load} | "
                    f"{r['build_s']:.1f} | {r['ms_per_cycle']:.3g} | {r['phit_hops_per_s'] / 1e6:.1f} M | "
                    f"{r['peak_gb']:.2f} | {r['peak_gb'] * 1e6 / r['nodes']:.1f} | "
                    f"{1e9 * NETWORK['traffic']['packet_phits'] / r['phit_hops_per_s']:,.0f} |")
        print(rows[-1], flush=True)
    body = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, 2 cores, Python "
            f"{platform.python_version()} by `python perf/scale_bench.py` (threads: sim.threads; a thread a core)."
            "\n\n" + "\n".join(rows))
    if not args.no_readme:
        replace_section(ROOT / "perf" / "README.md", "scale", body)


if __name__ == "__main__":
    main()
