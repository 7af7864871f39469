"""The compiled network every kernel reads: flat struct-of-arrays built once from a router graph.

Port numbering (global ids): router r owns ports `router_port_start[r] .. router_port_start[r+1]-1`; its node
ports come first, then its network ports in the order the topology builder gave them. A port is bidirectional:
its input side holds the VC buffers for what the peer sends, its output side drives the link to the peer.

Sentinel encoding (documented once, used everywhere): for a node port, `port_peer_router == -1` and
`port_peer_port` holds the node id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..errors import ConfigError
from ..units import PERIOD_ONE

# Link classes (port_class values).
NODE, LOCAL, GLOBAL = 0, 1, 2
CLASS_NAMES = ("injection", "local", "global")

# Topology.port columns
P_ROUTER, P_PEER_ROUTER, P_PEER_PORT, P_CLASS, P_LATENCY, P_PERIOD = 0, 1, 2, 3, 4, 5
N_P = 6  # columns (the cycle loop checks it once: engine/loop.py rows_known)
# Topology.node columns
NODE_ROUTER, NODE_PORT = 0, 1
N_NODE = 2  # columns


class Topology(NamedTuple):
    """Read-only arrays of a compiled network (R routers, P ports, N nodes).

    Ports and nodes are records (one row each) rather than one array per field: a kernel helper that receives
    an array pays nothing, one that receives a tuple of arrays pays reference counting per array per call.
    """

    router_port_start: np.ndarray  # int32[R+1]: CSR offsets of each router's ports
    port: np.ndarray  # int32[P, 6]: router, peer router (-1: node), peer port (or node id), class, latency
    # (cycles), period (cycles per phit x units.PERIOD_ONE: the link's rate)
    node: np.ndarray  # int32[N, 2]: router, port
    router_group: np.ndarray  # int32[R]: dragonfly group, Slim Fly (s, x) group, fat-tree level, else 0


@dataclass
class RouterGraph:
    """What a topology builder returns: routers, their ordered network links and their node counts.

    `nbr_start/nbr/nbr_class` is a CSR of directed half-links in port order; every link u->v appears once in
    u's list and once (as v->u) in v's list. Parallel links pair up in order of appearance. `nbr_length`, if
    given, is each link's length: its latency is that multiple of its class's latency (an on-chip layout).
    """

    kind: str
    nodes_per_router: np.ndarray  # int32[R]
    nbr_start: np.ndarray  # int64[R+1]
    nbr: np.ndarray  # int32[E]
    nbr_class: np.ndarray  # int8[E]
    router_group: np.ndarray  # int32[R]
    params: dict[str, Any] = field(default_factory=dict)  # builder facts for routing (q, X sets, dims, ...)
    nbr_wire: np.ndarray | None = None  # int8[E]: which wire a LOCAL half-link is (1: a dragonfly group's second,
    # "black" dimension; build/dragonfly.py); None: one kind only. Both ends agree; routing ignores it.
    nbr_length: np.ndarray | None = None  # int32[E] latency multiple of each half-link (None: all 1)


@dataclass
class Network:
    """A compiled network: the kernel arrays plus what the Python side needs to describe it."""

    kind: str
    topo: Topology
    graph: RouterGraph
    params: dict[str, Any]
    port_wire: np.ndarray | None = None  # int8[P]: RouterGraph.nbr_wire per port (0 on node ports), or None

    @property
    def n_routers(self) -> int:
        return len(self.topo.router_port_start) - 1

    @property
    def n_nodes(self) -> int:
        return len(self.topo.node)

    @property
    def n_ports(self) -> int:
        return len(self.topo.port)

    @property
    def radix(self) -> int:
        return int(np.diff(self.topo.router_port_start).max())

    # column views, for readable Python-side code
    port_router = property(lambda self: self.topo.port[:, P_ROUTER])
    port_peer_router = property(lambda self: self.topo.port[:, P_PEER_ROUTER])
    port_peer_port = property(lambda self: self.topo.port[:, P_PEER_PORT])
    port_class = property(lambda self: self.topo.port[:, P_CLASS])
    port_latency = property(lambda self: self.topo.port[:, P_LATENCY])
    port_period = property(lambda self: self.topo.port[:, P_PERIOD])
    node_router = property(lambda self: self.topo.node[:, NODE_ROUTER])
    node_port = property(lambda self: self.topo.node[:, NODE_PORT])

    def link_counts(self) -> dict[str, int]:
        """Bidirectional links by class (each counted once)."""
        cls = self.port_class
        return {
            "injection": int((cls == NODE).sum()),
            "local": int((cls == LOCAL).sum()) // 2,
            "global": int((cls == GLOBAL).sum()) // 2,
        }


def csr_from_lists(neighbours: list[list[int]], classes: list[list[int]] | None = None) -> tuple:
    """Small helper for builders that produce per-router Python lists."""
    counts = np.array([len(x) for x in neighbours], dtype=np.int64)
    start = np.zeros(len(neighbours) + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    nbr = np.fromiter((v for row in neighbours for v in row), dtype=np.int32, count=int(start[-1]))
    if classes is None:
        cls = np.full(len(nbr), LOCAL, dtype=np.int8)
    else:
        cls = np.fromiter((c for row in classes for c in row), dtype=np.int8, count=int(start[-1]))
    return start, nbr, cls


def _pair_half_links(start: np.ndarray, nbr: np.ndarray) -> np.ndarray:
    """For each half-link u->v (index e), the index of its reverse v->u; parallel links pair by rank."""
    n_routers = len(start) - 1
    src = np.repeat(np.arange(n_routers, dtype=np.int64), np.diff(start))
    dst = nbr.astype(np.int64)
    fwd = src * n_routers + dst
    order = np.argsort(fwd, kind="stable")
    sorted_keys = fwd[order]
    rev = dst * n_routers + src
    # In an undirected graph the reverse keys are the forward keys again: the k-th half-link v->u (in index order)
    # of a key pairs with the k-th u->v, i.e. the place of rev[e] among the reverse keys sorted stably is the place
    # of its pair among the forward keys sorted stably (checked below: a directed graph fails the check).
    pos_c = np.empty(len(nbr), dtype=np.int64)
    pos_c[np.argsort(rev, kind="stable")] = np.arange(len(nbr))
    ok = sorted_keys[pos_c] == rev
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        raise ConfigError("topology", f"link {int(src[bad])}->{int(dst[bad])} has no reverse link (graph must be undirected)")
    return order[pos_c]


def assemble(g: RouterGraph, latency: dict[str, int], period: dict[str, int] | None = None) -> Network:
    """Lay out ports (node ports first) and resolve each link's peer port. `latency` (cycles) and `period` (a
    phit's cycles x units.PERIOD_ONE; default one phit per cycle) are per link class (CLASS_NAMES); `period`
    may also name "black", the rate of a dragonfly group's second-dimension links (RouterGraph.nbr_wire)."""
    n_routers = len(g.nodes_per_router)
    if (g.nbr < 0).any() or (g.nbr >= n_routers).any():
        raise ConfigError("topology", "a link names a router outside the network")
    self_loops = np.repeat(np.arange(n_routers), np.diff(g.nbr_start)) == g.nbr
    if self_loops.any():
        raise ConfigError("topology", "self-loop links are not allowed")
    net_deg = np.diff(g.nbr_start).astype(np.int64)
    node_deg = g.nodes_per_router.astype(np.int64)
    port_start = np.zeros(n_routers + 1, dtype=np.int64)
    np.cumsum(net_deg + node_deg, out=port_start[1:])
    n_ports = int(port_start[-1])
    n_nodes = int(node_deg.sum())
    if n_nodes == 0:
        raise ConfigError("topology", "the network has no nodes")
    if n_ports >= 2**31 - 1:
        raise ConfigError("topology", f"{n_ports} ports exceed the int32 port index")

    port_router = np.repeat(np.arange(n_routers, dtype=np.int32), net_deg + node_deg)
    local_idx = np.arange(n_ports, dtype=np.int64) - port_start[port_router]
    is_node = local_idx < node_deg[port_router]

    # network half-link e sits at port port_start[u] + node_deg[u] + (e - nbr_start[u])
    e_src = np.repeat(np.arange(n_routers, dtype=np.int64), net_deg)
    e_port = port_start[e_src] + node_deg[e_src] + (np.arange(len(g.nbr)) - g.nbr_start[e_src])
    rev = _pair_half_links(g.nbr_start, g.nbr)

    peer_router = np.full(n_ports, -1, dtype=np.int32)
    peer_port = np.empty(n_ports, dtype=np.int32)
    pclass = np.full(n_ports, NODE, dtype=np.int8)
    peer_router[e_port] = g.nbr
    peer_port[e_port] = e_port[rev]
    pclass[e_port] = g.nbr_class
    if (g.nbr_class[rev] != g.nbr_class).any():
        raise ConfigError("topology", "a link has different classes at its two ends")

    wire = None
    if g.nbr_wire is not None:
        if (g.nbr_wire[rev] != g.nbr_wire).any():
            raise ConfigError("topology", "a link has different wires at its two ends")
        wire = np.zeros(n_ports, dtype=np.int8)
        wire[e_port] = g.nbr_wire

    node_port = np.flatnonzero(is_node).astype(np.int32)  # nodes numbered router by router
    node_router = port_router[node_port].astype(np.int32)
    peer_port[node_port] = np.arange(n_nodes, dtype=np.int32)

    lat = np.empty(n_ports, dtype=np.int32)
    lat[pclass == NODE] = latency["ejection"]  # a node port's own latency is the way to the node (the way in:
    # Params.inject_latency)
    lat[pclass == LOCAL] = latency["local"]
    lat[pclass == GLOBAL] = latency["global"]
    if g.nbr_length is not None:
        if (g.nbr_length[rev] != g.nbr_length).any() or (g.nbr_length < 1).any():
            raise ConfigError("topology", "a link has different lengths at its two ends, or a length below 1")
        lat[e_port] *= g.nbr_length
    period = period or {}
    per = np.full(n_ports, PERIOD_ONE, dtype=np.int32)
    for cls, name in enumerate(CLASS_NAMES):
        per[pclass == cls] = period.get(name, PERIOD_ONE)
    if wire is not None:  # a dragonfly group's second dimension may run at its own rate
        per[wire == 1] = period.get("black", period.get("local", PERIOD_ONE))

    topo = Topology(
        router_port_start=port_start.astype(np.int32),
        port=np.stack([port_router, peer_router, peer_port, pclass.astype(np.int32), lat, per], axis=1),
        node=np.stack([node_router, node_port], axis=1),
        router_group=g.router_group.astype(np.int32),
    )
    return Network(kind=g.kind, topo=topo, graph=g, params=g.params, port_wire=wire)
