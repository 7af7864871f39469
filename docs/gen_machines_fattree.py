"""The InfiniBand fat-tree section of docs/machines.md (seed 003 §VI-B): PPT's Fig. 3 experiment on a 4-port
3-tree, and MLID against random (per flow and per packet) and adaptive up ports on an 8-port 3-tree.

    python docs/gen_machines_fattree.py [--parts fig3,mlid] [--cache FILE] [--no-doc]

Writes the section between the `machines-fattree` markers of docs/machines.md. Measurements are kept in `--cache`
(JSON, keyed by run) so that the doc can be rewritten without simulating again; delete it to measure afresh.

fig3: every rank of the 16-node m = 4, n = 3 tree posts one irecv per message it will receive, then isends its
share of the messages (message i goes from rank i mod 16), then waits for all of them (fastnet/mpi trace replay).
Nearest neighbour: rank r sends to r xor 1, the other node of its leaf switch; random: each message to a seeded
random other rank. Links as Stampede's FDR InfiniBand in PPT: 56 Gb/s and 0.7 us on every link.

mlid: open-loop traffic at offered load 1.0 on the 128-node m = 8, n = 3 tree with updown routing, one run per
up_port and pattern (random permutations under several seeds, and three fixed patterns). Beside each measurement,
a flow model of the same pattern: MLID, D-mod-k and random paths give every flow one path, whose max-min fair rates (water-
filling, fastnet/throughput/heuristics.py) with every link and node port of capacity 1 bound what they can carry;
random up ports spread a flow evenly over all its up*/down* paths, whose most loaded link is reported.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "machines.md"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402

import fastnet  # noqa: E402
from fastnet.build import build_routes  # noqa: E402
from fastnet.topology import build_network  # noqa: E402
from fastnet.build.routing import IP_K  # noqa: E402
from fastnet.kernels.routing import ft_fixed_up, ft_up_or_down  # noqa: E402
from fastnet.registry import UP_DMODK, UP_MLID, UP_RANDOM_PATH  # noqa: E402
from fastnet.mpi.calls import Call, Trace  # noqa: E402
from fastnet.mpi.traces.write import write_dumpi_ascii  # noqa: E402
from fastnet.throughput.heuristics import waterfill  # noqa: E402
from fastnet.throughput.instance import from_lists  # noqa: E402
from fastnet.traffic.patterns import compile_traffic  # noqa: E402

# Stampede (PPT §VI-B): FDR InfiniBand, 56 Gb/s links of 0.7 us. A cycle moves one 4-byte phit at 56 Gb/s.
GBPS, PHIT_BYTES, LINK_US = 56, 4, 0.7
CYCLE_NS = PHIT_BYTES * 8 / GBPS
LINK_CYCLES = round(LINK_US * 1000 / CYCLE_NS)  # 1225
MTU_PHITS = 2048 // PHIT_BYTES  # packets of InfiniBand's 2 KB MTU
BUFFER_PHITS = 4096  # per VC: more than the credit loop of a 1225-cycle link, so no link waits for credits
MESSAGE_BYTES = 1024
TOTALS = (500, 1000, 2000, 4000, 8000)
FIG3_TREE = {"kind": "fattree", "form": "m_port_n_tree", "m": 4, "n": 3}
MLID_TREE = {"kind": "fattree", "form": "m_port_n_tree", "m": 8, "n": 3}
UP_PORTS = ("mlid", "dmodk", "random_path", "random", "adaptive")
SEEDS = (1, 2, 3, 4, 5)
FIXED = (("shift", 64), ("bitcomp", 0), ("uniform", 0))  # (pattern, traffic.shift)
VCS = (1, 4)


# ---------------------------------------------------------------- fig3
def fig3_trace(total: int, pattern: str, ranks: int = 16, seed: int = 1) -> Trace:
    src = np.arange(total) % ranks
    if pattern == "nearest":
        dst = src ^ 1
    else:
        dst = (src + np.random.default_rng(seed).integers(1, ranks, size=total)) % ranks
    calls: list[list[Call]] = [[] for _ in range(ranks)]
    n_req = [0] * ranks
    for s, d in zip(src.tolist(), dst.tolist()):  # every receive is posted before any message leaves
        calls[d].append(Call("irecv", peer=s, tag=0, bytes=MESSAGE_BYTES, request=n_req[d]))
        n_req[d] += 1
    for s, d in zip(src.tolist(), dst.tolist()):
        calls[s].append(Call("isend", peer=d, tag=0, bytes=MESSAGE_BYTES, request=n_req[s]))
        n_req[s] += 1
    for r in range(ranks):
        calls[r].append(Call("waitall", requests=tuple(range(n_req[r]))))
    return Trace(calls)


def fig3_config(trace_dir: Path) -> dict:
    return {"topology": FIG3_TREE, "links": {"bandwidth": f"{GBPS} Gb/s", "latency": f"{LINK_US} us"},
            "router": {"buffer_phits": BUFFER_PHITS}, "routing": {"algorithm": "updown", "up_port": "mlid"},
            "traffic": {"packet_phits": MTU_PHITS, "phit_bytes": PHIT_BYTES},
            "workload": {"kind": "trace", "file": str(trace_dir)}, "sim": {"max_cycles": 2**31 - 1}}


def measure_fig3(total: int, pattern: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        write_dumpi_ascii(fig3_trace(total, pattern), Path(tmp) / "t")
        t0 = time.perf_counter()
        ds = fastnet.run(fig3_config(Path(tmp) / "t"))
    return {"messages": int(ds.messages), "execution_cycles": int(ds.execution_cycles),
            "message_latency_mean": float(ds.message_latency_mean),
            "network_latency_mean": float(ds.network_latency_mean), "hops_mean": float(ds.hops_mean),
            "wall_s": time.perf_counter() - t0}


def zero_load(hops: float, delay: int = 3) -> float:
    """docs/model.md's zero-load latency of one 1 KB message (+ 32 B header: one 264-phit packet)."""
    phits = (MESSAGE_BYTES + 32) // PHIT_BYTES
    return 2 * LINK_CYCLES + hops * LINK_CYCLES + (hops + 1) * delay + phits - 1


def us(cycles: float) -> str:
    return f"{cycles * CYCLE_NS / 1000:,.2f}"


def table_fig3(res: dict) -> str:
    rows = ["| messages | traffic | mean message latency (cycles) | (us) | network latency of its packets (cycles) "
            "| router hops | execution (cycles) | (us) |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for pattern in ("nearest", "random"):
        for total in TOTALS:
            r = res[json.dumps(["fig3", total, pattern])]
            rows.append(f"| {total:,} | {'nearest neighbour' if pattern == 'nearest' else 'random'} "
                        f"| {r['message_latency_mean']:,.0f} | {us(r['message_latency_mean'])} "
                        f"| {r['network_latency_mean']:,.0f} | {r['hops_mean']:.2f} | {r['execution_cycles']:,} "
                        f"| {us(r['execution_cycles'])} |")
    return "\n".join(rows)


# ---------------------------------------------------------------- mlid
def mlid_config(up_port: str, pattern: str, shift: int, seed: int, vcs: int) -> dict:
    traffic = {"pattern": pattern, "load": 1.0, **({"shift": shift} if pattern == "shift" else {})}
    return {"topology": MLID_TREE, "routing": {"algorithm": "updown", "up_port": up_port}, "router": {"vcs": vcs},
            "traffic": traffic, "sim": {"warmup": 3000, "measure": 10000, "drain": 0, "seed": seed}}


def measure_mlid(up_port: str, pattern: str, shift: int, seed: int, vcs: int) -> dict:
    t0 = time.perf_counter()
    ds = fastnet.run(mlid_config(up_port, pattern, shift, seed, vcs))
    return {"accepted": float(ds.accepted_phits_per_node_cycle), "latency": float(ds.packet_latency_mean),
            "wall_s": time.perf_counter() - t0}


def up_down_paths(net, ip, s: int, d: int, scheme: int | None) -> list[tuple[list[int], float]]:
    """The port paths (node port, router ports..., node port) of s -> d with their shares: one path under a
    deterministic scheme (UP_MLID, UP_DMODK, UP_RANDOM_PATH), else every up*/down* path with an even share (random up ports)."""
    ps, k = net.topo.router_port_start, int(ip[IP_K])
    dest = int(net.node_router[d])
    done: list[tuple[list[int], float]] = []
    todo = [([int(net.node_port[s])], int(net.node_router[s]), 1.0)]
    while todo:
        path, r, share = todo.pop()
        if r == dest:
            done.append((path + [int(net.node_port[d])], share))
            continue
        out, level = ft_up_or_down(ps, ip, r, dest)
        if out >= 0:
            outs = [int(out)]
        elif scheme is not None:
            outs = [int(ps[r] + k + ft_fixed_up(ip, scheme, level, s, d))]
        else:
            outs = [int(ps[r] + k + j) for j in range(k)]
        for o in outs:
            todo.append((path + [o], int(net.port_peer_router[o]), share / len(outs)))
    return done


def flow_model(pattern: str, shift: int, seed: int) -> dict:
    """Per scheme: max-min fair mean rate (single path) or the most loaded link (even split), for the pattern's
    flows (uniform: left out, it has no fixed flows)."""
    cfg = fastnet.config.resolve(mlid_config("mlid", pattern, shift, seed, 1))
    net = build_network(cfg)
    ip = build_routes(net).ip
    dst = compile_traffic(net, cfg["traffic"], seed).table
    flows = [(s, int(dst[s])) for s in range(net.n_nodes) if dst[s] >= 0 and dst[s] != s]
    out: dict = {}
    # every output port (router or node port) is a link of capacity 1; a node's injection is its node port's input
    peer = np.where(net.port_peer_router >= 0, net.port_peer_router, -1 - net.port_peer_port)
    links = [[int(net.port_router[p]), int(peer[p]), 1.0] for p in range(net.n_ports)]
    links += [[-1 - n, int(net.node_router[n]), 1.0] for n in range(net.n_nodes)]
    for name, scheme in (("mlid", UP_MLID), ("dmodk", UP_DMODK), ("random_path", UP_RANDOM_PATH)):
        paths = []
        for s, d in flows:
            (path, _), = up_down_paths(net, ip, s, d, scheme)
            paths.append([[net.n_ports + s] + path[1:]])  # injection at s, then the ports it leaves by
        rates = waterfill(from_lists(links, [list(f) for f in flows], paths))
        load = np.bincount([x for p in paths for x in p[0]], minlength=len(links))
        out[name] = {"rate": float(np.sum(rates)) / net.n_nodes, "max_link_flows": int(load.max())}
    load = np.zeros(len(links))
    for s, d in flows:
        for path, share in up_down_paths(net, ip, s, d, None):
            load[[net.n_ports + s] + path[1:]] += share
    out["random"] = {"max_link_load": float(load.max())}
    return out


def table_mlid(res: dict) -> str:
    head = ("| traffic | flow model: MLID / D-mod-k / random path max-min mean rate (most flows on a link) | random: most loaded "
            "link | " + " | ".join(f"{u} ({v} VC{'s' if v > 1 else ''})" for v in VCS for u in UP_PORTS) + " |")
    rows = [head, "|---|---|---:|" + "---:|" * (len(VCS) * len(UP_PORTS))]
    cases = [("permutation", 0, s) for s in SEEDS] + [(p, sh, 1) for p, sh in FIXED]
    means = {(u, v): [] for v in VCS for u in UP_PORTS}
    for pattern, shift, seed in cases:
        name = f"permutation, seed {seed}" if pattern == "permutation" else (
            f"shift {shift}" if pattern == "shift" else pattern)
        model = res[json.dumps(["model", pattern, shift, seed])]
        if model:
            flow = (f"{model['mlid']['rate']:.3f} ({model['mlid']['max_link_flows']}) / "
                    f"{model['dmodk']['rate']:.3f} ({model['dmodk']['max_link_flows']}) / "
                    f"{model['random_path']['rate']:.3f} ({model['random_path']['max_link_flows']})")
            rnd = f"{model['random']['max_link_load']:.2f}"
        else:
            flow, rnd = "(random destinations)", ""
        cells = []
        for v in VCS:
            for u in UP_PORTS:
                a = res[json.dumps(["mlid", u, pattern, shift, seed, v])]["accepted"]
                cells.append(f"{a:.3f}")
                if pattern == "permutation":
                    means[(u, v)].append(a)
        rows.append(f"| {name} | {flow} | {rnd} | " + " | ".join(cells) + " |")
    rows.append(f"| **permutations, mean of {len(SEEDS)}** | | | "
                + " | ".join(f"**{np.mean(means[(u, v)]):.3f}**" for v in VCS for u in UP_PORTS) + " |")
    return "\n".join(rows)


# ---------------------------------------------------------------- the section
def section(res: dict, parts: list[str]) -> str:
    stamp = f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_machines_fattree.py`."
    out = [f"""## InfiniBand fat tree (seed 003 §VI-B)

PPT models Stampede's FDR InfiniBand as Lin et al.'s m-port n-tree with their multiple-LID (MLID) routing
(`[topology] kind = "fattree"`, `form = "m_port_n_tree"`; `[routing] algorithm = "updown"`, `up_port = "mlid"`;
fastnet/build/fattree.py, docs/config.md). {stamp}

Link parameters (PPT §VI-B): 56 Gb/s and 0.7 us on every link, up, down and to the nodes. fastnet counts in
cycles of one 4-byte phit: at 56 Gb/s a cycle is {CYCLE_NS:.4f} ns (`links.bandwidth = "56 Gb/s"`), so
`links.latency = "0.7 us"` is {LINK_CYCLES} cycles. The rest is ours, as PPT does not give it: router delay 3 cycles (the
default), {BUFFER_PHITS}-phit buffers (more than a link's credit loop of 2 x {LINK_CYCLES} cycles, so credits
never hold a link back), packets of the 2 KB InfiniBand MTU ({MTU_PHITS} phits),
fastnet's MPI defaults (32-byte
header: a 1 KB message is one 264-phit packet, sent eagerly). These are the runs below; the `stampede` preset
shares their links and buffers, not the rest (router delay 0, 24-phit packets: fastnet/machines/stampede.toml)."""]
    if "fig3" in parts:
        first = {p: res[json.dumps(["fig3", TOTALS[0], p])] for p in ("nearest", "random")}
        last = {p: res[json.dumps(["fig3", TOTALS[-1], p])] for p in ("nearest", "random")}
        above = all(res[json.dumps(["fig3", t, "random"])]["message_latency_mean"]
                    > res[json.dumps(["fig3", t, "nearest"])]["message_latency_mean"] for t in TOTALS)
        rising = all(res[json.dumps(["fig3", a, p])]["message_latency_mean"]
                     < res[json.dumps(["fig3", b, p])]["message_latency_mean"]
                     for p in ("nearest", "random") for a, b in zip(TOTALS, TOTALS[1:]))
        out.append(f"""### Fig. 3: 1 KB messages on a 4-port 3-tree

16 nodes and 20 switches, as in PPT's comparison with FatTreeSim and Emulab. Every rank posts its receives, then
isends its share of the messages at once (message i from rank i mod 16), then waits for all of them; nearest
neighbour sends to the other node of the same leaf switch (rank xor 1), random to a seeded random other rank per
message. What PPT plots is the average latency of a message; here it is `message_latency_mean`, from the isend
being posted to the data being delivered, so it includes the time a message waits at its source behind the
rank's earlier messages. "Network latency" is its packet's own time from injection to delivery. Alone in the
network a 1 KB message takes {zero_load(0):,.0f} cycles ({us(zero_load(0))} us) to the other node of its leaf and
{zero_load(4):,.0f} cycles ({us(zero_load(4))} us) to a node of the other half (four 0.7 us switch links more).

{table_fig3(res)}

PPT's prose: latency grows with the number of messages, and random destinations cost more than nearest
neighbour. Here the mean latency {'grows with every step of the message count' if rising else 'does NOT grow at every step'}
(nearest neighbour {first['nearest']['message_latency_mean']:,.0f} cycles at {TOTALS[0]:,} messages,
{last['nearest']['message_latency_mean']:,.0f} at {TOTALS[-1]:,}; random {first['random']['message_latency_mean']:,.0f} and
{last['random']['message_latency_mean']:,.0f}), and random destinations sit {'above nearest neighbour at every count' if above else 'NOT above nearest neighbour at every count'}.
The growth is queueing at the source: a rank posts all its messages at once and its 56 Gb/s link sends one
264-phit message after the other, so a message waits on average for half of its rank's earlier ones. The
packets' network latency stays at the zero-load value for nearest neighbour (its links are private) and is
higher for random destinations, which cross up to four more 0.7 us links and meet other messages at the
switches and at their destination. The figure's values are not in our copy of the paper, so this compares
trends only.""")
    if "mlid" in parts:
        acc = {(u, p, sh, sd, v): res[json.dumps(["mlid", u, p, sh, sd, v])]["accepted"]
               for k in res if k.startswith('["mlid"') for u, p, sh, sd, v in [json.loads(k)[1:]]}
        perm = {u: float(np.mean([acc[(u, "permutation", 0, s, 1)] for s in SEEDS])) for u in UP_PORTS}
        models = [res[json.dumps(["model", "permutation", 0, s])] for s in SEEDS]
        rates = [m_["mlid"]["rate"] for m_ in models]
        crowd = [m_["mlid"]["max_link_flows"] for m_ in models]
        gap = max(r - acc[("mlid", "permutation", 0, s, 1)] for r, s in zip(rates, SEEDS))
        holds = perm["mlid"] >= perm["random_path"]
        rp = [m_["random_path"]["rate"] for m_ in models]
        fixed = {p: (acc[("mlid", p, sh, 1, 1)], acc[("random", p, sh, 1, 1)]) for p, sh in FIXED}
        out.append(f"""### MLID against random and adaptive up ports

The 128-node 8-port 3-tree (80 switches), updown routing, open-loop traffic at offered load 1.0 (packets of 10
phits, 256-phit buffers; 1 VC, all that up*/down* needs, and 4 VCs, which take most head-of-line blocking away
from the random and adaptive choices), 3,000 cycles of warm-up and 10,000 measured: accepted phits/node/cycle.
MLID is Lin et al.'s scheme: a source addresses the destination's LID that its own digits below their common
prefix select, so it leaves level l by its own digit l; D-mod-k (`dmodk`) goes up by the destination's digits.

{table_mlid(res)}

MLID against random up ports, as seed 003 and Lin et al. compare them: InfiniBand forwards by destination LID,
so a flow's packets follow one path, and "random" is a random path per flow (`random_path`: a fixed
pseudo-random up port per source, destination and level). **Judged line, MLID carries at least as much as
random: {'holds' if holds else 'does not hold'} on random permutations** (mean accepted {perm['mlid']:.3f} for
MLID against {perm['random_path']:.3f} for random paths, 1 VC; D-mod-k {perm['dmodk']:.3f}). The flow model
agrees: max-min fair rates averaging {min(rates):.3f} to {max(rates):.3f} for MLID (at most {gap:.3f} above what
the simulator carries) against {min(rp):.3f} to {max(rp):.3f} for random paths. MLID spreads the sources
perfectly (the nodes of a leaf leave it by different links, the sources of a pod reach different top switches);
random paths collide on the way up as well as on the way down.

What no InfiniBand fabric can do carries more still: a random up port per packet (`random`, BookSim2's fat-tree
routing; {perm['random']:.3f}) and the least-occupied up port (`adaptive`, {perm['adaptive']:.3f}) spread each flow
evenly over all its paths, so no link carries more than one node's worth (the model's most loaded link carries
{max(m_['random']['max_link_load'] for m_ in models):.2f}) and only the allocator (head-of-line blocking with 1 VC) keeps
them below 1. MLID's single paths leave a top switch with one flow from each of the 8 pods, and a random
permutation sends several of them into the same pod and leaf over the same down links
({'-'.join(str(c) for c in sorted(set(crowd)))} flows on the busiest link); D-mod-k is the mirror image (its
collisions are on the up links). Where the traffic fits MLID's arithmetic it beats even per-packet spraying: a
shift by half the machine ({fixed['shift'][0]:.3f} against {fixed['shift'][1]:.3f}) and bit complement
({fixed['bitcomp'][0]:.3f} against {fixed['bitcomp'][1]:.3f}) send the flows of each top switch to different pods;
under uniform traffic they are level ({fixed['uniform'][0]:.3f} against {fixed['uniform'][1]:.3f}).""")
    return "\n\n".join(out)


def runs(parts: list[str]) -> list[tuple]:
    out: list[tuple] = []
    if "fig3" in parts:
        out += [("fig3", t, p) for p in ("nearest", "random") for t in TOTALS]
    if "mlid" in parts:
        cases = [("permutation", 0, s) for s in SEEDS] + [(p, sh, 1) for p, sh in FIXED]
        out += [("model", p, sh, s) for p, sh, s in cases]
        out += [("mlid", u, p, sh, s, v) for p, sh, s in cases for v in VCS for u in UP_PORTS]
    return out


def measure(key: tuple) -> dict:
    if key[0] == "fig3":
        return measure_fig3(*key[1:])
    if key[0] == "model":
        return {} if key[1] == "uniform" else flow_model(*key[1:])
    return measure_mlid(*key[1:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="fig3,mlid")
    ap.add_argument("--cache", default=str(ROOT / "docs" / "machines_fattree_measured.json"))
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    parts = args.parts.split(",")
    cache = Path(args.cache)
    res = json.loads(cache.read_text()) if cache.exists() else {}
    for key in runs(parts):
        k = json.dumps(list(key))
        if k not in res:
            res[k] = measure(key)
            print(f"{res[k].get('wall_s', 0.0):6.1f} s  {k}", flush=True)
            cache.write_text(json.dumps(res, indent=1, sort_keys=True))
    if not args.no_doc:  # every part measured so far, not only those asked for now
        done = [p for p in ("fig3", "mlid") if all(json.dumps(list(k)) in res for k in runs([p]))]
        replace_section(DOC, "machines-fattree", section(res, done))


if __name__ == "__main__":
    main()
