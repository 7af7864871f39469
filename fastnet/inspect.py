"""`fastnet info`: the facts of a compiled topology and an estimate of the memory a run needs."""

from __future__ import annotations

from typing import Any

import numpy as np

from .build import build_network, build_routes
from .build.network import GLOBAL, LOCAL, NODE
from .build.routing import diameter, is_table
from .build.vcs import vc_layout


def memory_estimate(n_routers: int, n_ports: int, n_nodes: int, vcs: int, table: bool) -> int:
    """Bytes of the arrays a run allocates before any packet exists (kernels/state.py layout)."""
    from .kernels.state import N_ND, N_PK, N_PT, N_VC

    topo = 4 * (n_routers + 1) + 5 * 4 * n_ports + 2 * 4 * n_nodes + 4 * n_routers
    routes = n_routers * n_routers if table else 0
    pv = n_ports * vcs
    state = pv * (N_VC * 4 + 4) + n_ports * (N_PT * 8 + 3 * 4) + n_nodes * (N_ND * 8 + 4 + 8) + 8 * n_routers
    pools = (2 * n_nodes + 1024) * N_PK * 8 + 2 * (2 * n_nodes + 1024) * 4 * 8
    return topo + routes + state + pools


def describe(cfg: dict[str, Any]) -> dict[str, Any]:
    net = build_network(cfg)
    routes = build_routes(net)
    links = net.link_counts()
    vcs = vc_layout(net, routes, cfg["router"], cfg["routing"]).vcs
    V = max(vcs.values())
    deg = np.diff(net.topo.router_port_start)
    return {
        "topology": net.kind,
        "routers": net.n_routers,
        "nodes": net.n_nodes,
        "ports": net.n_ports,
        "radix": int(deg.max()),
        "radix_min": int(deg.min()),
        "network_radix": int(np.bincount(net.port_router[net.port_peer_router >= 0],
                                         minlength=net.n_routers).max()),
        "diameter": diameter(routes),
        "links_injection": links["injection"],
        "links_local": links["local"],
        "links_global": links["global"],
        "routing_mode": "table" if is_table(routes) else "algebraic",
        "vcs_local": vcs[LOCAL],
        "vcs_global": vcs[GLOBAL],
        "vcs_injection": vcs[NODE],
        "memory_estimate_mb": round(memory_estimate(net.n_routers, net.n_ports, net.n_nodes, V,
                                                    is_table(routes)) / 2**20, 1),
    }
