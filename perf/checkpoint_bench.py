"""What a checkpoint costs (docs/long_runs.md): its write time and size against the state's size and the run time
between two checkpoints, and the time a resume takes, on seed 004's Slim Fly router at a chosen q.

    python perf/checkpoint_bench.py --q 37 [--p auto] [--every 2000] [--count 3] [--dir /tmp]

Runs `count` intervals of `every` simulated cycles of uniform traffic at 0.071 (the scale table's load), writing a
checkpoint after each (sim.checkpoint_every = every), then resumes from the last one and reads it back. Prints one
JSON object: state_bytes (the arrays a checkpoint holds: simulation state, traffic, workload), file_bytes, each
write's seconds, the run seconds between checkpoints, the network checksum's seconds (once per run), and resume
seconds (reading and prepare). At the default interval (10 min of wall time) the overhead is write / 600 s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def nbytes(obj) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, tuple):
        return sum(nbytes(x) for x in obj)
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--q", type=int, default=37)
    ap.add_argument("--p", default="auto")
    ap.add_argument("--every", type=int, default=2000)
    ap.add_argument("--count", type=int, default=3, help="intervals: count - 1 checkpoints")
    ap.add_argument("--dir", default="/tmp")
    a = ap.parse_args()

    from fastnet import config
    from fastnet.checkpoint import Checkpointer, network_checksum
    from fastnet.sim import compile_kernels, prepare, simulate, start

    p = a.p if a.p == "auto" else int(a.p)
    cfg = config.resolve({
        "topology": {"kind": "slimfly", "q": a.q, "p": p},
        "router": {"vcs": 2, "buffer_phits": 1600, "delay": 39, "speedup": 1.0}, "links": {"latency": 20},
        "routing": {"algorithm": "min"}, "traffic": {"load": 0.071, "packet_phits": 8},
        "sim": {"warmup": 0, "measure": a.every * a.count, "drain": 0, "checkpoint_every": a.every}})
    path = Path(a.dir) / f"fastnet-checkpoint-bench-q{a.q}.ckpt"
    path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    s = prepare(cfg)
    build = time.perf_counter() - t0
    compile_kernels(s)
    t0 = time.perf_counter()
    checksum = network_checksum(s)
    checksum_s = time.perf_counter() - t0
    ck = Checkpointer(path, cfg)
    ck.network = checksum
    marks = []
    save = ck.save

    def timed_save(s, occupancy):
        marks.append(time.perf_counter())
        save(s, occupancy)
        marks.append(time.perf_counter())

    ck.save = timed_save
    t_start = time.perf_counter()
    simulate(s, checkpoint=ck)  # (the last interval ends the run: no checkpoint there)
    state = nbytes(s.state) + nbytes(s.traffic) + nbytes(s.workload)
    nodes, ports, rows = s.net.n_nodes, s.net.n_ports, len(s.state.pk)
    del s  # a resume holds a second run
    starts = [t_start] + marks[1::2]
    between = [m - st for st, m in zip(starts, marks[0::2])]
    file_bytes = path.stat().st_size
    t0 = time.perf_counter()
    start(cfg, path, Checkpointer(path, cfg, fresh=False))
    resume_s = time.perf_counter() - t0
    path.unlink()
    print(json.dumps({
        "network": f"Slim Fly q={a.q}, p={nodes // (2 * a.q * a.q)}", "nodes": nodes, "ports": ports,
        "build_seconds": round(build, 2), "state_bytes": state, "file_bytes": file_bytes,
        "write_seconds": [round(w[1], 3) for w in ck.writes], "cycles_between": a.every,
        "run_seconds_between": [round(b, 2) for b in between], "checksum_seconds": round(checksum_s, 3),
        "resume_seconds": round(resume_s, 2), "packets_pool_rows": rows}))


if __name__ == "__main__":
    main()
