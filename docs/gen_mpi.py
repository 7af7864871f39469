"""The measured tables of docs/mpi.md: collectives against their Hockney models, allreduce time against size,
ping-pong against the zero-load formula, and seed 003 §VII's Big FFT on three topologies.

    python docs/gen_mpi.py [--parts hockney,allreduce,pingpong,fft] [--workers 2] [--cache FILE] [--no-doc]

Writes the sections between the `mpi-hockney`, `mpi-allreduce`, `mpi-pingpong` and `mpi-fft` markers of
docs/mpi.md. Measurements are kept in `--cache` (JSON, keyed by run) so that the doc can be rewritten without
simulating again; delete it to measure afresh.

The model (`model_steps`): a collective is the sequence of steps of fastnet/mpi/collectives.py (the critical
path of the algorithm); step time = alpha + (phits - header phits) cycles, summed over the steps, where
- alpha is the zero-load latency (docs/model.md) of a header-only message (32 B = 8 phits), averaged over the
  (sender, receiver) pairs that talk in that step: 2 latency_injection + sum of the link latencies of a
  minimal path + (hops + 1) delay + (8 - 1); hops and link latencies come from a BFS over the router graph
  (fastnet.sim.prepare(cfg).net.topo.port), so the dragonfly's 10-cycle local and 100-cycle global links count;
- the bytes term is beta = 1 / phit_bytes cycles per byte, taken on whole phits of payload + header: a rank that
  sends k messages in one step serialises them on its injection link (its phits add up);
- a payload above eager_bytes goes by rendezvous: the step adds 2 alpha (RTS and CTS).
Reductions cost nothing (as in fastnet). The model ignores contention: where the measurement is above it, the
difference is queueing in the network or at an ejection port.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
import tomllib
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "mpi.md"
SPAWN = multiprocessing.get_context("spawn")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402

MAX_CYCLES = 2**31 - 1


def torus8x8() -> dict:
    return {"topology": {"kind": "torus", "dims": [8, 8]}}


def dragonfly1056() -> dict:
    """fastnet/configs/default.toml (p=4, a=8, h=4; local links 10 cycles, global 100) with minimal routing,
    without its open-loop traffic and measurement-window keys."""
    cfg = tomllib.loads((ROOT / "fastnet" / "configs" / "default.toml").read_text())
    cfg["routing"]["algorithm"] = "min"
    cfg["traffic"] = {"packet_phits": cfg["traffic"]["packet_phits"]}
    cfg["sim"] = {"seed": cfg["sim"]["seed"]}
    return cfg


NETWORKS = {"torus 8x8": torus8x8, "dragonfly 1056": dragonfly1056}


def config(net: str, workload: dict, mpi: dict | None = None) -> dict:
    cfg = NETWORKS[net]() if net in NETWORKS else json.loads(net)
    cfg["workload"] = {"kind": "mpi", "iterations": 1, **workload}
    cfg.setdefault("sim", {})["max_cycles"] = MAX_CYCLES
    if mpi:
        cfg["mpi"] = mpi
    return cfg


def measure(key: str) -> tuple[str, dict]:
    """One run, named by its key (JSON of [network, workload, mpi])."""
    import fastnet

    net, workload, mpi = json.loads(key)
    t0 = time.perf_counter()
    ds = fastnet.run(config(net, workload, mpi))
    calls = {str(c): int(v) for c, v in zip(ds.call.values, ds.call_count.values) if v}
    return key, {
        "cycles": int(ds.execution_cycles.item()), "ns": float(ds.execution_ns.item()),
        "messages": int(ds.messages.item()), "bytes": int(ds.bytes.item()),
        "control_messages": int(ds.control_messages.item()), "hops_mean": float(ds.hops_mean.item()),
        "nodes": int(ds.attrs["nodes"]), "calls": calls, "wall_s": time.perf_counter() - t0,
    }


def key(net: str, workload: dict, mpi: dict | None = None) -> str:
    return json.dumps([net, workload, mpi or {}], sort_keys=True)


# ---------------------------------------------------------------- the model


class Net:
    """Zero-load latencies between nodes of a network (docs/model.md's formula)."""

    def __init__(self, net: str):
        from fastnet.config import resolve
        from fastnet.sim import prepare

        cfg = config(net, {"program": "barrier"})
        s = prepare(cfg)
        rc = resolve(cfg)
        topo = s.net.topo
        self.delay = rc["router"]["delay"]
        self.li = rc["links"]["latency_injection"]
        self.phit_bytes = rc["traffic"]["phit_bytes"]
        self.header = 32
        self.eager = 8192
        port = np.asarray(topo.port)
        self.node_router = np.asarray(topo.node)[:, 0]
        R = int(port[:, 0].max()) + 1
        adj: list[list[tuple[int, int]]] = [[] for _ in range(R)]
        for p in range(len(port)):
            if port[p, 1] >= 0:
                adj[port[p, 0]].append((int(port[p, 1]), int(port[p, 4])))
        self.hops = np.full((R, R), -1, np.int64)
        self.lat = np.zeros((R, R), np.int64)
        for src in range(R):  # BFS; among minimal paths the lowest link-latency sum
            h, lat = self.hops[src], self.lat[src]
            h[src] = 0
            q = deque([src])
            while q:
                u = q.popleft()
                for v, lv in adj[u]:
                    if h[v] < 0:
                        h[v], lat[v] = h[u] + 1, lat[u] + lv
                        q.append(v)
                    elif h[v] == h[u] + 1:
                        lat[v] = min(lat[v], lat[u] + lv)

    def phits(self, payload: int) -> int:
        return -(-(payload + self.header) // self.phit_bytes)

    def zero_load(self, a: int, b: int, payload: int) -> int:
        """Cycles from posting a message of `payload` bytes at node a to its tail at node b, idle network."""
        ra, rb = self.node_router[a], self.node_router[b]
        hops = self.hops[ra, rb]
        return int(2 * self.li + self.lat[ra, rb] + (hops + 1) * self.delay + self.phits(payload) - 1)

    def alpha(self, pairs: list[tuple[int, int]]) -> float:
        return float(np.mean([self.zero_load(a, b, 0) for a, b in pairs]))

    def mean_hops(self, pairs: list[tuple[int, int]]) -> float:
        return float(np.mean([self.hops[self.node_router[a], self.node_router[b]] for a, b in pairs]))


def model_steps(kind: str, n: int, S: int, alg: str = "") -> list[tuple[list[tuple[int, int]], list[int]]]:
    """The steps of the critical path: per step the (sender, receiver) pairs that talk and the payloads that
    one sender puts on its injection link in that step."""
    L = math.ceil(math.log2(n))
    steps = []
    if kind == "barrier":  # dissemination
        for k in range(L):
            steps.append(([(me, (me + (1 << k)) % n) for me in range(n)], [0]))
    elif kind == "bcast":  # binomial: round j, the ranks that hold the data send to rel + mask
        for j in range(L):
            mask = 1 << (L - 1 - j)
            pairs = [(r, r + mask) for r in range(0, n, 2 * mask) if r + mask < n]
            steps.append((pairs, [S]))
    elif kind == "allreduce" and alg == "ring":
        for _ in range(2 * (n - 1)):
            steps.append(([(me, (me + 1) % n) for me in range(n)], [-(-S // n)]))
    elif kind == "allreduce":  # recursive doubling, MPICH's fold for n not a power of two
        p = 1 << int(math.floor(math.log2(n)))
        rem = n - p
        if rem:
            steps.append(([(2 * i, 2 * i + 1) for i in range(rem)], [S]))
        world = [2 * i + 1 for i in range(rem)] + list(range(2 * rem, n))
        for k in range(int(math.log2(p))):
            steps.append(([(world[i], world[i ^ (1 << k)]) for i in range(p)], [S]))
        if rem:
            steps.append(([(2 * i + 1, 2 * i) for i in range(rem)], [S]))
    elif kind == "alltoall":  # pairwise exchange
        for i in range(1, n):
            pairs = [(me, me ^ i) for me in range(n)] if n & (n - 1) == 0 else [(me, (me + i) % n) for me in range(n)]
            steps.append((pairs, [S]))
    else:
        raise ValueError(kind)
    return steps


def model(net: Net, kind: str, n: int, S: int, alg: str = "", eager: int | None = None) -> dict:
    eager = net.eager if eager is None else eager
    total, alphas, hops = 0.0, 0.0, []
    hp = net.phits(0)
    for pairs, sizes in model_steps(kind, n, S, alg):
        a = net.alpha(pairs)
        phits = sum(net.phits(s) for s in sizes)
        rdv = sum(2 * a for s in sizes if s > eager)
        total += a + (phits - hp) + rdv
        alphas += a + rdv
        hops.append(net.mean_hops(pairs))
    return {"cycles": total, "alpha_cycles": alphas, "steps": len(hops), "hops_mean": float(np.mean(hops))}


# ---------------------------------------------------------------- the parts

HOCKNEY = [  # (collective, small size, large size)
    ("barrier", 8, 8),  # a barrier sends header-only messages: message_bytes is not used
    ("bcast", 8, 65536),
    ("allreduce", 8, 65536),
    ("alltoall", 8, 4096),
]


def hockney_runs(args) -> list[str]:
    out = []
    for net in NETWORKS:
        for kind, small, large in HOCKNEY:
            for S in sorted({small, large}):
                S = args.alltoall_large if (kind, S) == ("alltoall", large) and net.startswith("dragonfly") else S
                out.append(key(net, {"program": kind, "message_bytes": S}))
    return out


DIAGNOSTICS = [  # (network, collective, bytes, algorithm, [mpi]): one cause of a difference removed at a time
    ("torus 8x8", "bcast", 65536, "", {"eager_bytes": 1 << 20}),
    ('{"topology": {"dims": [64], "kind": "torus"}}', "allreduce", 65536, "ring", {}),
    ('{"topology": {"dims": [64], "kind": "torus"}}', "barrier", 8, "", {}),
    ('{"topology": {"dims": [64], "kind": "torus"}}', "allreduce", 8, "recursive_doubling", {}),
]

ALLREDUCE_SIZES = sorted({8 * 4**i for i in range(9)} | {2048, 1 << 20})  # 8 B .. 512 KB, the switch-over size, 1 MB
PINGPONG_SIZES = sorted({8 * 4**i for i in range(10)} | {8192, 8193, 4 << 20})
PINGPONG_SIZES = [s for s in PINGPONG_SIZES if s <= 4 << 20]

FFT_NETS = {
    "torus 10x10": {"topology": {"kind": "torus", "dims": [10, 10]}},
    "dragonfly 1056 (default)": None,
    "fattree k=4 n=4": {"topology": {"kind": "fattree", "k": 4, "n": 4}},
}


def fft_net(name: str) -> str:
    return "dragonfly 1056" if FFT_NETS[name] is None else json.dumps(FFT_NETS[name])


def runs(args) -> list[str]:
    out = []
    if "hockney" in args.parts:
        out += hockney_runs(args)
    if "allreduce" in args.parts:
        out += [key("torus 8x8", {"program": "allreduce", "message_bytes": S}) for S in ALLREDUCE_SIZES]
    if "hockney" in args.parts:
        out += [key(net, {"program": kind, "message_bytes": S}, mpi) for net, kind, S, _, mpi in DIAGNOSTICS]
    if "pingpong" in args.parts:
        out += [key("torus 8x8", {"program": "pingpong", "message_bytes": S}) for S in PINGPONG_SIZES]
    if "fft" in args.parts:
        out += [key(fft_net(name), {"program": "fft3d", "grid": args.grid, "iterations": 2, "tasks": 100})
                for name in FFT_NETS]
    return out


def pct(meas: float, mod: float) -> str:
    return f"{100 * (meas - mod) / mod:+.1f} %"


def table_hockney(args, res: dict, nets: dict) -> str:
    rows = ["| network | collective | bytes | algorithm | steps | step hops (mean) | measured (cycles) | model (cycles) "
            "| of which alpha | difference | within 10 % |", "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for k in hockney_runs(args):
        net, w, _ = json.loads(k)
        if k not in res:
            continue
        r = res[k]
        kind, S = w["program"], w["message_bytes"]
        alg = ""
        if kind == "allreduce":
            alg = "recursive_doubling" if S <= 2048 else "ring"
        m = model(nets[net], kind, r["nodes"], S, alg)
        name = {"barrier": "dissemination", "bcast": "binomial", "alltoall": "pairwise"}.get(kind, alg)
        d = (r["cycles"] - m["cycles"]) / m["cycles"]
        rows.append(f"| {net} | {kind} | {0 if kind == 'barrier' else S:,} | {name} | {m['steps']} | {m['hops_mean']:.2f} | {r['cycles']:,} | "
                    f"{m['cycles']:,.0f} | {m['alpha_cycles']:,.0f} | {pct(r['cycles'], m['cycles'])} | "
                    f"{'yes' if abs(d) <= 0.10 else '**no**'} |")
    return "\n".join(rows)


def table_diagnostics(res: dict) -> str:
    rows = ["| network | collective | bytes | [mpi] | measured (cycles) | model (cycles) | difference |",
            "|---|---|---:|---|---:|---:|---:|"]
    for net, kind, S, alg, mpi in DIAGNOSTICS:
        k = key(net, {"program": kind, "message_bytes": S}, mpi)
        if k not in res:
            continue
        c = res[k]["cycles"]
        m = model(Net(net), kind, res[k]["nodes"], 0 if kind == "barrier" else S, alg, mpi.get("eager_bytes"))["cycles"]
        name = "ring of 64 (torus dims [64])" if net.startswith("{") else net
        extra = ", ".join(f"{a} = {b}" for a, b in mpi.items()) or "defaults"
        rows.append(f"| {name} | {kind} {alg} | {0 if kind == 'barrier' else S:,} | {extra} | {c:,} | {m:,.0f} | "
                    f"{pct(c, m)} |")
    return "\n".join(rows)


def table_allreduce(res: dict, net: Net) -> str:
    rows = ["| bytes | algorithm | measured (cycles) | model (cycles) | difference | measured / previous size |",
            "|---:|---|---:|---:|---:|---:|"]
    prev = None
    for S in ALLREDUCE_SIZES:
        k = key("torus 8x8", {"program": "allreduce", "message_bytes": S})
        if k not in res:
            continue
        c = res[k]["cycles"]
        alg = "recursive_doubling" if S <= 2048 else "ring"
        m = model(net, "allreduce", 64, S, alg)["cycles"]
        ratio = f"{c / prev:.2f}" if prev else ""
        rows.append(f"| {S:,} | {alg} | {c:,} | {m:,.0f} | {pct(c, m)} | {ratio} |")
        prev = c
    return "\n".join(rows)


def table_pingpong(res: dict, net: Net) -> str:
    rows = ["| payload (bytes) | protocol | phits on the wire | one-way measured (cycles) | formula (cycles) "
            "| difference (cycles) |", "|---:|---|---:|---:|---:|---:|"]
    for S in PINGPONG_SIZES:
        k = key("torus 8x8", {"program": "pingpong", "message_bytes": S})
        if k not in res:
            continue
        c = res[k]["cycles"]
        one = c / 2
        f = net.zero_load(0, 1, S)
        rdv = S > net.eager
        if rdv:
            f += 2 * net.zero_load(0, 1, 0)
        rows.append(f"| {S:,} | {'rendezvous' if rdv else 'eager'} | {net.phits(S):,} | {one:,.1f} | {f:,} | "
                    f"{one - f:+g} |")
    return "\n".join(rows)


def table_fft(args, res: dict) -> str:
    rows = ["| topology | nodes | ranks | mean hops | execution (cycles) | execution (ns) | messages | bytes "
            "| alltoallv | barrier |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name in FFT_NETS:
        k = key(fft_net(name), {"program": "fft3d", "grid": args.grid, "iterations": 2, "tasks": 100})
        if k not in res:
            continue
        r = res[k]
        rows.append(f"| {name} | {r['nodes']:,} | 100 | {r['hops_mean']:.2f} | {r['cycles']:,} | {r['ns']:,.0f} | "
                    f"{r['messages']:,} | {r['bytes']:,} | {r['calls'].get('alltoallv', 0)} | "
                    f"{r['calls'].get('barrier', 0)} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="hockney,allreduce,pingpong,fft")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache", default=str(ROOT / "docs" / "mpi_measured.json"))
    ap.add_argument("--alltoall-large", type=int, default=512, help="alltoall bytes per pair, large, dragonfly")
    ap.add_argument("--grid", type=int, default=128, help="fft3d grid points per dimension")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    args.parts = args.parts.split(",")
    cache = Path(args.cache)
    res = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [k for k in runs(args) if k not in res]
    if todo:
        with ProcessPoolExecutor(args.workers, mp_context=SPAWN) as ex:
            for k, r in ex.map(measure, todo):
                res[k] = r
                print(f"{r['wall_s']:7.1f} s  {r['cycles']:>12,} cycles  {k}", flush=True)
                cache.write_text(json.dumps(res, indent=1, sort_keys=True))
    if args.no_doc:
        return
    nets = {n: Net(n) for n in NETWORKS}
    stamp = f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_mpi.py`."
    if "hockney" in args.parts:
        replace_section(DOC, "mpi-hockney", stamp + "\n\n" + table_hockney(args, res, nets))
        replace_section(DOC, "mpi-diagnostics", stamp + "\n\n" + table_diagnostics(res))
    if "allreduce" in args.parts:
        replace_section(DOC, "mpi-allreduce", stamp + "\n\n" + table_allreduce(res, nets["torus 8x8"]))
    if "pingpong" in args.parts:
        replace_section(DOC, "mpi-pingpong", stamp + "\n\n" + table_pingpong(res, nets["torus 8x8"]))
    if "fft" in args.parts:
        replace_section(DOC, "mpi-fft", stamp + f" fft3d, grid {args.grid}^3 (16 B a point), iterations 2, "
                        "100 ranks on the first 100 nodes (linear mapping).\n\n" + table_fft(args, res))


if __name__ == "__main__":
    main()
