"""The measured tables of docs/mpi.md: collectives against their Hockney models, allreduce time against size,
ping-pong against the zero-load formula, and seed 003 §VII's Big FFT on three topologies.

    python docs/gen_mpi.py [--parts hockney,allreduce,pingpong,fft] [--workers 2] [--cache FILE] [--no-doc]

Writes the sections between the `mpi-hockney`, `mpi-allreduce`, `mpi-pingpong` and `mpi-fft` markers of
docs/mpi.md. Measurements are kept in `--cache` (JSON, keyed by run) so that the doc can be rewritten without
simulating again; delete it to measure afresh.

The models (`model_steps`, `model`): a collective is the sequence of steps of fastnet/mpi/collectives.py (the
critical path of the algorithm: bcast sends one child per step, Rabenseifner halves then doubles the bytes it
exchanges); each step lists every message (sender, receiver, payload) all ranks post in it. Summed over the steps:
- Hockney: step time = alpha + (phits - header phits) cycles, where
  - alpha is the zero-load latency (docs/model.md) of a header-only message (32 B = 8 phits), averaged over the
    (sender, receiver) pairs of that step: 2 latency_injection + sum of the link latencies of the routed path +
    (hops + 1) delay + (8 - 1); hops and link latencies are those of the path the simulator's routing takes (see
    `Net.flow`), so the dragonfly's 10-cycle local and 100-cycle global links count, and a dragonfly pair two
    groups apart goes local-global-local (3 hops, 120 cycles), not over two global links (2 hops, 200 cycles);
  - the bytes term is beta = 1 / phit_bytes cycles per byte, on whole phits of payload + header, of the rank that
    injects most in the step (a rank that sends k messages serialises them on its injection link);
  - a payload above eager_bytes goes by rendezvous: the step adds 2 alpha (RTS and CTS);
  - bcast is not run in lockstep (a rank forwards as soon as it has the data): its time is the longest chain of
    the binomial tree, with each message's own alpha (`bcast_chain`).
- contention-aware Hockney: the same, with the bytes term taken on the most loaded link of the step when all its
  messages are in the network at once: network links by the expected share of each message's phits under the
  simulator's routing (`min`, min_path = random: a uniformly random minimal port at each router, from
  fastnet.kernels.minimal.min_ports; on the torus that is not dimension order, on the default dragonfly it is
  the one local-global-local path over the global link between the two groups), plus every injection and
  ejection link. For bcast: the chain plus, per round, what its most loaded link has above the busiest sender.
Reductions cost nothing (as in fastnet). Both models assume the ranks run a step in lockstep.
- schedule model (docs/mpi_schedule.py): the same alpha and beta per message, but each rank starts a step when its
  own previous step is complete, and each link serves the packets that reach it one at a time, first come first
  served, each packet routed hop by hop as the simulator's minimal routing does; no buffers, credits or
  allocator.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "mpi.md"
SPAWN = multiprocessing.get_context("spawn")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402
from mpi_schedule import schedule  # noqa: E402

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
    """Zero-load latencies between nodes of a network (docs/model.md's formula) and the links the simulator's
    minimal routing loads."""

    def __init__(self, net: str):
        from fastnet.build.routing import minimal_scan
        from fastnet.config import resolve
        from fastnet.sim import prepare

        cfg = config(net, {"program": "barrier"})
        s = prepare(cfg)
        rc = resolve(cfg)
        if rc["routing"]["algorithm"] != "min" or rc["routing"]["min_path"] != "random":
            raise ValueError("the contention model follows routing.algorithm = min, min_path = random")
        topo = s.net.topo
        self.delay = rc["router"]["delay"]
        self.li = rc["links"]["latency_injection"]
        self.phit_bytes = rc["traffic"]["phit_bytes"]
        self.header = 32
        self.eager = 8192
        port = np.asarray(topo.port)
        self.port = port
        self.node_router = np.asarray(topo.node)[:, 0]
        self.n_nodes = len(self.node_router)
        self._routing = (topo.router_port_start, topo.port, s.routes, minimal_scan(s.routes))
        self._flows: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        R = int(port[:, 0].max()) + 1
        self.hops = np.zeros((R, R))  # hops and link latencies of the routed paths (expected, where random)
        self.lat = np.zeros((R, R))
        for a in range(R):
            for b in range(R):
                if a != b:
                    q, f = self.flow(a, b)
                    self.hops[a, b] = f.sum()
                    self.lat[a, b] = (f * port[q, 4]).sum()

    def phits(self, payload):
        return -(-(np.asarray(payload) + self.header) // self.phit_bytes)

    def zero_load(self, a, b, payload):
        """Cycles from posting a message of `payload` bytes at node a to its tail at node b, idle network."""
        ra, rb = self.node_router[a], self.node_router[b]
        hops = self.hops[ra, rb]
        return 2 * self.li + self.lat[ra, rb] + (hops + 1) * self.delay + self.phits(payload) - 1

    def alpha(self, src: np.ndarray, dst: np.ndarray) -> float:
        return float(np.mean(self.zero_load(src, dst, 0)))

    def mean_hops(self, src: np.ndarray, dst: np.ndarray) -> float:
        return float(np.mean(self.hops[self.node_router[src], self.node_router[dst]]))

    def flow(self, rs: int, rd: int) -> tuple[np.ndarray, np.ndarray]:
        """The router ports a packet from router rs to rd crosses and the expected share of its phits on each,
        under the simulator's `min` routing (kernels/routing.py: at each router a uniformly random port among
        the minimal ones that kernels/minimal.py's min_ports lists; on the dragonfly those are local-global-local
        over the global link(s) joining the two groups)."""
        key = (rs, rd)
        if key not in self._flows:
            from fastnet.kernels.minimal import min_ports

            ps, port, routes, scan = self._routing
            buf = np.zeros(256, np.int64)
            ports: dict[int, float] = {}
            front = {rs: 1.0}
            while front:
                nxt: dict[int, float] = {}
                for u, f in front.items():
                    if u == rd:
                        continue
                    k = min_ports(ps, port, routes.dist, routes.ip, routes.alg, u, rd, buf, scan)
                    for q in buf[:k]:
                        ports[int(q)] = ports.get(int(q), 0.0) + f / k
                        v = int(port[q, 1])
                        nxt[v] = nxt.get(v, 0.0) + f / k
                front = nxt
            self._flows[key] = (np.fromiter(ports, np.int64, len(ports)),
                                np.fromiter(ports.values(), float, len(ports)))
        return self._flows[key]

    def max_link_phits(self, src: np.ndarray, dst: np.ndarray, phits: np.ndarray) -> float:
        """Phits on the most loaded link when every message (src[i] -> dst[i], phits[i]) of a step is routed
        at once: network links by their expected share (flow), the injection link of each sender and the
        ejection link of each receiver by all their messages."""
        rs, rd = self.node_router[src], self.node_router[dst]
        idx, w = [], []
        for a, b, ph in zip(rs.tolist(), rd.tolist(), phits.tolist()):
            if a != b:
                q, f = self.flow(a, b)
                idx.append(q)
                w.append(f * ph)
        link = np.bincount(np.concatenate(idx), np.concatenate(w)).max() if idx else 0.0
        inj = np.bincount(src, phits, minlength=self.n_nodes).max()
        ej = np.bincount(dst, phits, minlength=self.n_nodes).max()
        return float(max(link, inj, ej))


def model_steps(kind: str, n: int, S: int, alg: str = "") -> list[np.ndarray]:
    """The steps of the critical path, each an int64[m, 3] array of the messages (sender, receiver, payload
    bytes) that all ranks post in that step, following fastnet/mpi/collectives.py."""
    L = math.ceil(math.log2(n))
    steps: list[list[tuple[int, int, int]]] = []
    p = 1 << int(math.floor(math.log2(n)))
    rem = n - p
    world = [2 * i + 1 for i in range(rem)] + list(range(2 * rem, n))  # real rank of each power-of-two newrank
    lp = int(math.log2(p))
    if kind == "barrier":  # dissemination
        for k in range(L):
            steps.append([(me, (me + (1 << k)) % n, 0) for me in range(n)])
    elif kind == "bcast":  # binomial, one child per step: in step j every rank holding the data sends to rel + mask
        for j in range(L):
            mask = 1 << (L - 1 - j)
            steps.append([(r, r + mask, S) for r in range(0, n, 2 * mask) if r + mask < n])
    elif kind == "allreduce" and alg == "ring":
        for step in range(2 * (n - 1)):
            steps.append([(me, (me + 1) % n, S * (i + 1) // n - S * i // n) for me in range(n)
                          for i in [((me - step) if step < n - 1 else (me + 1 - (step - n + 1))) % n]])
    elif kind == "allreduce":  # recursive doubling or Rabenseifner, MPICH's pairing for n not a power of two
        if rem:
            steps.append([(2 * i, 2 * i + 1, S) for i in range(rem)])
        if alg == "rabenseifner":  # reduce-scatter by recursive halving, allgather by recursive doubling
            def blocks(a, b):
                return S * b // p - S * a // p

            def lo(nr, upto):  # first block kept after halvings 0..upto-1
                return sum(p >> (j + 1) for j in range(upto) if nr & (1 << j))

            for k in range(lp):
                half = p >> (k + 1)
                msgs = []
                for nr in range(p):
                    a = lo(nr, k) + (half if nr & (1 << k) == 0 else 0)
                    msgs.append((world[nr], world[nr ^ (1 << k)], blocks(a, a + half)))
                steps.append(msgs)
            for h in range(lp - 1, -1, -1):
                msgs = []
                for nr in range(p):
                    a = lo(nr, h + 1)
                    msgs.append((world[nr], world[nr ^ (1 << h)], blocks(a, a + (p >> (h + 1)))))
                steps.append(msgs)
        else:
            for k in range(lp):
                steps.append([(world[i], world[i ^ (1 << k)], S) for i in range(p)])
        if rem:
            steps.append([(2 * i + 1, 2 * i, S) for i in range(rem)])
    elif kind == "alltoall":  # pairwise exchange
        for i in range(1, n):
            steps.append([(me, me ^ i, S) if n & (n - 1) == 0 else (me, (me + i) % n, S) for me in range(n)])
    else:
        raise ValueError(kind)
    return [np.asarray(s, np.int64).reshape(-1, 3) for s in steps]


def bcast_chain(net: Net, n: int, S: int, eager: int, bytes_term: bool = True) -> float:
    """A binomial bcast has no lockstep: each rank forwards as soon as it has the data. Its time is the longest
    chain of the tree, each message costing its own pair's alpha + bytes (without `bytes_term`: alpha only).
    Eager: a rank posts its children's sends at once, largest subtree first, and they leave its injection link
    one after the other. Rendezvous: the next child's send starts when the previous one's data has arrived
    (RTS, CTS, data: 3 alpha + bytes)."""
    L = math.ceil(math.log2(n))
    P, hp = int(net.phits(S)), int(net.phits(0))
    bt = P - hp if bytes_term else 0
    done, todo, last = {0: 0.0}, [0], 0.0
    while todo:
        r = todo.pop()
        ts = done[r]
        m = ((1 << L) if r == 0 else (r & -r)) >> 1
        while m:
            if r + m < n:
                a = float(net.zero_load(r, r + m, 0))
                if S > eager:
                    arr = ts = ts + 3 * a + bt
                else:
                    arr, ts = ts + a + bt, ts + (P if bytes_term else 0)
                done[r + m] = arr
                todo.append(r + m)
                last = max(last, arr)
            m >>= 1
    return last


def model(net: Net, kind: str, n: int, S: int, alg: str = "", eager: int | None = None) -> dict:
    """Both models, summed over the steps: `cycles` the plain Hockney model (alpha + the bytes of the rank that
    injects most), `contention` the same with the bytes of the most loaded link of the step (Net.max_link_phits)."""
    eager = net.eager if eager is None else eager
    total, cont, alphas, hops = 0.0, 0.0, 0.0, []
    hp = net.phits(0)
    for msgs in model_steps(kind, n, S, alg):
        src, dst, size = msgs[:, 0], msgs[:, 1], msgs[:, 2]
        a = net.alpha(src, dst)
        phits = net.phits(size)
        inj = np.bincount(src, phits, minlength=n).max()  # a rank's messages of a step leave one after the other
        rdv = 2 * a * np.bincount(src, size > eager, minlength=n).max()  # RTS and CTS, per rendezvous message
        total += a + (inj - hp) + rdv
        cont += a + (net.max_link_phits(src, dst, phits) - hp) + rdv
        alphas += a + rdv
        hops.append(net.mean_hops(src, dst))
    if kind == "bcast":  # the longest chain of the tree; links shared within a round add their excess
        excess = cont - total
        total = bcast_chain(net, n, S, eager)
        cont = total + excess
        alphas = bcast_chain(net, n, S, eager, bytes_term=False)
    return {"cycles": total, "contention": cont, "alpha_cycles": alphas, "steps": len(hops),
            "hops_mean": float(np.mean(hops))}


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
    ("torus 8x8", "allreduce", 65536, "ring", {"allreduce": "ring"}),
    ('{"topology": {"dims": [64], "kind": "torus"}}', "allreduce", 65536, "ring", {"allreduce": "ring"}),
    ("dragonfly 1056", "allreduce", 65536, "ring", {"allreduce": "ring"}),
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


def within(meas: float, mod: float) -> str:
    return "yes" if abs(meas - mod) <= 0.10 * mod else "**no**"


def auto_allreduce(S: int) -> str:
    return "recursive_doubling" if S <= 2048 else "rabenseifner"


def table_hockney(args, res: dict, nets: dict) -> str:
    rows = ["| network | collective | bytes | algorithm | steps | step hops (mean) | measured (cycles) "
            "| Hockney (cycles) | of which alpha | difference | within 10 % | contention-aware (cycles) | difference "
            "| within 10 % | schedule model (cycles) | difference | within 10 % |",
            "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---|"]
    for k in hockney_runs(args):
        net, w, _ = json.loads(k)
        if k not in res:
            continue
        r = res[k]
        kind, S = w["program"], w["message_bytes"]
        alg = auto_allreduce(S) if kind == "allreduce" else ""
        S = 0 if kind == "barrier" else S
        m = model(nets[net], kind, r["nodes"], S, alg)
        sched = schedule(nets[net], model_steps(kind, r["nodes"], S, alg), packet_phits(net), nets[net].eager)["cycles"]
        name = {"barrier": "dissemination", "bcast": "binomial", "alltoall": "pairwise"}.get(kind, alg)
        c = r["cycles"]
        rows.append(f"| {net} | {kind} | {S:,} | {name} | {m['steps']} | {m['hops_mean']:.2f} | {c:,} | "
                    f"{m['cycles']:,.0f} | {m['alpha_cycles']:,.0f} | {pct(c, m['cycles'])} | "
                    f"{within(c, m['cycles'])} | "
                    f"{m['contention']:,.0f} | {pct(c, m['contention'])} | {within(c, m['contention'])} | "
                    f"{sched:,.0f} | {pct(c, sched)} | {within(c, sched)} |")
    return "\n".join(rows)


def packet_phits(net: str) -> int:
    from fastnet.config import resolve

    return resolve(config(net, {"program": "barrier"}))["traffic"]["packet_phits"]


def table_diagnostics(res: dict) -> str:
    rows = ["| network | collective | bytes | [mpi] | measured (cycles) | Hockney (cycles) | difference "
            "| contention-aware (cycles) | difference |", "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for net, kind, S, alg, mpi in DIAGNOSTICS:
        k = key(net, {"program": kind, "message_bytes": S}, mpi)
        if k not in res:
            continue
        c = res[k]["cycles"]
        m = model(Net(net), kind, res[k]["nodes"], 0 if kind == "barrier" else S, alg, mpi.get("eager_bytes"))
        name = "ring of 64 (torus dims [64])" if net.startswith("{") else net
        extra = ", ".join(f"{a} = {b}" for a, b in mpi.items()) or "defaults"
        rows.append(f"| {name} | {kind} {alg} | {0 if kind == 'barrier' else S:,} | {extra} | {c:,} | "
                    f"{m['cycles']:,.0f} | {pct(c, m['cycles'])} | {m['contention']:,.0f} | "
                    f"{pct(c, m['contention'])} |")
    return "\n".join(rows)


def table_allreduce(res: dict, net: Net) -> str:
    rows = ["| bytes | algorithm | measured (cycles) | Hockney (cycles) | difference | contention-aware (cycles) "
            "| difference | measured / previous size |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    prev = None
    for S in ALLREDUCE_SIZES:
        k = key("torus 8x8", {"program": "allreduce", "message_bytes": S})
        if k not in res:
            continue
        c = res[k]["cycles"]
        alg = auto_allreduce(S)
        m = model(net, "allreduce", 64, S, alg)
        ratio = f"{c / prev:.2f}" if prev else ""
        rows.append(f"| {S:,} | {alg} | {c:,} | {m['cycles']:,.0f} | {pct(c, m['cycles'])} | "
                    f"{m['contention']:,.0f} | {pct(c, m['contention'])} | {ratio} |")
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
        f = int(net.zero_load(0, 1, S))
        rdv = S > net.eager
        if rdv:
            f += 2 * int(net.zero_load(0, 1, 0))
        rows.append(f"| {S:,} | {'rendezvous' if rdv else 'eager'} | {int(net.phits(S)):,} | {one:,.1f} | {f:,} | "
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
