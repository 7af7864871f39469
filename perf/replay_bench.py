"""Replays of application-sized DUMPI traces (issue 38): written here, replayed on the Hopper preset, timed.

    python perf/replay_bench.py [--apps halo144,amg256,...] [--scale 0.1] [--old PATH] [--rounds N] [--no-readme]

The issue's production traces (16 to 256 ranks, 0.3 M to 2.2 M MPI calls, 1.5 to 16.6 GB of point-to-point
payload, recorded on Cray machines) are not shared with the project, so these are generated in their shape:
per iteration a computation gap, a halo exchange posted as MPI_Irecv / MPI_Isend to each neighbour of a periodic
process grid and completed by one MPI_Waitall, an MPI_Allreduce of a few doubles, MPI_Wtime calls around it, and
now and then a large message of MBs (a checkpoint or a load rebalancing). Sizes, counts and gaps are drawn from a
seeded stream (same arguments, same files). Each trace is written once as binary DUMPI into
`$TMPDIR/fastnet-replay-bench/NAME-SCALE` by fastnet.mpi.traces.write, the way sst-dumpi's tracer lays it out.

A case is `fastnet run --machine hopper` with that trace, in a process of its own (`python -m fastnet run ...
--json`): what a user waits for, imports, reading and the numba cache load included. `--old PATH` also times the
fastnet checkout at PATH (PYTHONPATH) alternately with this one, `--rounds` times each, and reports the ratio of
the best times; both must give the same execution cycles. Writes the `replay` section of perf/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

# name: ranks, process grid, neighbours (6: faces; 26: faces, edges, corners), iterations, bytes of a face, an
# edge, a corner, compute per iteration (ns), allreduces per iteration, a big message every k iterations and its
# bytes. Payload, calls and simulated time are printed by `--describe`.
APPS = {
    "halo144": dict(ranks=144, grid=(4, 6, 6), stencil=6, iterations=1000, face=(24_000, 16_000, 8_000),
                    edge=0, corner=0, compute_ns=60e6, allreduces=1, big_every=100, big_bytes=2 << 20),
    "amg256": dict(ranks=256, grid=(8, 8, 4), stencil=26, iterations=140, face=(6000, 6000, 6000), edge=512,
                   corner=64, compute_ns=40e6, allreduces=2, big_every=0, big_bytes=0),
    "lulesh64": dict(ranks=64, grid=(4, 4, 4), stencil=26, iterations=300, face=(48_000, 48_000, 48_000),
                     edge=1_500, corner=64, compute_ns=30e6, allreduces=1, big_every=0, big_bytes=0),
    "fft16": dict(ranks=16, grid=(4, 2, 2), stencil=6, iterations=2500, face=(8_000, 8_000, 30_000),
                  edge=0, corner=0, compute_ns=8e6, allreduces=2, big_every=50, big_bytes=2 << 20),
}


def neighbours(r: int, grid: tuple[int, int, int], stencil: int) -> list[tuple[int, str]]:
    """Rank r's neighbours in the periodic grid with the kind of boundary they share (face, edge, corner),
    in a fixed order; a neighbour that is r itself (a dimension of size 1) is left out."""
    nx, ny, nz = grid
    x, y, z = r % nx, (r // nx) % ny, r // (nx * ny)
    out = []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                zeros = (dx == 0) + (dy == 0) + (dz == 0)
                if zeros == 3 or (stencil == 6 and zeros != 2):
                    continue
                q = (x + dx) % nx + ((y + dy) % ny) * nx + ((z + dz) % nz) * nx * ny
                if q != r:
                    out.append((q, ("corner", "edge", "face")[zeros], (dx, dy, dz)))
    return out


def size_of(app: dict, kind: str, d: tuple[int, int, int]) -> int:
    if kind == "face":
        return app["face"][[abs(v) for v in d].index(1)]
    return app[kind]


def rank_calls(app: dict, r: int, iterations: int, rng: random.Random) -> list:
    """Rank r's calls (fastnet.mpi.calls.Call): Init, the iterations, Finalize."""
    from fastnet.mpi.calls import Call

    nbrs = neighbours(r, app["grid"], app["stencil"])
    n = app["ranks"]
    calls = [Call("noop", name="MPI_Init"), Call("noop", name="MPI_Comm_rank"), Call("noop", name="MPI_Comm_size")]
    req = 0
    for it in range(iterations):
        calls.append(Call("compute", duration_ns=app["compute_ns"] * rng.uniform(0.9, 1.1)))
        calls.append(Call("noop", name="MPI_Wtime"))
        reqs = []
        for q, kind, d in nbrs:  # receives first, as halo codes post them
            calls.append(Call("irecv", peer=q, tag=it % 1000, bytes=size_of(app, kind, tuple(-v for v in d)),
                              request=req))
            reqs.append(req)
            req += 1
        for q, kind, d in nbrs:
            calls.append(Call("isend", peer=q, tag=it % 1000, bytes=size_of(app, kind, d), request=req))
            reqs.append(req)
            req += 1
        calls.append(Call("waitall", requests=tuple(reqs)))
        calls.append(Call("compute", duration_ns=app["compute_ns"] * 0.02))
        for _ in range(app["allreduces"]):
            calls.append(Call("allreduce", bytes=8 * rng.choice((1, 2, 4))))
        if app["big_every"] and it % app["big_every"] == app["big_every"] - 1:  # rank k sends to k + n/2
            peer = (r + n // 2) % n
            calls.append(Call("irecv", peer=peer, tag=7777, bytes=app["big_bytes"], request=req))
            calls.append(Call("isend", peer=peer, tag=7777, bytes=app["big_bytes"], request=req + 1))
            calls.append(Call("waitall", requests=(req, req + 1)))
            req += 2
        calls.append(Call("noop", name="MPI_Wtime"))
    calls.append(Call("barrier"))
    calls.append(Call("noop", name="MPI_Finalize"))
    return calls


def trace_dir(name: str, scale: float) -> Path:
    """The trace's folder, written on first use."""
    from fastnet.mpi.calls import Trace
    from fastnet.mpi.traces.write import write_dumpi

    app = APPS[name]
    out = Path(tempfile.gettempdir()) / "fastnet-replay-bench" / f"{name}-{scale:g}"
    if not (out / "trace.meta").exists():
        iterations = max(1, round(app["iterations"] * scale))
        rngs = [random.Random(1000 * r + 1) for r in range(app["ranks"])]
        trace = Trace([rank_calls(app, r, iterations, rngs[r]) for r in range(app["ranks"])])
        tmp = out.with_name(out.name + ".tmp")
        write_dumpi(trace, tmp)
        tmp.rename(out)
    return out


def describe(name: str, scale: float) -> dict:
    """Ranks, MPI calls and point-to-point payload of the written trace (read back)."""
    from fastnet.mpi.traces.dumpi import read_dumpi

    t = read_dumpi(trace_dir(name, scale))
    calls = sum(sum(1 for c in rank if c.kind != "compute") for rank in t.ranks)
    p2p = sum(c.bytes for rank in t.ranks for c in rank if c.kind in ("isend", "send"))
    span = max(rank[-1].end_ns for rank in t.ranks) - min(rank[0].start_ns for rank in t.ranks)
    return {"ranks": t.n_ranks, "calls": calls, "p2p_bytes": p2p, "span_s": span / 1e9}


def run_once(checkout: Path, trace: Path, extra: list[str]) -> dict:
    """`fastnet run --machine hopper` on the trace with `checkout` first on PYTHONPATH, in a process of its own:
    its wall and CPU seconds, and the result's execution cycles."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    cmd = [sys.executable, "-m", "fastnet", "run", "--machine", "hopper", "--set", "workload.kind=trace",
           "--set", f"workload.file={trace}", "--set", "sim.max_cycles=1000000000000000", "--json", *extra]
    t0 = time.perf_counter()
    r0 = os.times()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=checkout, check=False)
    r1 = os.times()
    wall = time.perf_counter() - t0
    if out.returncode:
        raise RuntimeError(f"{checkout}: {out.stderr.strip().splitlines()[-1:]}")
    text = out.stdout
    d = json.loads(text[text.index("{"):text.rindex("}") + 1])
    return {"wall_s": round(wall, 2), "cpu_s": round(r1.children_user + r1.children_system
                                                     - r0.children_user - r0.children_system, 2),
            "cycles": int(d["execution_cycles"]), "simulated_s": float(d["execution_ns"]) / 1e9}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--scale", type=float, default=1.0, help="iterations x this (a quicker, shorter trace)")
    ap.add_argument("--old", type=Path, help="another fastnet checkout to time alternately (old vs new)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--describe", action="store_true", help="only write and describe the traces")
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    rows = []
    for name in args.apps.split(","):
        trace = trace_dir(name, args.scale)
        info = describe(name, args.scale)
        print(name, info, flush=True)
        if args.describe:
            continue
        new, old = [], []
        for _ in range(args.rounds):
            if args.old:
                old.append(run_once(args.old, trace, []))
                print("  old", old[-1], flush=True)
            new.append(run_once(ROOT, trace, []))
            print("  new", new[-1], flush=True)
        rows.append((name, info, new, old))
    if rows and not args.no_readme and not args.describe:
        write_readme(rows, args.scale)


def write_readme(rows: list, scale: float) -> None:
    from markers import replace_section

    lines = [("| trace | ranks | MPI calls | p2p payload (GB) | simulated (s) | execution cycles | old wall (s) | "
              "new wall (s) | new CPU (s) | old / new |"), "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, info, new, old in rows:
        best = min(new, key=lambda r: r["wall_s"])
        ob = min(old, key=lambda r: r["wall_s"]) if old else None
        ratio = f"{ob['wall_s'] / best['wall_s']:.1f}x" if ob else "n/a"
        if ob and ob["cycles"] != best["cycles"]:
            print(f"{name}: old gives {ob['cycles']} cycles, new {best['cycles']}", file=sys.stderr)
        lines.append(f"| {name} | {info['ranks']} | {info['calls']:,} | {info['p2p_bytes'] / 1e9:.2f} | "
                     f"{best['simulated_s']:.1f} | {best['cycles']:,} | "
                     f"{ob['wall_s'] if ob else 'n/a'} | {best['wall_s']} | {best['cpu_s']} | "
                     f"{ratio} |")
    head = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()} by `python perf/replay_bench.py --scale {scale:g}` (Hopper preset, "
            "`fastnet run --json` in a process of its own, best of the rounds).")
    replace_section(ROOT / "perf" / "README.md", "replay", head + "\n\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
