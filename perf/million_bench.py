"""MPI collectives at full scale on the cycle-level network (issue: real applications at full scale): seed 004's
1,009,622-node Slim Fly (q = 163, p = 19) with its router, minimal routing, one rank per node.

    python perf/million_bench.py [--cases bcast1m,barrier256k,allreduce256k] [--no-readme]

- `bcast1m`: a binomial MPI_Bcast of 8 bytes from rank 0 to all 1,009,622 ranks. Judged: at most 60 s for the
  whole process and 16 GB.
- `barrier256k`: a dissemination MPI_Barrier of 262,144 ranks placed linearly (18 rounds). Judged: at most 19 s of
  simulation (LogGOPSim's time for the same schedule, with no network), build not counted.
- `allreduce256k`: the same pattern as an 8-byte MPI_Allreduce (recursive doubling: 18 rounds).

Seed 004's router as docs/validation/slimfly_seed004.py maps it: 32-byte phits on 100 Gb/s links (a 2.56 ns
cycle), 8-phit packets, 2 VCs of 1,600 phits, 39-cycle routers, 20-cycle links, speedup 1. Each case runs in its
own process (its peak RSS is its own, its kernels are loaded from numba's cache: run the script twice for warm
figures). LogGOPSim's figures, measured on this kind of 2-core machine with no network model: the 1,048,576-rank
binomial broadcast in 7.3 s (0.67 GB), the 262,144-rank dissemination in 19 s (1.9 GB, 14.2 M events).
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

from children import ChildFailed, case_args, in_child

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))

NETWORK = {"topology": {"kind": "slimfly", "q": 163, "p": 19},
           "router": {"vcs": 2, "buffer_phits": 1600, "delay": 39, "speedup": 1.0},
           "links": {"latency": 20}, "routing": {"algorithm": "min"},
           "traffic": {"packet_phits": 8, "phit_bytes": 32}, "workload": {"cycle_ns": 2.56}}
CASES = {
    "bcast1m": {"program": "bcast", "message_bytes": 8, "tasks": "all"},
    "barrier256k": {"program": "barrier", "tasks": 262144},
    "allreduce256k": {"program": "allreduce", "message_bytes": 8, "tasks": 262144},
}
LOGGOPSIM = {"bcast1m": "7.3 s, 0.67 GB (1,048,576 ranks)", "barrier256k": "19 s, 1.9 GB, 14.2 M events",
             "allreduce256k": ""}


def child(name: str) -> dict:
    t_process = time.perf_counter()
    import fastnet  # noqa: F401  (imports are part of the whole process)
    from fastnet.memory import peak_rss
    from fastnet.results import to_dataset
    from fastnet.sim import compile_kernels, prepare, simulate

    cfg = json.loads(json.dumps(NETWORK))
    cfg["workload"].update(kind="mpi", **CASES[name])
    t0 = time.perf_counter()
    s = prepare(cfg)
    compile_kernels(s)
    t1 = time.perf_counter()
    simulate(s)
    t2 = time.perf_counter()
    ds = to_dataset(s, wall_seconds=t2 - t0)
    events = int(ds.mpi_events)
    return {"ranks": int(ds.sizes["task"]), "build_s": t1 - t0, "simulate_s": t2 - t1,
            "process_s": time.perf_counter() - t_process, "peak_gb": peak_rss() / 1e9,
            "cycles": int(ds.execution_cycles), "messages": int(ds.messages), "events": events,
            "events_per_s": events / (t2 - t1)}


def main() -> None:
    args = case_args(CASES, child)
    if args is None:
        return
    rows = ["| case | ranks | build (s) | simulate (s) | whole process (s) | peak RSS (GB) | cycles | messages "
            "| MPI events/s | LogGOPSim (no network) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name in args.cases.split(","):
        try:
            r = in_child(__file__, name)
        except ChildFailed as e:  # the row says so, here and in the README
            rows.append(f"| {name} | failed: {e} | | | | | | | | |")
        else:
            rows.append(f"| {name} | {r['ranks']:,} | {r['build_s']:.1f} | {r['simulate_s']:.1f} "
                        f"| {r['process_s']:.1f} | {r['peak_gb']:.2f} | {r['cycles']:,} | {r['messages']:,} "
                        f"| {r['events_per_s']:,.0f} | {LOGGOPSIM[name]} |")
        print(rows[-1], flush=True)
    text = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, 2 cores, Python "
            f"{platform.python_version()} by `python perf/million_bench.py`.\n\n" + "\n".join(rows))
    if not args.no_readme:
        from markers import replace_section

        replace_section(ROOT / "perf" / "README.md", "million", text)


if __name__ == "__main__":
    main()
