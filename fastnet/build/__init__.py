"""Topology compilers: a `[topology]` table in, a `Network` of flat arrays out (see network.py).

One module per family: dragonfly.py, slimfly.py, torus.py (torus, mesh, twisted torus), hyperx.py (HyperX,
flattened butterfly), fattree.py (k-ary n-tree, m-port n-tree), graph.py (jellyfish, edge lists, networkx).
routing.py adds the minimal-routing table or algebra.
"""

from __future__ import annotations

from typing import Any

from .. import config as _config
from ..units import timing
from . import dragonfly, fattree, graph, hyperx, slimfly, torus
from .graph import from_networkx, to_networkx
from .network import Network, RouterGraph, Topology, assemble
from .routing import Routes, build_routes

__all__ = ["build_network", "network_size", "from_networkx", "to_networkx", "Network", "RouterGraph", "Topology",
           "Routes", "build_routes", "network_from_graph"]


def router_graph(topo: dict[str, Any]) -> RouterGraph:
    kind = topo["kind"]
    if kind == "dragonfly":
        return dragonfly.build(topo["p"], topo["a"], topo["h"], topo["g"], topo["arrangement"], topo["group_shape"],
                               topo["global_bundle"])
    if kind == "slimfly":
        return slimfly.build(topo["q"], topo["p"])
    if kind in ("torus", "mesh", "twisted_torus"):
        return torus.build(kind, topo["dims"], topo["p"], topo.get("twist", 0), topo["links"])
    if kind == "hyperx":
        return hyperx.build(topo["dims"], topo["trunking"], topo["p"], topo["distance_latency"])
    if kind == "fattree":
        return fattree.build(topo["form"], topo["n"], k=topo.get("k", 0), m=topo.get("m", 0))
    if kind == "jellyfish":
        return graph.jellyfish(topo["switches"], topo["radix"], topo["p"], topo["seed"])
    return graph.edge_list(topo["edges"], topo["file"], topo["p"])


def network_size(topo: dict[str, Any]) -> tuple[int, int, int] | None:
    """(routers, ports, nodes) of a resolved `[topology]` table, by formula and without building it (the memory
    check refuses a network too large to build before its build exhausts the machine); None for an edge list,
    whose size is known once read. Ports count node ports too, as Network.n_ports."""
    kind = topo["kind"]
    if kind == "dragonfly":
        size = dragonfly.size(topo["p"], topo["a"], topo["h"], topo["g"], topo["group_shape"], topo["global_bundle"])
    elif kind == "slimfly":
        size = slimfly.size(topo["q"], topo["p"])
    elif kind in ("torus", "mesh", "twisted_torus"):
        size = torus.size(kind, topo["dims"], topo["p"], topo["links"])
    elif kind == "hyperx":
        size = hyperx.size(topo["dims"], topo["trunking"], topo["p"])
    elif kind == "fattree":
        size = fattree.size(topo["form"], topo["n"], k=topo.get("k", 0), m=topo.get("m", 0))
    elif kind == "jellyfish":
        size = topo["switches"], topo["switches"] * (topo["radix"] - topo["p"]), topo["switches"] * topo["p"]
    else:
        return None
    routers, network_ports, nodes = size
    return routers, network_ports + nodes, nodes


def build_network(cfg: dict[str, Any]) -> Network:
    """Compile the `[topology]` (and the `[links]` latencies and rates, in cycles) of a config, resolved first."""
    cfg = _config.resolve(cfg)
    t = timing(cfg)
    return assemble(router_graph(cfg["topology"]), t.latency, t.period)


def network_from_graph(g: RouterGraph, cfg: dict[str, Any] | None = None) -> Network:
    """Compile a RouterGraph made in Python (e.g. `from_networkx(G)`), with the `[links]` of `cfg`."""
    t = timing(_config.resolve(cfg))
    return assemble(g, t.latency, t.period)
