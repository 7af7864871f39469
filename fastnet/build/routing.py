"""Minimal-routing information for the kernels: a distance table, or the algebra of a regular topology.

A table of router distances (uint8[R, R], built by a jitted BFS from every router) answers "which of my ports
bring the packet one hop closer" for any graph. It costs R² bytes and R BFS passes, so above
`TABLE_BUDGET_BYTES` (about 23k routers) the kernels use algebraic routing instead, which dragonfly, Slim Fly,
torus, mesh and fat tree have. The choice is made here from that size estimate; users have no flag for it.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ..errors import ConfigError
from ..kernels._jit import jit_parallel
from .network import KIND_CODES, Network

TABLE_BUDGET_BYTES = 512 * 2**20
UNREACHABLE = 255
TABLE, ALGEBRAIC = 0, 1
ALGEBRAIC_KINDS = ("dragonfly", "slimfly", "torus", "mesh", "fattree")
# A dragonfly's minimal routes are hierarchical (local, global, local: one global hop at most). Shortest paths
# of its graph also include global-global detours, which would break the VC scheme, so it is always algebraic.
ALGEBRAIC_ONLY = ("dragonfly",)


class Routes(NamedTuple):
    mode: int  # TABLE or ALGEBRAIC
    kind: int  # KIND_CODES of the topology
    diameter: int
    dist: np.ndarray  # uint8[R, R] router distances (TABLE), else uint8[1, 1]
    ip: np.ndarray  # int64[8] integer parameters of the algebra (see kernels/routing.py)
    dims: np.ndarray  # int64[n] torus/mesh radices
    stride: np.ndarray  # int64[n]
    dir_port: np.ndarray  # int32[R, 2n] local port of each torus direction, -1 if none
    gf_add: np.ndarray  # int32[q, q] GF(q) tables (Slim Fly)
    gf_mul: np.ndarray
    gf_neg: np.ndarray  # int32[q]
    gf_inv: np.ndarray  # int32[q]
    x_set: np.ndarray  # int32[|X|] Slim Fly generator sets X and X'
    xp_set: np.ndarray
    x_index: np.ndarray  # int32[q] position of an element in X, -1 if absent
    xp_index: np.ndarray


@jit_parallel
def _bfs_all(nbr_start, nbr, n):
    dist = np.full((n, n), 255, dtype=np.uint8)
    for s in numba.prange(n):
        queue = np.empty(n, dtype=np.int32)
        row = dist[s]
        row[s] = 0
        head, tail = 0, 1
        queue[0] = s
        while head < tail:
            u = queue[head]
            head += 1
            du = row[u]
            for e in range(nbr_start[u], nbr_start[u + 1]):
                v = nbr[e]
                if row[v] == 255:
                    row[v] = du + 1
                    queue[tail] = v
                    tail += 1
    return dist


def distance_table(net: Network) -> np.ndarray:
    g = net.graph
    dist = _bfs_all(g.nbr_start, g.nbr, net.n_routers)
    if (dist == UNREACHABLE).any():
        raise ConfigError("topology", "the router graph is not connected")
    return dist


def table_bytes(n_routers: int) -> int:
    return n_routers * n_routers


def build_routes(net: Network, budget: int = TABLE_BUDGET_BYTES) -> Routes:
    """Routing information for `net`: a table when it fits `budget`, else the topology's algebra."""
    R = net.n_routers
    kind = net.kind
    use_table = kind not in ALGEBRAIC_ONLY and (table_bytes(R) <= budget or kind not in ALGEBRAIC_KINDS)
    if use_table and table_bytes(R) > 8 * budget:
        raise ConfigError("topology", f"{R} routers of kind {kind} need a {table_bytes(R) / 2**30:.1f} GiB "
                          "routing table; only dragonfly, slimfly, torus, mesh and fattree route algebraically")
    P = net.params
    i32 = lambda a: np.asarray(a, dtype=np.int32)  # noqa: E731
    ip = np.zeros(8, dtype=np.int64)
    dims = np.zeros(1, dtype=np.int64)
    stride = np.ones(1, dtype=np.int64)
    dir_port = np.full((1, 1), -1, dtype=np.int32)
    empty_q = np.zeros((1, 1), dtype=np.int32)
    gf = dict(gf_add=empty_q, gf_mul=empty_q, gf_neg=i32([0]), gf_inv=i32([0]), x_set=i32([0]), xp_set=i32([0]),
              x_index=i32([-1]), xp_index=i32([-1]))
    if kind == "dragonfly":
        ip[:5] = (P["p"], P["a"], P["h"], P["g"], 0 if P["arrangement"] == "consecutive" else 1)
    elif kind == "slimfly":
        F = P["field"]
        q = P["q"]
        ip[:3] = (P["p"], q, len(P["X"]))
        x_index = np.full(q, -1, dtype=np.int32)
        xp_index = np.full(q, -1, dtype=np.int32)
        x_index[P["X"]] = np.arange(len(P["X"]))
        xp_index[P["Xp"]] = np.arange(len(P["Xp"]))
        inv = np.zeros(q, dtype=np.int32)
        for a in range(1, q):
            inv[a] = int(np.flatnonzero(F.mul[a] == 1)[0])
        gf = dict(gf_add=F.add, gf_mul=F.mul, gf_neg=F.neg, gf_inv=inv, x_set=i32(P["X"]), xp_set=i32(P["Xp"]),
                  x_index=x_index, xp_index=xp_index)
    elif kind in ("torus", "mesh", "twisted_torus"):
        ip[:3] = (P["p"], len(P["dims"]), 1 if kind == "torus" else 0)
        dims = np.asarray(P["dims"], dtype=np.int64)
        stride = np.asarray(P["stride"], dtype=np.int64)
        dir_port = P["dir_port"]
    elif kind == "fattree":
        ip[:2] = (P["k"], P["n"])
    if use_table:
        dist = distance_table(net)
        diameter = int(dist.max())
    else:
        dist = np.zeros((1, 1), dtype=np.uint8)
        diameter = int(P["diameter"])
    return Routes(mode=TABLE if use_table else ALGEBRAIC, kind=KIND_CODES[kind], diameter=diameter, dist=dist,
                  ip=ip, dims=dims, stride=stride, dir_port=dir_port, **gf)
