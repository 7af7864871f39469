"""The "Several jobs" table of docs/mpi.md: two 512-rank alltoalls on the 1,056-node dragonfly (the embedded
default network), minimal routing, alone and together, on interleaved nodes and on disjoint groups.

    python docs/gen_jobs.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402

import fastnet  # noqa: E402

A2A = {"program": "alltoall", "message_bytes": 256, "tasks": 512}
PLACEMENTS = {  # two jobs' nodes: every other node (each in all 33 groups), or groups 0-15 and 16-31
    "interleaved nodes": ([0, 1056, 2], [1, 1056, 2]),
    "disjoint groups": ([0, 512], [512, 1024]),
}


def run(*nodes: list[int]) -> list[int]:
    ds = fastnet.run({"routing": {"algorithm": "min"}, "sim": {"max_cycles": 10**9},
                      "workload": {"kind": "mpi", "jobs": [{**A2A, "nodes": n} for n in nodes]}})
    return ds.job_execution_cycles.values.tolist()


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


if __name__ == "__main__":
    main()
