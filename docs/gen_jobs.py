"""The "Several jobs" tables of docs/mpi.md: two 512-rank alltoalls on the 1,056-node dragonfly (the embedded
default network), minimal routing, alone and together, on interleaved nodes and on disjoint groups; and one of
them beside open-loop background traffic on the other nodes, at increasing loads.

    python docs/gen_jobs.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402

import fastnet  # noqa: E402

A2A = {"program": "alltoall", "message_bytes": 256, "tasks": 512}
PLACEMENTS = {  # two jobs' nodes: every other node (each in all 33 groups), or groups 0-15 and 16-31
    "interleaved nodes": ([0, 1056, 2], [1, 1056, 2]),
    "disjoint groups": ([0, 512], [512, 1024]),
}


BACKGROUND_LOADS = (0.1, 0.2, 0.3, 0.4)  # phits per background node per cycle


def run_jobs(jobs: list[dict]):
    return fastnet.run({"routing": {"algorithm": "min"}, "sim": {"max_cycles": 10**9},
                        "workload": {"kind": "mpi", "jobs": jobs}})


def run(*nodes: list[int]) -> list[int]:
    return run_jobs([{**A2A, "nodes": n} for n in nodes]).job_execution_cycles.values.tolist()


def background_table() -> str:
    """The alltoall on the even nodes, uniform background traffic among the odd ones."""
    t0 = time.perf_counter()
    app = {**A2A, "nodes": [0, 1056, 2]}
    alone = run_jobs([app])
    rows = ["| background load | alltoall (cycles) | slowdown | its message latency (cycles) | background accepted "
            "| background packet latency (cycles) | unstable |", "|---:|---:|---:|---:|---:|---:|---:|",
            f"| none | {int(alone.job_execution_cycles[0]):,} |  | {alone.message_latency_mean.item():,.0f} |  |  |  |"]
    for load in BACKGROUND_LOADS:
        ds = run_jobs([app, {"kind": "open_loop", "nodes": [1, 1056, 2], "load": load}])
        cycles = int(ds.job_execution_cycles[0])
        rows.append(f"| {load} | {cycles:,} | {cycles / int(alone.job_execution_cycles[0]) - 1:+.1%} "
                    f"| {ds.message_latency_mean.item():,.0f} | {ds.accepted_phits_per_node_cycle.item():.3f} "
                    f"| {ds.packet_latency_mean.item():.1f} | {int(ds.unstable)} |")
    return (f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_jobs.py` ({time.perf_counter() - t0:.0f} s): "
            "the first alltoall above (512 ranks on the even nodes, 256 B), alone and beside a job of kind "
            "`open_loop` on the 528 odd nodes, minimal routing.\n\n" + "\n".join(rows))


def main() -> None:
    t0 = time.perf_counter()
    rows = ["| placement | job | nodes | alone (cycles) | together (cycles) | slowdown |", "|---|---:|---|---:|---:|---:|"]
    for name, (a, b) in PLACEMENTS.items():
        together = run(a, b)
        for j, (nodes, both) in enumerate(zip((a, b), together)):
            alone = run(nodes)[0]
            rows.append(f"| {name} | {j} | range{tuple(nodes)} | {alone:,} | {both:,} | {both / alone - 1:+.1%} |")
    body = (f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_jobs.py` ({time.perf_counter() - t0:.0f} s): "
            "two alltoall programs of 512 ranks and 256 B (`[workload] kind = \"mpi\"`, `jobs = [...]`), on the "
            "embedded 1,056-node dragonfly (33 groups of 32 nodes) with minimal routing.\n\n" + "\n".join(rows))
    replace_section(ROOT / "docs" / "mpi.md", "mpi-jobs", body)
    replace_section(ROOT / "docs" / "mpi.md", "mpi-background", background_table())


if __name__ == "__main__":
    main()
