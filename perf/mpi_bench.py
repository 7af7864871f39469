"""Speed of the MPI layer (issue: MPI replay targets), each case warm, in this process, one after the other.

    python perf/mpi_bench.py [--cases replay900,allreduce1mb_4k,allreduce1mb_40b] [--iterations N] [--no-readme]

- `replay900`: an OTF2 trace of 100 ranks, each calling 900 collectives (allreduce 64 B, bcast 1 KB, barrier,
  alltoall 64 B, in turn), written once by fastnet.mpi.traces.write, replayed on the 10x10 torus (default
  router): reading the trace, lowering it and simulating. Target: under 30 s warm.
- `allreduce1mb_4k`: 1,024 ranks on the 1,056-node dragonfly of fastnet/configs/default.toml (minimal routing),
  `allreduce` of 1 MB (MPICH's Rabenseifner: 2 x 10 steps), 100 iterations, with seed 000's 4 KB packets
  (traffic.phit_bytes = 64, packet_phits = 64). Target: under 60 s warm.
- `allreduce1mb_40b`: the same with the default 40-byte packets (4-byte phits, 10-phit packets); far slower, so
  it runs `--iterations-40b` iterations (default 1) and the table gives the time extrapolated to 100 as well
  (its "whole case" column: replay900's is 900 iterations, the allreduces' 100).

"Warm": the same case with 2 iterations runs first (compiles or loads the kernels, touches every code path),
then the timed run: prepare() + simulate() (no xarray dataset). CPU seconds are reported next to wall seconds
(the project machine is shared). Writes perf/mpi_results.json and the `mpi` section of perf/README.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402


def dragonfly(packet_phits: int, phit_bytes: int) -> dict:
    cfg = tomllib.loads((ROOT / "fastnet" / "configs" / "default.toml").read_text())
    cfg["routing"]["algorithm"] = "min"
    cfg["traffic"] = {"packet_phits": packet_phits, "phit_bytes": phit_bytes}
    cfg["sim"] = {"seed": 1}
    return cfg


def replay_trace(collectives: int) -> str:
    """An OTF2 trace of 100 ranks calling `collectives` collectives each (written once per count)."""
    from fastnet.mpi.calls import Call, Trace
    from fastnet.mpi.traces.write import write_otf2

    path = Path(tempfile.gettempdir()) / f"fastnet-replay-{collectives}" / "trace.otf2"
    if not path.exists():
        kinds = [("allreduce", 64), ("bcast", 1024), ("barrier", 0), ("alltoall", 64)]
        ranks = [[Call("noop", name="MPI_Init")] + [Call(kinds[i % 4][0], bytes=kinds[i % 4][1])
                                                     for i in range(collectives)] + [Call("noop", name="MPI_Finalize")]
                 for _ in range(100)]
        write_otf2(Trace(ranks), path)
    return str(path)


def case(name: str, iterations: int) -> dict:
    if name == "replay900":
        cfg = {"topology": {"kind": "torus", "dims": [10, 10]}}
        cfg["workload"] = {"kind": "trace", "file": replay_trace(iterations)}
        cfg["sim"] = {"max_cycles": 2**31 - 1}
        return cfg
    else:
        cfg = dragonfly(64, 64) if name == "allreduce1mb_4k" else dragonfly(10, 4)
        w = {"program": "allreduce", "message_bytes": 1 << 20, "iterations": iterations, "tasks": 1024}
    cfg["workload"] = {"kind": "mpi", **w}
    cfg["sim"] = {**cfg.get("sim", {}), "max_cycles": 2**31 - 1}
    return cfg


CASES = {"replay900": (900, 30.0), "allreduce1mb_4k": (100, 60.0), "allreduce1mb_40b": (100, 60.0)}


def timed(cfg: dict) -> dict:
    from fastnet.mpi.state import WM_BYTES, WM_TRANSFERS
    from fastnet.sim import prepare, simulate
    from fastnet.workloads.state import WC_END

    t0, c0 = time.perf_counter(), time.process_time()
    s = simulate(prepare(cfg))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    wc = s.workload.wc
    cycles = int(wc[WC_END])
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "cycles": cycles, "messages": int(wc[WM_TRANSFERS]),
            "bytes": int(wc[WM_BYTES]), "cycles_per_s": round(cycles / wall)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--iterations-40b", type=int, default=1)
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    out_path = ROOT / "perf" / "mpi_results.json"
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    for name in args.cases.split(","):
        it, target = CASES[name]
        if name == "allreduce1mb_40b":
            it = args.iterations_40b
        timed(case(name, 2))  # warm
        r = timed(case(name, it))
        r.update(iterations=it, target_s=target, date=time.strftime("%Y-%m-%d"),
                 machine=f"{platform.machine()}, {len(__import__('os').sched_getaffinity(0))} cores, "
                         f"Python {platform.python_version()}")
        if it != CASES[name][0]:
            r["wall_s_extrapolated_to_%d" % CASES[name][0]] = round(r["wall_s"] * CASES[name][0] / it, 1)
        results[name] = r
        print(name, r, flush=True)
        out_path.write_text(json.dumps(results, indent=1) + "\n")
    if args.no_readme:
        return
    rows = ["| case | iterations | wall (s) | CPU (s) | cycles | messages | cycles/s | wall (s), whole case | "
            "target (s, whole case) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        full = r.get(f"wall_s_extrapolated_to_{CASES[name][0]}", r["wall_s"])  # a case run for fewer: scaled
        scaled = f"{full:.1f}" + (" (extrapolated)" if r["iterations"] != CASES[name][0] else "")
        rows.append(f"| {name} | {r['iterations']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cycles']:,} | "
                    f"{r['messages']:,} | {r['cycles_per_s']:,} | {scaled} | {r['target_s']:g} |")
    first = next(iter(results.values()))
    head = f"Measured {first['date']} on {first['machine']} by `python perf/mpi_bench.py`."
    replace_section(ROOT / "perf" / "README.md", "mpi", head + "\n\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
