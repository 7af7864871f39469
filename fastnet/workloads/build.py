"""Compile the resolved `[workload]` section into the `Workload` tuple the kernels read (config -> build)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..build.network import Network
from ..errors import ConfigError
from ..kernels.rng import seed_streams
from ..units import timing
from .placement import place
from .schema import default_workload
from .state import GF_EDGES2, V_FOGSIM, V_PAPER, WC_QTOT, Workload, inbox_size, new_arrays
from ..registry import WORKLOADS, W_A2A, W_A2O, W_GRAPH500, W_O2A, W_OPEN_LOOP, W_SR


def workload_section(cfg: dict[str, Any]) -> dict[str, Any]:
    return cfg["workload"] if "workload" in cfg else default_workload()


def draw_root_degree(scale: int, rng: np.random.Generator) -> int:
    """d_r = ceil(X), X lognormal with the log-space mean and deviation of eqs 18-19, at most 2^s - 1."""
    from .graph500_model import root_degree_mu, root_degree_sigma

    x = math.exp(rng.normal(root_degree_mu(scale), root_degree_sigma(scale)))
    return int(min(max(1, math.ceil(x)), 2**scale - 1))


def graph500_timing(cfg: dict[str, Any]) -> dict[str, float]:
    """Cycle time, link bandwidth, t_q in cycles and the per-cycle message probability of each variant."""
    w, traffic = cfg["workload"], cfg["traffic"]
    t_c = timing(cfg).cycle_ns  # a reference link moves one phit per cycle (units.py)
    gbps = traffic["phit_bytes"] * 8.0 / t_c
    t_q = w["query_time_ns"] / t_c
    # eq 17 divided by p_s: full messages per free cycle (the paper variant paces each message by its own
    # query count, graph500.py); FOGSim uses eq 17's phit probability as a per-packet probability
    p_gen = 1.0 / (t_q * w["coalescing"])
    if w["variant"] == "fogsim":
        p_gen *= traffic["packet_phits"]
    return {"cycle_ns": t_c, "link_gbps": gbps, "query_cycles": t_q, "p_gen": p_gen}


def table_rows(cfg: dict[str, Any]) -> dict[str, int]:
    """The most rows a run of `cfg` can fill in its per-level or per-wave table (a sweep sizes its store by it:
    how many levels a BFS takes is only known once it has run)."""
    w = workload_section(cfg)
    if w["kind"] == "graph500":
        levels = (9 if w["variant"] == "fogsim" else 64) if w["max_levels"] == "auto" else w["max_levels"]
        return {"level": levels + 1}  # as compile_workload sizes the table
    if w["kind"] in ("sr", "gups"):
        wave = w["messages"] if w["kind"] == "gups" else w["wave"]
        return {"wave": -(-w["messages"] // wave)}
    if w["kind"] in ("open_loop", "mpi", "trace"):
        return {}
    return {"wave": 1}


def compile_workload(cfg: dict[str, Any], net: Network, seed: int) -> Workload:
    w = workload_section(cfg)
    traffic = cfg["traffic"]
    kind = WORKLOADS.code(w["kind"])
    N = net.n_nodes
    T = N if w["tasks"] == "all" else w["tasks"]
    if kind != W_OPEN_LOOP and T > N * w["ranks_per_node"]:
        raise ConfigError("workload.tasks", f"must be at most the {N} nodes of the network (got {T})")
    if kind != W_OPEN_LOOP and T < 2:  # (an MPI program may have one rank)
        raise ConfigError("workload.tasks", f"{w['kind']} needs at least 2 tasks (got {T})")
    if w["ranks_per_node"] > 1 and w["kind"] not in ("mpi", "trace"):
        raise ConfigError("workload.ranks_per_node", f"{w['kind']} runs one task per node; several ranks a node "
                          "are for the MPI kinds (mpi, trace)")
    task_node = place(w, T, net, seed)
    rng = np.random.default_rng([seed, 0x6500])
    root = w["root"]
    if kind in (W_O2A, W_A2O) and root >= T:
        raise ConfigError("workload.root", f"must name a task below workload.tasks = {T} (got {root})")
    messages, wave = w["messages"], (w["messages"] if w["kind"] == "gups" else w["wave"])
    scalars: dict[str, Any] = dict(
        variant=V_PAPER, scale=w["scale"], edgefactor=w["edgefactor"], coalescing=w["coalescing"], root_degree=1,
        max_levels=1, backlog_blocks=True, query_cycles=1.0, p_gen=1.0,
    )
    rows = 1
    if kind == W_SR:
        headroom, rows = wave, -(-messages // wave)
    elif kind == W_A2A:
        headroom = T * (T - 1)
    elif kind in (W_O2A, W_A2O):
        headroom = T - 1
    elif kind == W_GRAPH500:
        headroom = T * (T + 1)  # a process posts at most n-1 signals or broadcasts plus one query in a cycle
        fogsim = w["variant"] == "fogsim"
        timing = graph500_timing(cfg)
        d_r = draw_root_degree(w["scale"], rng) if w["root_degree"] == "auto" else w["root_degree"]
        if w["root_task"] == "auto":
            root = int(rng.integers(T))
        elif w["root_task"] >= T:
            raise ConfigError("workload.root_task", f"must name a task below {T} (got {w['root_task']})")
        else:
            root = w["root_task"]
        max_levels = (9 if fogsim else 64) if w["max_levels"] == "auto" else w["max_levels"]
        blocks = (not fogsim) if w["backlog_blocks_allreduce"] == "auto" else w["backlog_blocks_allreduce"]
        scalars.update(variant=V_FOGSIM if fogsim else V_PAPER, root_degree=d_r, max_levels=max_levels,
                       backlog_blocks=blocks, query_cycles=timing["query_cycles"], p_gen=timing["p_gen"])
        rows = max_levels + 1
    else:
        headroom = 0
    packet_bytes = traffic["packet_phits"] * traffic["phit_bytes"]
    if kind not in (W_OPEN_LOOP, W_GRAPH500) and w["message_bytes"] < 1:
        raise ConfigError("workload.message_bytes", f"must be >= 1 for {w['kind']} (its messages are packets of "
                          "data; an MPI program's may be 0 bytes, header only)")
    per_message = 1 if kind in (W_OPEN_LOOP, W_GRAPH500) else -(-w["message_bytes"] // packet_bytes)
    arrays = new_arrays(T, inbox_size(N, net.n_ports, cfg["router"]["ejection"]), 2 * headroom + 16, rows)
    if kind == W_GRAPH500:
        arrays["gf"][GF_EDGES2] = 2.0 * w["edgefactor"] * 2.0 ** w["scale"]
        arrays["wc"][WC_QTOT] = int(2 ** (w["scale"] + 1) * w["edgefactor"] * (T - 1) // T)
    return Workload(
        kind=kind, n_tasks=T, packet_phits=traffic["packet_phits"], phit_bytes=traffic["phit_bytes"],
        message_bytes=w["message_bytes"], messages=messages, wave=wave, compute_cycles=w["compute_cycles"],
        root=root, msg_headroom=headroom, packets_per_message=per_message, task_node=task_node,
        rng=seed_streams(seed, T + 1, 3), **scalars, **arrays,
    )


def grow_messages(wl: Any) -> Any:
    """Double the message pool of a Workload or mpi.state.Mpi (between kernel calls); the new rows go to the front
    of the free list."""
    from .state import MS_NEXT, WC_FREE_COUNT, WC_FREE_HEAD

    n = len(wl.msg)
    extra = np.zeros_like(wl.msg)
    extra[:, MS_NEXT] = np.arange(n + 1, 2 * n + 1)
    extra[-1, MS_NEXT] = wl.wc[WC_FREE_HEAD]
    wl.wc[WC_FREE_HEAD] = n
    wl.wc[WC_FREE_COUNT] += n
    wl = wl._replace(msg=np.concatenate([wl.msg, extra]))
    if hasattr(wl, "heap_t"):  # the MPI heap holds a rank's wake-up or a message between ranks of one node
        more = np.zeros(n, np.int64)
        wl = wl._replace(heap_t=np.concatenate([wl.heap_t, more]), heap_r=np.concatenate([wl.heap_r, more]))
    return wl
