"""A config's network in one call: resolve the config, build the router graph of its `[topology]` kind
(build/kinds.py), compile it with the `[links]` latencies and rates in cycles (build/network.py assemble)."""

from __future__ import annotations

from typing import Any

from . import config as _config
from .build import RouterGraph, build_router_graph
from .build.network import Network, assemble
from .units import timing


def build_network(cfg: dict[str, Any]) -> Network:
    """Compile the `[topology]` (and the `[links]` latencies and rates, in cycles) of a config, resolved first;
    ConfigError(sim.memory_check) before building a network whose records alone exceed the memory available."""
    from .memory import check_build_fits

    cfg = _config.resolve(cfg)
    check_build_fits(cfg)  # by formula, before the build, which could exhaust the machine itself
    t = timing(cfg)
    return assemble(build_router_graph(cfg["topology"]), t.latency, t.period)


def network_from_graph(g: RouterGraph, cfg: dict[str, Any] | None = None) -> Network:
    """Compile a RouterGraph made in Python (e.g. `from_networkx(G)`), with the `[links]` of `cfg`."""
    t = timing(_config.resolve(cfg))
    return assemble(g, t.latency, t.period)
