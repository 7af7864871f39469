"""Idle time skipped: a 64-rank 3-D halo exchange on a 4x4x4 torus, 100 iterations, each computing 30 ms, then
300 ms (3 s and 30 s simulated, 3.75e9 and 3.75e10 cycles of 0.8 ns). The wall time should not grow with the
simulated time: it follows the messages, not the cycles (sim.skip_idle; engine/loop.py network_idle).

    python perf/idle_bench.py        # prints the table and rewrites perf/README.md's `idle` section

Each run is warm (a 1-iteration run first loads the kernels); wall time of fastnet.run, dataset included.
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402

import fastnet  # noqa: E402


def config(compute_ms: float, iterations: int = 100) -> dict:
    return {"topology": {"kind": "torus", "dims": [4, 4, 4]},
            "workload": {"kind": "mpi", "program": "halo3d", "tasks": 64, "iterations": iterations,
                         "compute_cycles": round(compute_ms * 1e6 / 0.8)}}  # 0.8 ns: 4-byte phits at 40 Gb/s


def main() -> None:
    fastnet.run(config(30, iterations=1))
    rows = ["| compute per iteration | simulated (s) | cycles | messages | wall (s) |", "|---:|---:|---:|---:|---:|"]
    walls = []
    for ms in (30, 300):
        t0 = time.perf_counter()
        ds = fastnet.run(config(ms))
        walls.append(time.perf_counter() - t0)
        rows.append(f"| {ms} ms | {ds.execution_ns.item() / 1e9:.2f} | {int(ds.execution_cycles):,} "
                    f"| {int(ds.messages):,} | {walls[-1]:.2f} |")
    text = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, 2 cores, Python "
            f"{platform.python_version()} by `python perf/idle_bench.py`: 10x the computation changes the wall "
            f"time by {walls[1] / walls[0] - 1:+.0%} (judged: at most +20 %).\n\n" + "\n".join(rows))
    print(text)
    replace_section(ROOT / "perf" / "README.md", "idle", text)


if __name__ == "__main__":
    main()
