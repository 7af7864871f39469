"""The measured tables of docs/machines.md for the machine presets (fastnet/machines): BG/Q's end-to-end latency
(seed 003 §IV-B), Aries latency against transfer size on Trinity (Fig 2a) and MPI_Allreduce time against size
on Darter (Fig 2c), and the build and `fastnet info` times of the largest preset.

    python docs/gen_machines.py [--parts bgq,aries,allreduce,speed] [--workers 2] [--cache FILE] [--no-doc]

Runs are cached in `--cache` (JSON keyed by run) so that the doc can be rewritten without simulating again.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "machines.md"
SPAWN = multiprocessing.get_context("spawn")
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402

BGQ_GAP_NS = 3000  # fanout: ns between two messages, above any one-way latency (the network is idle for each)
SIZES = [8 * 4**i for i in range(10) if 8 * 4**i <= 1 << 20] + [1 << 20]  # 8 B .. 1 MB
ALLREDUCE_SIZES = [8 * 4**i for i in range(9)] + [1 << 20]


def key(machine: str, workload: dict, extra: dict | None = None) -> str:
    return json.dumps([machine, workload, extra or {}], sort_keys=True)


def config(k: str) -> dict:
    machine, workload, extra = json.loads(k)
    if "mapping" in workload:  # kept relative to the checkout in the cache's keys
        workload = {**workload, "mapping": str(ROOT / workload["mapping"])}
    cfg = {"machine": {"name": machine}, "workload": {"kind": "mpi", **workload},
           "sim": {"max_cycles": 2**31 - 1}}
    for section, values in extra.items():
        cfg.setdefault(section, {}).update(values)
    return cfg


def measure(k: str) -> tuple[str, dict]:
    import fastnet

    t0 = time.perf_counter()
    ds = fastnet.run(config(k))
    out = {"cycles": int(ds.execution_cycles.item()), "ns": float(ds.execution_ns.item()),
           "cycle_ns": float(ds.attrs["cycle_ns"]), "nodes": int(ds.attrs["nodes"]),
           "hops_mean": float(ds.hops_mean.item()), "wall_s": time.perf_counter() - t0}
    if json.loads(k)[1]["program"] == "fanout":
        out["finish"] = ds.task_finish_cycle.values.astype(int).tolist()
    return k, out


# ---------------------------------------------------------------- BG/Q


def bgq_key(cycle_ns: float) -> str:
    return key("sequoia", {"program": "fanout", "message_bytes": 8,
                           "compute_cycles": int(np.ceil(BGQ_GAP_NS / cycle_ns))})


def torus_hops(dims: list[int], a: int, b: np.ndarray) -> np.ndarray:
    hops = np.zeros(len(b), dtype=np.int64)
    stride = 1
    for k in dims:
        d = np.abs((a // stride) % k - (b // stride) % k)
        hops += np.minimum(d, k - d)
        stride *= k
    return hops


def table_bgq(res: dict, cycle_ns: float) -> str:
    k = bgq_key(cycle_ns)
    if k not in res:
        return "(not measured)"
    r = res[k]
    finish = np.asarray(r["finish"])
    gap = json.loads(k)[1]["compute_cycles"]
    ranks = np.arange(1, len(finish))
    lat_ns = (finish[1:] - gap * ranks) * r["cycle_ns"]
    hops = torus_hops([16, 12, 16, 16, 2], 0, ranks)
    rows = ["| hops | destinations | latency min (ns) | latency max (ns) |", "|---:|---:|---:|---:|"]
    for h in np.unique(hops):
        sel = lat_ns[hops == h]
        rows.append(f"| {h} | {len(sel):,} | {sel.min():,.0f} | {sel.max():,.0f} |")
    inside = (lat_ns.min() >= 700) and (lat_ns.max() <= 1300)
    head = (f"One 8-byte message from node 0 to each of the other {len(ranks):,} nodes of Sequoia, one at a time "
            f"({BGQ_GAP_NS} ns apart: each crosses an idle network), MPI layer (`program = \"fanout\"`), cycle "
            f"{r['cycle_ns']:g} ns. **End-to-end latency: min {lat_ns.min():,.0f} ns, max {lat_ns.max():,.0f} ns** "
            f"(PPT: 700-1,300 ns; BG/Q measured: 718-1,264 ns): "
            f"{'inside' if inside else '**outside**'} PPT's range. Simulated in {r['wall_s']:.0f} s.\n\n")
    return head + "\n".join(rows)


# ---------------------------------------------------------------- Aries


def aries_key(S: int) -> str:
    """Ping-pong between node 0 and a node of group 12 (MAPPING): local-global-local."""
    return key("trinity", {"program": "pingpong", "message_bytes": S, "tasks": 2,
                           "mapping": str(MAPPING.relative_to(ROOT))})


MAPPING = ROOT / "docs" / "machines_trinity_pair.txt"


def table_aries(res: dict) -> str:
    rows = ["| bytes | one-way latency (us) | bandwidth (GB/s) | protocol | router hops |", "|---:|---:|---:|---|---:|"]
    lat = []
    for S in SIZES:
        k = aries_key(S)
        if k not in res:
            continue
        r = res[k]
        one = r["ns"] / 2 / 1000
        lat.append(one)
        rows.append(f"| {S:,} | {one:,.2f} | {S / (one * 1000):.2f} | {'eager' if S <= 8192 else 'rendezvous'} "
                    f"| {r['hops_mean']:.2f} |")
    if len(lat) < 2:
        return "\n".join(rows)
    rising = all(a <= b for a, b in zip(lat, lat[1:]))
    head = (f"MPI ping-pong (`program = \"pingpong\"`, one round trip) between node 0 (group 0) and node 4,608 (group "
            f"12) of the `trinity` preset, UGAL-L routing, on an idle network; one-way latency is half the round "
            f"trip. The latency {'rises with the size at every step' if rising else 'does NOT rise at every step'}, "
            f"as in Fig 2a: flat at {lat[0]:.2f} us for the smallest messages (links and routers: 100 ns a link), "
            f"then the transfer time dominates, and a 1 MB message streams at "
            f"{SIZES[-1] / (lat[-1] * 1000):.1f} GB/s, below the 16 GB/s host interface and above one 4.7 GB/s "
            f"global link: UGAL-L spreads the packets of one message over several minimal and non-minimal paths. "
            f"The switch to rendezvous above 8 KB adds a request and a clear-to-send. Fig 2a's values were lost with "
            f"the paper's figures; Cray's published small-message MPI latency is about 1.3 us [seed 003 ref 13], "
            f"which includes the MPI software overheads that fastnet does not model, so fastnet's 8-byte time is the "
            f"network's part only.\n\n")
    return head + "\n".join(rows)


def allreduce_key(S: int, algorithm: str = "auto") -> str:
    return key("darter", {"program": "allreduce", "message_bytes": S, "tasks": 748},
               {"mpi": {"allreduce": algorithm}} if algorithm != "auto" else {})


ALGORITHMS = ("recursive_doubling", "rabenseifner")
RD_MAX = 131072  # recursive doubling forced only up to here: above it, it is far slower, and slow to simulate


def table_allreduce(res: dict) -> str:
    from fastnet.config import resolve

    switch = resolve({"machine": {"name": "darter"}, "workload": {"kind": "mpi"}})["mpi"]["allreduce_short_bytes"]
    rows = ["| bytes | recursive doubling (us) | Rabenseifner (us) | preset: MPI_Allreduce (us) | algorithm "
            "| / previous size |", "|---:|---:|---:|---:|---|---:|"]
    prev, times = None, []
    for S in ALLREDUCE_SIZES:
        k = allreduce_key(S)
        if k not in res:
            continue
        us = res[k]["ns"] / 1000
        times.append(us)
        each = [res[allreduce_key(S, a)]["ns"] / 1000 if allreduce_key(S, a) in res else float("nan")
                for a in ALGORITHMS]
        alg = "recursive doubling" if S <= switch else "Rabenseifner"
        cells = " | ".join("" if e != e else f"{e:,.2f}" for e in each)  # e != e: not measured (nan)
        rows.append(f"| {S:,} | {cells} | {us:,.2f} | {alg} "
                    f"| {f'{us / prev:.2f}' if prev else ''} |")
        prev = us
    rising = all(a < b for a, b in zip(times, times[1:]))
    head = (f"MPI_Allreduce (`program = \"allreduce\"`, one call) over all 748 compute nodes of the `darter` preset "
            f"(2 groups of 96 Aries routers, UGAL-L), on an idle network. The time "
            f"{'rises with the size at every step' if rising else '**does not rise at every step**'}, as in Fig "
            f"2c: it is latency-bound up to a few hundred bytes (log2 748 rounds of 4-5 links of 100 ns) and grows "
            f"with the data above. The preset switches from recursive doubling to Rabenseifner above {switch} B, "
            f"where the two algorithms cross on this network (columns 2 and 3, each forced with `mpi.allreduce`), "
            f"as a vendor MPI tunes its switch-over to the machine; with MPICH's default of 2048 B (kept for every "
            f"other config) recursive doubling's 2 KB call would take longer than Rabenseifner's 8 KB one, because "
            f"every round of recursive doubling moves the whole vector and half of the rounds cross the two "
            f"groups' global links at once. Fig 2c's values were lost with the paper's figures.\n\n")
    return head + "\n".join(rows)


# ---------------------------------------------------------------- speed


def speed() -> dict:
    """Build time of Sequoia (in process) and the wall time of `fastnet info --machine sequoia` (a new process)."""
    from fastnet.topology import build_network

    t0 = time.perf_counter()
    net = build_network({"machine": {"name": "sequoia"}})
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fastnet", "info", "--machine", "sequoia", "--json"], check=True,
                   capture_output=True)
    return {"build_s": build_s, "info_s": time.perf_counter() - t0, "nodes": net.n_nodes, "ports": net.n_ports}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="bgq,aries,allreduce,speed")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache", default=str(ROOT / "docs" / "machines_measured.json"))
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    parts = args.parts.split(",")
    from fastnet.config import resolve
    from fastnet.units import timing

    bgq_cycle = timing(resolve({"machine": {"name": "sequoia"}})).cycle_ns
    MAPPING.write_text("0\n%d\n" % (12 * 96 * 4))
    cache = Path(args.cache)
    res = json.loads(cache.read_text()) if cache.exists() else {}
    todo = ([bgq_key(bgq_cycle)] if "bgq" in parts else []) + \
           ([aries_key(S) for S in SIZES] if "aries" in parts else []) + \
           ([allreduce_key(S, a) for S in ALLREDUCE_SIZES for a in ("auto", *ALGORITHMS)
             if a != "recursive_doubling" or S <= RD_MAX] if "allreduce" in parts else [])
    todo = [k for k in todo if k not in res]
    if todo:
        with ProcessPoolExecutor(args.workers, mp_context=SPAWN) as ex:
            for k, r in ex.map(measure, todo):
                res[k] = r
                print(f"{r['wall_s']:7.1f} s  {r['cycles']:>12,} cycles  {k}", flush=True)
                cache.write_text(json.dumps(res, sort_keys=True))
    if "speed" in parts:
        res["speed"] = speed()
        cache.write_text(json.dumps(res, sort_keys=True))
    if args.no_doc:
        return
    stamp = f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_machines.py`."
    if "bgq" in parts:
        replace_section(DOC, "machines-bgq", stamp + " " + table_bgq(res, bgq_cycle))
    if "aries" in parts:
        replace_section(DOC, "machines-aries", stamp + "\n\n" + table_aries(res))
    if "allreduce" in parts:
        replace_section(DOC, "machines-allreduce", stamp + "\n\n" + table_allreduce(res))
    if "speed" in parts and "speed" in res:
        s = res["speed"]
        replace_section(DOC, "machines-speed", stamp + f" Sequoia ({s['nodes']:,} nodes, {s['ports']:,} ports): "
                        f"build {s['build_s']:.1f} s in process; `fastnet info --machine sequoia` "
                        f"{s['info_s']:.1f} s wall, a new process (imports included).")


if __name__ == "__main__":
    main()
