"""Topology compilers: a resolved `[topology]` table in, a `Network` of flat arrays out (see network.py).

One module per family: dragonfly.py, slimfly.py, torus.py (torus, mesh, twisted torus), hyperx.py (HyperX,
flattened butterfly), fattree.py (k-ary n-tree, m-port n-tree), graph.py (jellyfish, edge lists, networkx);
kinds.py registers each kind (keys, builder, size formula). routing.py adds the minimal-routing table or algebra,
vcs.py the VC classes. A config is resolved and built in one call by fastnet/topology.py `build_network`.

The names below are imported on first use: the config's checks need only kinds.py, not numba (routing.py) or
networkx (graph.py), so `fastnet --help` and `fastnet info` start without them.
"""

from __future__ import annotations

import importlib
from typing import Any

from .kinds import TOPOLOGIES, build_router_graph, network_size
from .network import Network, RouterGraph, Topology, assemble

_LAZY = {"from_networkx": "graph", "to_networkx": "graph", "Routes": "routing", "build_routes": "routing"}

__all__ = ["TOPOLOGIES", "build_router_graph", "network_size", "Network", "RouterGraph", "Topology", "assemble",
           *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
