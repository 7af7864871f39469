"""`fastnet info`: the facts of a compiled topology and an estimate of the memory a run needs."""

from __future__ import annotations

from typing import Any

import numpy as np

from .build.kinds import TOPOLOGIES
from .build.network import GLOBAL, LOCAL, NODE
from .build.routing import diameter, is_table
from .build.vcs import vc_layout
from .memory import check_network_fits, memory_estimate
from .mpi.generators import PROGRAMS
from .mpi.traces import READERS
from .registry import (
    COLLECTIVE_ALGORITHMS, CROSSBARS, EJECTIONS, ROUTINGS, SWITCH_ALLOCATORS, UGAL_QUEUES, UGAL_VCS, UP_PORTS,
    VC_ALLOCATORS, WORKLOADS, Registry,
)
from .sim import network_and_routes
from .traffic.patterns import PATTERNS
from .units import timing


def registries() -> dict[str, Registry]:
    """Every registry of names a config chooses from, by the key that chooses (fastnet/registry.py says where each
    is declared): what `fastnet info --registries` lists and docs/registries.md shows."""
    return {
        "topology.kind": TOPOLOGIES, "routing.algorithm": ROUTINGS, "routing.ugal_queue": UGAL_QUEUES,
        "routing.ugal_vcs": UGAL_VCS, "routing.up_port": UP_PORTS, "router.allocator": SWITCH_ALLOCATORS,
        "router.vc_choice": VC_ALLOCATORS, "router.crossbar": CROSSBARS, "router.ejection": EJECTIONS,
        "traffic.pattern": PATTERNS, "workload.kind": WORKLOADS, "workload.program": PROGRAMS,
        "workload.format": READERS, "mpi.allreduce, mpi.allgather": COLLECTIVE_ALGORITHMS,
    }


def registry_table() -> dict[str, list[dict[str, Any]]]:
    """The registries as plain data: key -> [{name, code, doc}, ...] (aliases share their code)."""
    return {key: [{"name": e.name, "code": e.code, "doc": e.doc} for e in reg] for key, reg in registries().items()}


def registries_markdown() -> str:
    """docs/registries.md: a table per registry (docs/gen_registries.py writes it; a test keeps it current)."""
    lines = ["# What a config can choose", "",
             "Generated from the registries by `python docs/gen_registries.py` (also `fastnet info --registries`); "
             "docs/developing.md says how to add to each.", ""]
    for key, rows in registry_table().items():
        lines += [f"## `{key}`", "", "| name | what |", "|---|---|"]
        lines += [f"| `{row['name']}` | {row['doc']} |" for row in rows]
        lines.append("")
    return "\n".join(lines)


def describe(cfg: dict[str, Any]) -> dict[str, Any]:
    """The facts `fastnet info` prints; ConfigError(sim.memory_check) first, as `fastnet run` does, when the
    network could not run here (its floor by formula exceeds the memory available): building one that large to
    describe it could take the machine."""
    check_network_fits(cfg)
    net, routes = network_and_routes(cfg)
    links = net.link_counts()
    layout = vc_layout(net, routes, cfg["router"], cfg["routing"])
    vcs = layout.vcs
    # the workload's arrays (per node even for open-loop traffic) as the run will build them; the traffic
    # tables (8 bytes per node) are left out: compiling some patterns takes longer than the rest of info
    from .workloads.build import compile_workload

    memory = memory_estimate(net, routes, cfg, max(vcs.values()), layout.hop_limit,
                             extra=(compile_workload(cfg, net, cfg["sim"]["seed"]),))
    deg = np.diff(net.topo.router_port_start)
    t = timing(cfg)
    gbytes = t.gbytes(cfg["traffic"]["phit_bytes"])
    derived = {  # units.py: what the config's times and bandwidths became
        "cycle_ns": round(t.cycle_ns, 6),
        "cycle_from": t.basis,
        **{f"latency_{c}_cycles": t.latency[c] for c in ("injection", "ejection", "local", "global")},
        "router_delay_cycles": t.delay,
        **{f"bandwidth_{c}_gbytes_per_s": round(b, 4) for c, b in gbytes.items()},
        **{f"phits_per_cycle_{c}": round(r, 6) for c, r in t.phit_rate.items()},
        "rounding": "; ".join(t.rounding) or "none",
    }
    return {
        "topology": net.kind,
        **({"form": net.params["form"]} if "form" in net.params else {}),
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
        "links_black": 0 if net.port_wire is None else int(net.port_wire.sum()) // 2,  # of the local links: a 2-D
        # dragonfly group's columns (build/dragonfly.py)
        "routing_mode": "table" if is_table(routes) else "algebraic",
        "vcs_local": vcs[LOCAL],
        "vcs_global": vcs[GLOBAL],
        "vcs_injection": vcs[NODE],
        "memory_estimate_mb": round(memory.total / 2**20, 1),  # peak of a run (fastnet/memory.py)
        "packets_in_flight_estimate": memory.in_flight,
        **derived,
    }
