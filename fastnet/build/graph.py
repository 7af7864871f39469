"""Arbitrary router graphs: jellyfish random regular graphs, edge lists, and networkx in and out.

Jellyfish (Singla et al.; seed 001): N switches with r ports each, p of them to hosts, the other r - p wired as
a random regular graph (networkx's generator, redrawn with the next seed until connected).

networkx in: `{"topology": {"kind": "graph", "graph": G}}` (config.resolve calls fastnet/graph_input.py, which turns
G into the `edges` and `p` keys, so the resolved config stays plain data). networkx out: `to_networkx(net)`, and
`write_network(net, path)` writes GraphML (routers and nodes) or an edge list (router links) that the `file` key
reads back. Both are described in docs/config.md.

>>> from fastnet.build import to_networkx

>>> from fastnet.topology import build_network
>>> net = build_network({"topology": {"kind": "jellyfish", "switches": 16, "radix": 6, "p": 2, "seed": 3}})
>>> G = to_networkx(net)
>>> G.number_of_nodes(), G.number_of_edges(), {d for _, d in G.degree()}
(16, 32, {4})
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from ..errors import ConfigError
from ..graph_input import GRAPH_LINK_CLASSES, resolve_graph
from .network import CLASS_NAMES, GLOBAL, LOCAL, NODE, Network, RouterGraph

LINK_CLASSES = dict(zip(GRAPH_LINK_CLASSES, (LOCAL, GLOBAL)))  # router-to-router classes a graph may name
EDGE_LIST_SUFFIXES = (".edges", ".edgelist", ".txt")
_P_LINE = re.compile(r"#\s*p\s*=\s*(.*)$")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")  # a third column that is a weight (ignored)


def from_edges(edges: list[tuple[int, int]] | np.ndarray, n_routers: int | None, p: int | list[int] | np.ndarray,
               kind: str = "graph", classes: list[int] | None = None, lengths: list[int] | None = None
               ) -> RouterGraph:
    """RouterGraph from undirected edges (u, v); each edge becomes one link. Port order = edge order. `lengths`:
    each link's latency in multiples of its class's (RouterGraph.nbr_length), None for all 1."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if len(e) == 0:
        raise ConfigError("topology.edges", "the graph has no links")
    R = int(e.max()) + 1 if n_routers is None else n_routers
    cls = np.full(len(e), LOCAL, dtype=np.int8) if classes is None else np.asarray(classes, dtype=np.int8)
    src = np.concatenate([e[:, 0], e[:, 1]])
    dst = np.concatenate([e[:, 1], e[:, 0]])
    both_cls = np.concatenate([cls, cls])
    order = np.argsort(src, kind="stable")  # keeps edge order within each router
    counts = np.bincount(src, minlength=R)
    start = np.zeros(R + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    nodes = np.broadcast_to(np.asarray(p, dtype=np.int32), (R,)).copy()
    length = None if lengths is None else np.concatenate([lengths, lengths]).astype(np.int32)[order]
    return RouterGraph(kind=kind, nodes_per_router=nodes, nbr_start=start, nbr=dst[order].astype(np.int32),
                       nbr_class=both_cls[order], router_group=np.zeros(R, dtype=np.int32), params={"p": p},
                       nbr_length=length)


def _check_connected(g: RouterGraph, field: str = "topology") -> None:
    R = len(g.nodes_per_router)
    G = nx.Graph()
    G.add_nodes_from(range(R))
    src = np.repeat(np.arange(R), np.diff(g.nbr_start))
    G.add_edges_from(zip(src.tolist(), g.nbr.tolist()))
    if not nx.is_connected(G):
        raise ConfigError(field, "the router graph is not connected")


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


def read_edge_list(path: Path) -> tuple[list[list[Any]], list[int] | None]:
    """An edge list file: one link per line, `u v`, `u v local|global` or `u v local|global length` (router ids >= 0;
    a number in the third column is a weight, ignored with what follows it), `#` comments. A comment line `# p = 4`
    or `# p = 4 4 0 ...` (one count per router) gives the nodes per router. Returns the `edges` entries and the
    per-router counts (None without such a line)."""
    field = "topology.file"
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(field, f"cannot read an edge list from {path} ({e})") from None
    edges: list[list[Any]] = []
    p: list[int] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        m = _P_LINE.match(stripped)
        if m:
            words = m.group(1).replace(",", " ").split()
            if not words or not all(w.isdigit() for w in words):
                raise ConfigError(field, f"{path}:{n}: `# p =` needs integers >= 0 (got {m.group(1)!r})")
            p = [int(w) for w in words]
            continue
        words = stripped.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) < 2 or not words[0].isdigit() or not words[1].isdigit():
            raise ConfigError(field, f"{path}:{n}: expected 'u v' or 'u v local|global' with router ids >= 0, "
                              f"got {line!r}")
        edge: list[Any] = [int(words[0]), int(words[1])]
        if len(words) > 2 and words[2] in LINK_CLASSES:
            edge.append(words[2])
            if len(words) > 3:
                if not words[3].isdigit() or int(words[3]) < 1:
                    raise ConfigError(field, f"{path}:{n}: the fourth column is the link's length, an integer >= 1 "
                                      f"(its latency in multiples of its class's), got {words[3]!r}")
                edge.append(int(words[3]))
        elif len(words) > 2 and not _NUMBER.fullmatch(words[2]):  # a weight is ignored; a word is a class misspelt
            raise ConfigError(field, f"{path}:{n}: the third column is a link class, local or global (or a number, "
                              f"which is ignored), got {words[2]!r}")
        edges.append(edge)
    return edges, p


def edge_list(edges: list[list[Any]], file: str, p: int | list[int]) -> RouterGraph:
    """The `graph` kind: `edges` ([u, v], [u, v, "local"|"global"] or [u, v, class, length]) or an edge list `file`;
    `p` nodes per router (one count, or one per router), overridden by the file's `# p = ...` line."""
    if bool(edges) == bool(file):
        raise ConfigError("topology.edges", "give exactly one of `edges` (a list of [u, v]), `file` or `graph`")
    field = "topology.edges"
    if file:
        field = "topology.file"
        edges, file_p = read_edge_list(Path(file))
        if file_p is not None:
            p = file_p[0] if len(file_p) == 1 else file_p
    if not edges:
        raise ConfigError(field, "the graph has no links")
    pairs = [e[:2] for e in edges]
    loop = next((u for u, v in pairs if u == v), None)
    if loop is not None:
        raise ConfigError(field, f"a link from router {loop} to itself: self-loops are not allowed")
    classes = [LINK_CLASSES[e[2]] if len(e) > 2 else LOCAL for e in edges]
    lengths = [e[3] if len(e) > 3 else 1 for e in edges] if any(len(e) > 3 for e in edges) else None
    R = max(max(u, v) for u, v in pairs) + 1
    if isinstance(p, list):
        p_field = "topology.file" if file else "topology.p"
        if len(p) != R:
            raise ConfigError(p_field, f"{len(p)} node counts (p) for {R} routers (ids 0..{R - 1})")
        if sum(p) == 0:
            raise ConfigError(p_field, "no router has nodes (p)")
    g = from_edges(pairs, R, p, classes=classes, lengths=lengths)
    _check_connected(g, field)
    return g


def from_networkx(G: nx.Graph, p: int = 1) -> RouterGraph:
    """RouterGraph from a networkx graph, as the `graph` key of a `graph` topology reads it (`resolve_graph`)."""
    topo = resolve_graph({"graph": G, "p": p})
    return edge_list(topo["edges"], "", topo["p"])


def _coordinates(net: Network) -> list[str] | None:
    """"x,y,..." of each router of a torus, mesh, twisted torus or HyperX (c[0] first), else None."""
    if net.kind not in ("torus", "mesh", "twisted_torus", "hyperx"):
        return None
    return [",".join(map(str, row)) for row in net.params["coords"].tolist()]


def to_networkx(net: Network, terminals: bool = False) -> nx.MultiGraph | nx.Graph:
    """The network as networkx. Routers are nodes 0..R-1 with attributes `type` = "router", `p` (attached nodes),
    `group` (dragonfly group, Slim Fly group, fat-tree level, else 0) and, on a torus, mesh, twisted torus or HyperX,
    `coordinates` = "x,y,..." (a string, so that GraphML can hold it). Links are edges with `link_class`
    ("local" or "global"), `latency` (cycles), `length` (that latency in multiples of its class's, which a `graph`
    topology reads back) and `port_u`, `port_v`: the global port ids at the edge's lower and higher numbered end.
    With `terminals`, node n is also a graph node, R + n, with `type` = "node" and its router's
    `group`, joined to its router by an edge of class "injection" (`port_u`: the router's port). A MultiGraph only
    when the network has parallel links (e.g. a torus dimension of radix 2, torus `links`, HyperX `trunking`)."""
    R = net.n_routers
    net_ports = np.flatnonzero(net.port_peer_router >= 0)
    fwd = net_ports[net.port_peer_port[net_ports] > net_ports]  # each link once
    u = np.minimum(net.port_router[fwd], net.port_peer_router[fwd]).astype(np.int64)
    v = np.maximum(net.port_router[fwd], net.port_peer_router[fwd]).astype(np.int64)
    multi = len(np.unique(u * R + v)) < len(fwd)
    G: nx.Graph = nx.MultiGraph() if multi else nx.Graph()
    G.graph.update(kind=net.kind, routers=R, nodes=net.n_nodes)
    counts = np.bincount(net.node_router, minlength=R)
    group = net.topo.router_group
    coords = _coordinates(net)
    length = np.ones(net.n_ports, dtype=np.int64)
    if net.graph.nbr_length is not None:  # network ports in port order are the half-links in CSR order
        length[net_ports] = net.graph.nbr_length
    for r in range(R):
        attrs: dict[str, Any] = {"type": "router", "p": int(counts[r]), "group": int(group[r])}
        if coords is not None:
            attrs["coordinates"] = coords[r]
        G.add_node(r, **attrs)
    for port in fwd.tolist():
        peer = int(net.port_peer_port[port])
        a, b = (port, peer) if net.port_router[port] < net.port_peer_router[port] else (peer, port)
        G.add_edge(int(net.port_router[a]), int(net.port_router[b]), link_class=CLASS_NAMES[int(net.port_class[port])],
                   latency=int(net.port_latency[port]), length=int(length[port]), port_u=int(a), port_v=int(b))
    if terminals:
        for n, (r, port) in enumerate(net.topo.node.tolist()):
            G.add_node(R + n, type="node", group=int(group[r]))
            G.add_edge(r, R + n, link_class=CLASS_NAMES[NODE], latency=int(net.port_latency[port]), port_u=port)
    return G


def write_edge_list(net: Network, path: Path) -> None:
    """The router links, one `u v local|global` line each (`u v local|global length` when some link is longer than
    its class's latency), after comment lines naming the network and giving the nodes per router as `# p = ...`
    (one count when all routers have the same, else one per router); the `graph` kind's `file` key reads it back,
    and so does `nx.read_edgelist(path, nodetype=int, data=[("link_class", str)], create_using=nx.MultiGraph)`
    (with `("length", int)` after it when the lengths are written)."""
    counts = np.bincount(net.node_router, minlength=net.n_routers)
    p = str(counts[0]) if (counts == counts[0]).all() else " ".join(map(str, counts.tolist()))
    lengths = net.graph.nbr_length is not None and bool((net.graph.nbr_length != 1).any())
    lines = [f"# fastnet {net.kind}: {net.n_routers} routers, {net.n_nodes} nodes; one router link per line: "
             "u v class" + " length" * lengths, f"# p = {p}"]
    G = to_networkx(net)
    for a, b, d in G.edges(data=True):
        lines.append(f"{a} {b} {d['link_class']}" + f" {d['length']}" * lengths)
    path.write_text("\n".join(lines) + "\n")


def write_anynet(net: Network, path: Path) -> None:
    """BookSim2's anynet network file (src/networks/anynet.cpp): one line per router, `router r node n ...` for its
    nodes, then `router s L` for each link to router s, L its latency in cycles. Every link is on both its routers'
    lines: BookSim2 links a router back to one that names it, but at 1 cycle (latencies are per direction).
    Node ids are fastnet's, so patterns such as bitcomp agree. Node links carry no
    latency: BookSim2's parser stores a latency written after a node as a router link, so its node channels are
    always 1 cycle, and a network with other injection latencies is refused."""
    node_lat = np.unique(net.port_latency[net.node_port])
    if node_lat.size and node_lat.tolist() != [1]:
        raise ConfigError("--export", f"BookSim2's anynet files give node channels 1 cycle; this network's "
                                      f"injection latency is {node_lat.tolist()} (set links.latency_injection = 1)")
    ps = net.topo.router_port_start.tolist()
    peer_router, peer_port = net.port_peer_router.tolist(), net.port_peer_port.tolist()
    latency = net.port_latency.tolist()
    lines = []
    for r in range(net.n_routers):
        ports = range(ps[r], ps[r + 1])
        nodes = [f"node {peer_port[q]}" for q in ports if peer_router[q] < 0]  # a node port's peer is its node
        links = [f"router {peer_router[q]} {latency[q]}" for q in ports if peer_router[q] >= 0]
        lines.append(" ".join([f"router {r}", *nodes, *links]))
    path.write_text("\n".join(lines) + "\n")


EXPORTS = (".graphml", ".anynet") + EDGE_LIST_SUFFIXES


def write_network(net: Network, path: str | Path) -> None:
    """Export a compiled network by file suffix: `.graphml` (routers and nodes, `to_networkx(net, terminals=True)`),
    `.anynet` (BookSim2's anynet file, `write_anynet`) or `.edges`, `.edgelist`, `.txt` (router links,
    `write_edge_list`)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in EXPORTS:
        raise ConfigError("--export", f"the file must end in {', '.join(EXPORTS)} (got {path.name!r})")
    try:
        if suffix == ".graphml":
            nx.write_graphml(to_networkx(net, terminals=True), path)
        elif suffix == ".anynet":
            write_anynet(net, path)
        else:
            write_edge_list(net, path)
    except OSError as e:
        raise ConfigError("--export", f"cannot write {path} ({e})") from None
