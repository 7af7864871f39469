"""A networkx graph as a topology: the `graph` key of `[topology] kind = "graph"` (docs/config.md), which
config.resolve turns into the `edges` and `p` keys, so that a resolved config stays plain data; build.graph's
`from_networkx` reads a graph the same way. Outside fastnet/build because config.py needs it and the build package
imports config.py."""

from __future__ import annotations

import numbers
from typing import Any

import networkx as nx

from .errors import ConfigError

GRAPH_LINK_CLASSES = ("local", "global")  # the router-to-router link classes a graph or an edge list may name


def is_count(v: Any, lo: int) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool) and int(v) >= lo


def resolve_graph(topo: dict[str, Any]) -> dict[str, Any]:
    """A `[topology]` table with a networkx `graph` -> the same table with `edges` and `p` instead (the resolved
    config must be plain data). Routers are relabelled 0..R-1 in sorted order (in the graph's node order when the
    labels do not sort). A node with attribute `type = "node"` is a terminal: it must have one link, to a router;
    when the graph has terminals they give each router's node count, else a router's attribute `p` does, else
    `topology.p`. Edge attribute `link_class` is "local" (default) or "global", `length` (default 1) the link's
    latency in multiples of its class's (`[links]`); other attributes are ignored."""
    field = "topology.graph"
    G = topo["graph"]
    rest = {k: v for k, v in topo.items() if k != "graph"}
    if rest.get("edges") or rest.get("file"):
        raise ConfigError(field, "give exactly one of `graph`, `edges` or `file`")
    default_p = rest.get("p", 1)
    if not is_count(default_p, 1):
        raise ConfigError("topology.p", f"must be an integer >= 1 (got {default_p!r})")
    if not isinstance(G, nx.Graph):
        raise ConfigError(field, f"must be a networkx Graph or MultiGraph (got {type(G).__name__})")
    if G.is_directed():
        raise ConfigError(field, f"must be undirected (got a {type(G).__name__}; use G.to_undirected())")
    if G.number_of_nodes() == 0:
        raise ConfigError(field, "the graph is empty")
    loop = next(iter(nx.selfloop_edges(G)), None)
    if loop is not None:
        raise ConfigError(field, f"self loop at node {loop[0]!r}: a link must join two different routers")
    terminal = {v: d.get("type") == "node" for v, d in G.nodes(data=True)}
    routers = [v for v in G if not terminal[v]]
    try:
        routers = sorted(routers)
    except TypeError:  # labels of mixed types: keep the graph's order
        pass
    index = {v: i for i, v in enumerate(routers)}
    edges: list[list[Any]] = []
    for u, v, d in G.edges(data=True):
        if terminal[u] or terminal[v]:
            continue
        cls = d.get("link_class", "local")
        if cls not in GRAPH_LINK_CLASSES:
            raise ConfigError(field, f"link ({u!r}, {v!r}): link_class must be \"local\" or \"global\" (got {cls!r})")
        length = d.get("length", 1)
        if not is_count(length, 1):
            raise ConfigError(field, f"link ({u!r}, {v!r}): length must be an integer >= 1 (got {length!r})")
        a, b = index[u], index[v]
        edges.append([a, b, cls, int(length)] if length != 1 else [a, b, "global"] if cls == "global" else [a, b])
    if not edges:
        raise ConfigError(field, "the graph has no links between routers")
    if not nx.is_connected(G.subgraph(routers)):
        raise ConfigError(field, "the router graph is not connected")
    counts = [0] * len(routers)
    terminals = [v for v in G if terminal[v]]
    for t in terminals:
        peers = list(G[t])
        if G.degree(t) != 1 or terminal[peers[0]]:
            raise ConfigError(field, f"terminal {t!r} (type \"node\") must have exactly one link, to a router")
        counts[index[peers[0]]] += 1
    for r in routers:
        given = G.nodes[r].get("p")
        if given is not None and not is_count(given, 0):
            raise ConfigError(field, f"router {r!r}: node attribute p must be an integer >= 0 (got {given!r})")
        if terminals:
            if given is not None and int(given) != counts[index[r]]:
                raise ConfigError(field, f"router {r!r} has p = {given} but {counts[index[r]]} terminal nodes")
        else:
            counts[index[r]] = int(given) if given is not None else int(default_p)
    if sum(counts) == 0:
        raise ConfigError(field, "no router has nodes (give node attribute p, terminal nodes or topology.p)")
    rest.update(edges=edges, p=counts[0] if len(set(counts)) == 1 else counts)
    return rest
