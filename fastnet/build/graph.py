"""Arbitrary router graphs: jellyfish random regular graphs, edge lists, and networkx in and out.

Jellyfish (Singla et al.; seed 001): N switches with r ports each, p of them to hosts, the other r - p wired as
a random regular graph (networkx's generator, redrawn with the next seed until connected).

>>> from fastnet.build import build_network, to_networkx
>>> net = build_network({"topology": {"kind": "jellyfish", "switches": 16, "radix": 6, "p": 2, "seed": 3}})
>>> G = to_networkx(net)
>>> G.number_of_nodes(), G.number_of_edges(), {d for _, d in G.degree()}
(16, 32, {4})
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np

from ..errors import ConfigError
from .network import GLOBAL, LOCAL, Network, RouterGraph


def from_edges(edges: list[tuple[int, int]] | np.ndarray, n_routers: int | None, p: int | np.ndarray,
               kind: str = "graph", classes: list[int] | None = None) -> RouterGraph:
    """RouterGraph from undirected edges (u, v); each edge becomes one link. Port order = edge order."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    R = int(e.max()) + 1 if n_routers is None else n_routers
    if len(e) == 0:
        raise ConfigError("topology.edges", "the graph has no links")
    cls = np.full(len(e), LOCAL, dtype=np.int8) if classes is None else np.asarray(classes, dtype=np.int8)
    src = np.concatenate([e[:, 0], e[:, 1]])
    dst = np.concatenate([e[:, 1], e[:, 0]])
    both_cls = np.concatenate([cls, cls])
    order = np.argsort(src, kind="stable")  # keeps edge order within each router
    counts = np.bincount(src, minlength=R)
    start = np.zeros(R + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    nodes = np.broadcast_to(np.asarray(p, dtype=np.int32), (R,)).copy()
    return RouterGraph(kind=kind, nodes_per_router=nodes, nbr_start=start, nbr=dst[order].astype(np.int32),
                       nbr_class=both_cls[order], router_group=np.zeros(R, dtype=np.int32), params={"p": p})


def _check_connected(g: RouterGraph) -> None:
    R = len(g.nodes_per_router)
    G = nx.Graph()
    G.add_nodes_from(range(R))
    src = np.repeat(np.arange(R), np.diff(g.nbr_start))
    G.add_edges_from(zip(src.tolist(), g.nbr.tolist()))
    if not nx.is_connected(G):
        raise ConfigError("topology", "the router graph is not connected")


def jellyfish(switches: int, radix: int, p: int, seed: int) -> RouterGraph:
    d = radix - p
    if d < 1:
        raise ConfigError("topology.p", f"must be < radix ({radix}) to leave network ports (got {p})")
    if d >= switches or (switches * d) % 2:
        raise ConfigError("topology.radix", f"radix - p = {d} network ports cannot form a regular graph on "
                          f"{switches} switches (need radix - p < switches and switches*(radix - p) even)")
    for attempt in range(100):
        G = nx.random_regular_graph(d, switches, seed=seed + attempt)
        if nx.is_connected(G):
            break
    else:
        raise ConfigError("topology.seed", "no connected random regular graph found in 100 draws")
    g = from_edges(sorted(G.edges()), switches, p, kind="jellyfish")
    g.params.update({"switches": switches, "radix": radix, "seed_used": seed + attempt})
    return g


def edge_list(edges: list[list[int]], file: str, p: int) -> RouterGraph:
    if bool(edges) == bool(file):
        raise ConfigError("topology.edges", "give exactly one of `edges` (a list of [u, v]) or `file`")
    if file:
        path = Path(file)
        try:
            data = np.loadtxt(path, dtype=np.int64, comments="#", ndmin=2)[:, :2]
        except (OSError, ValueError) as e:
            raise ConfigError("topology.file", f"cannot read an edge list 'u v' per line from {path} ({e})") from None
        edges = data.tolist()
    g = from_edges(edges, None, p)
    _check_connected(g)
    return g


def from_networkx(G: nx.Graph, p: int = 1) -> RouterGraph:
    """RouterGraph from a networkx graph; nodes are relabelled 0..R-1 in sorted order. Edge attribute
    `link_class` ("local" or "global") is kept; a node attribute `p` overrides the nodes per router."""
    mapping = {v: i for i, v in enumerate(sorted(G.nodes()))}
    edges = [(mapping[u], mapping[v]) for u, v in G.edges()]
    classes = [GLOBAL if d.get("link_class") == "global" else LOCAL for _, _, d in G.edges(data=True)]
    nodes = np.array([G.nodes[v].get("p", p) for v in sorted(G.nodes())], dtype=np.int32)
    g = from_edges(edges, len(mapping), nodes, classes=classes)
    _check_connected(g)
    return g


def to_networkx(net: Network) -> nx.MultiGraph | nx.Graph:
    """The router graph as networkx: router nodes carry `p` (attached nodes) and `group`; edges carry
    `link_class`, `latency` and the two port ids. A MultiGraph only when the network has parallel links."""
    t = net
    net_ports = np.flatnonzero(t.port_peer_router >= 0)
    fwd = net_ports[t.port_peer_port[net_ports] > net_ports]  # each link once
    pairs = set()
    multi = False
    for port in fwd:
        key = (int(t.port_router[port]), int(t.port_peer_router[port]))
        multi |= key in pairs
        pairs.add(key)
    G: nx.Graph = nx.MultiGraph() if multi else nx.Graph()
    counts = np.bincount(t.node_router, minlength=net.n_routers)
    for r in range(net.n_routers):
        G.add_node(r, p=int(counts[r]), group=int(t.topo.router_group[r]))
    names = ("injection", "local", "global")
    for port in fwd:
        G.add_edge(int(t.port_router[port]), int(t.port_peer_router[port]),
                   link_class=names[int(t.port_class[port])], latency=int(t.port_latency[port]),
                   ports=(int(port), int(t.port_peer_port[port])))
    return G
