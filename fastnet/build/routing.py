"""Minimal-routing information for the kernels: a distance table, or the algebra of a regular topology.

A table of router distances (uint8[R, R], built by a jitted BFS from every router) answers "which of my ports
bring the packet one hop closer" for any graph. It costs R² bytes and R BFS passes, so above
`TABLE_BUDGET_BYTES` (about 23k routers) the kernels use algebraic routing instead, which dragonfly, Slim Fly,
torus, mesh and fat tree have. Slim Fly, torus and fat tree use their algebra already above `TABLE_CACHE_BYTES`
(1,024 routers) unless the run has failures (which recompute the table): it finds the table's ports in the
table's order, so the results are the same, without a cache miss per neighbour. The choice is made here from those
sizes; users have no flag for it.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ..errors import ConfigError
from ..kernels._jit import jit_parallel
from ..kernels.state import divisor
from .kinds import TOPOLOGIES
from .network import Network

TABLE_BUDGET_BYTES = 512 * 2**20
TABLE_CACHE_BYTES = 2**20  # a larger table is read from memory: a scan of a router's ports reads one entry per
# neighbour, each a cache miss (Slim Fly q = 73, a 113 MB table: 1.2 us a route), where the algebra reads a few
# small arrays. Kinds whose `algebra` is "cached" use it from this size on (perf/README.md, Scale)
UNREACHABLE = 255
TABLE, ALGEBRAIC = 0, 1
# Which kinds route by algebra (build/kinds.py `algebra`): "always" (a dragonfly's minimal routes are hierarchical,
# local, global, local, while shortest paths of its graph include global-global detours that would break its VC
# classes; a HyperX's algebra costs less than a table lookup at any size, and kernels/routing.py relies on a HyperX
# always being scanned algebraically, `scan == K_HYPERX`), "cached" (above TABLE_CACHE_BYTES, unless the run has
# failures: the algebra gives the table's ports in the table's order, tests/test_topology.py), "large" (above the
# table's budget) or "never".
ALGEBRA = {e.name: e.algebra for e in TOPOLOGIES}
ALGEBRAIC_KINDS = tuple(k for k, a in ALGEBRA.items() if a != "never")


# Routes.ip fields (integer parameters of the routing algebra)
IP_MODE, IP_KIND, IP_DIAMETER, IP_P = 0, 1, 2, 3
IP_A, IP_H, IP_G, IP_PALM = 4, 5, 6, 7  # dragonfly
IP_ROW, IP_BUNDLE = 8, 9  # dragonfly: routers per row of a group (a for an all-to-all group), global_bundle
IP_A_DIV, IP_H_DIV, IP_ROW_DIV = 10, 12, 14  # dragonfly: kernels.state.divisor of a, h and the row, two slots each
IP_ROWS = 16  # dragonfly: rows of a group (a // row)
IP_Q, IP_NX, IP_Q_DIV = 4, 5, 6  # Slim Fly: q, |X|, kernels.state.divisor of q (two slots)
IP_NDIM, IP_WRAP = 4, 5  # torus / mesh / hyperx (IP_WRAP 0)
IP_EXPRESS = 6  # mesh: 1 if it has express channels (BookSim2's cmesh: build/torus.py), the last ports of a router
IP_K, IP_N, IP_FT_S, IP_FT_ROOTS = 4, 5, 6, 7  # fat tree: k, levels, switches per level below the top, roots
IP_DIMS, IP_STRIDES, IP_LINKS = 8, 40, 72  # radices, strides, parallel links (torus links, HyperX trunking)
IP_SIZE = 104
# Slim Fly columns of Routes.alg (rows are field elements a): a+b, a*b at [a, b] and [a, q + b], then:
SF_NEG, SF_INV, SF_XI, SF_XPI, SF_X, SF_XP = 0, 1, 2, 3, 4, 5  # offsets after the 2q table columns


class Routes(NamedTuple):
    dist: np.ndarray  # uint8[R, R] router distances (TABLE mode, or for ksp), else uint8[1, 1]
    ip: np.ndarray  # int64[IP_SIZE] mode, kind, diameter and the topology's integer parameters
    alg: np.ndarray  # int32 lookup table of the algebra: Slim Fly GF(q) tables and X sets; a torus's or mesh's
    # dir_port, then each router's coordinates (column 2 * ndim + dim: kernels/minimal.py torus_coord); a HyperX's
    # coordinates (column dim: kernels/minimal.py hx_trunk)
    vcr: np.ndarray  # int32[3, classes, 2]: (first VC, count) per input-port class and VC class (build/vcs.py)


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


def build_routes(net: Network, budget: int = TABLE_BUDGET_BYTES, failures: bool = False) -> Routes:
    """Routing information for `net`: a table when it fits `budget` (and, for the "cached" kinds without
    `failures`, TABLE_CACHE_BYTES), else the topology's algebra. A mesh with express channels always gets the
    table (up to 8 x `budget`, as the kinds without an algebra)."""
    R = net.n_routers
    kind = net.kind
    algebra = ALGEBRA[kind]
    what = f"kind {kind}"
    if kind == "mesh" and net.params.get("express", 0) > 0:
        algebra = "never"  # its algebra is dimension order's distance, blind to the express channels min takes
        what = "a mesh with express channels (whose algebra would not take them)"
    if algebra == "cached" and not failures:
        budget = min(budget, TABLE_CACHE_BYTES)
    use_table = algebra == "never" or (algebra != "always" and table_bytes(R) <= budget)
    if use_table and table_bytes(R) > 8 * budget:
        raise ConfigError("topology", f"{R} routers of {what} need a {table_bytes(R) / 2**30:.1f} GiB "
                          "routing table; only " + ", ".join(ALGEBRAIC_KINDS) + " route algebraically")
    P = net.params
    ip = np.zeros(IP_SIZE, dtype=np.int64)
    alg = np.zeros((1, 1), dtype=np.int32)
    if kind == "dragonfly":
        ip[[IP_P, IP_A, IP_H, IP_G, IP_PALM, IP_ROW, IP_BUNDLE]] = (
            P["p"], P["a"], P["h"], P["g"], P["arrangement"] == "palmtree", P["group_shape"][0], P["global_bundle"])
        for at, n in ((IP_A_DIV, P["a"]), (IP_H_DIV, P["h"]), (IP_ROW_DIV, P["group_shape"][0])):
            ip[at:at + 2] = divisor(n)
        ip[IP_ROWS] = P["a"] // P["group_shape"][0]
    elif kind == "slimfly":
        F, q, X, Xp = P["field"], P["q"], P["X"], P["Xp"]
        ip[[IP_P, IP_Q, IP_NX]] = (P["p"], q, len(X))
        ip[IP_Q_DIV:IP_Q_DIV + 2] = divisor(q)
        alg = np.full((q, 2 * q + 6), -1, dtype=np.int32)
        alg[:, :q] = F.add
        alg[:, q:2 * q] = F.mul
        alg[:, 2 * q + SF_NEG] = F.neg
        for a in range(1, q):
            alg[a, 2 * q + SF_INV] = int(np.flatnonzero(F.mul[a] == 1)[0])
        alg[X, 2 * q + SF_XI] = np.arange(len(X))
        alg[Xp, 2 * q + SF_XPI] = np.arange(len(Xp))
        alg[: len(X), 2 * q + SF_X] = X
        alg[: len(Xp), 2 * q + SF_XP] = Xp
    elif kind in ("torus", "mesh", "twisted_torus"):
        n = len(P["dims"])
        if n > IP_STRIDES - IP_DIMS:
            raise ConfigError("topology.dims", f"at most {IP_STRIDES - IP_DIMS} dimensions")
        ip[[IP_P, IP_NDIM, IP_WRAP, IP_EXPRESS]] = (P["p"], n, kind == "torus", P.get("express", 0) > 0)
        ip[IP_DIMS:IP_DIMS + n] = P["dims"]
        ip[IP_STRIDES:IP_STRIDES + n] = P["stride"]
        ip[IP_LINKS:IP_LINKS + n] = P["links"]
        alg = np.hstack([P["dir_port"], P["coords"]])
    elif kind == "hyperx":
        n = len(P["dims"])
        if n > IP_STRIDES - IP_DIMS:
            raise ConfigError("topology.dims", f"at most {IP_STRIDES - IP_DIMS} dimensions")
        ip[[IP_P, IP_NDIM, IP_WRAP]] = (P["p"], n, 0)
        ip[IP_DIMS:IP_DIMS + n] = P["dims"]
        ip[IP_STRIDES:IP_STRIDES + n] = P["stride"]
        ip[IP_LINKS:IP_LINKS + n] = P["trunking"]
        alg = P["coords"]
    elif kind == "fattree":
        ip[[IP_K, IP_N, IP_FT_S, IP_FT_ROOTS]] = (P["k"], P["n"], P["switches_per_level"], P["roots"])
    if use_table:
        dist = distance_table(net)
        diameter = int(dist.max())
    else:
        dist = np.zeros((1, 1), dtype=np.uint8)
        diameter = int(P["diameter"])
    ip[[IP_MODE, IP_KIND, IP_DIAMETER]] = (TABLE if use_table else ALGEBRAIC, TOPOLOGIES.code(kind), diameter)
    return Routes(dist=dist, ip=ip, alg=np.ascontiguousarray(alg, dtype=np.int32),
                  vcr=np.zeros((3, 1, 2), dtype=np.int32))


def with_distance_table(net: Network, routes: Routes, budget: int = TABLE_BUDGET_BYTES) -> Routes:
    """Routes that also carry the full distance table (k-shortest paths and min's fixed paths need it whatever
    the routing mode)."""
    if routes.dist.shape[0] == net.n_routers:
        return routes
    if table_bytes(net.n_routers) > budget:
        raise ConfigError("routing.algorithm", f"this routing needs a {table_bytes(net.n_routers) / 2**30:.1f} GiB "
                          f"distance table for {net.n_routers} routers; it is limited to {budget / 2**20:.0f} MiB")
    return routes._replace(dist=distance_table(net))


def diameter(routes: Routes) -> int:
    return int(routes.ip[IP_DIAMETER])


def is_table(routes: Routes) -> bool:
    return int(routes.ip[IP_MODE]) == TABLE


SCAN_TABLE = -1  # minimal_scan of table routing; otherwise the topology kind code whose algebra is scanned


def minimal_scan(routes: Routes) -> int:
    """How the kernels find minimal ports for these routes (kernels/minimal.py `scan`): SCAN_TABLE or the kind code.
    A constant of the cycle loop, so a run compiles only its own topology's scan."""
    return SCAN_TABLE if is_table(routes) else int(routes.ip[IP_KIND])
