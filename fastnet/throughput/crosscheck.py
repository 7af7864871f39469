"""Models against the cycle engine: the same flows on the same routes, predicted and simulated side by side.

The flows are the engine's own pattern (`traffic.pattern` with the run's `sim.seed`), and each flow's single
path is the route the engine's routing takes (`routing.algorithm`), traced hop by hop through the engine's
next-hop function, so the models and the simulation load exactly the same links. Only single-path routing can be
compared this way: `min` where every flow has one minimal path (a ring of odd size; a torus for flows along one
dimension), or `dor` on a torus or mesh, or on a HyperX without trunking. The engine's random patterns (uniform, hotspot, group_adversarial)
become their demand matrix, as in patterns.py.

What the two sides measure:
- MCF: the largest load every host can offer at once. The simulation is stable (every measured packet
  delivered) below it and saturated above it — the sharpest check, independent of any fairness assumption.
- MMF, HM, JM, water-filling: throughput per host once the network is saturated, if the network shared
  bandwidth as the model says. The simulation at load 1.0 measures what the routers actually deliver.
- The largest total the links allow on these routes with no fairness at all (`max_total_per_node`, an LP):
  no simulation can exceed it, while it can exceed MMF, whose aim is the smallest rate, not the sum.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

import numpy as np
import xarray as xr

from ..build import build_routes
from ..build.kinds import K_HYPERX, K_MESH, K_TORUS
from ..build.network import P_PEER_ROUTER, Network
from ..build.routing import IP_KIND, IP_LINKS, IP_NDIM, Routes
from ..errors import ConfigError
from ..kernels._jit import jit_alloc
from ..kernels.minimal import hx_first_dim, min_ports, scan_of
from ..topology import build_network
from ..version import __version__
from .build import _assemble, links_of
from .evaluate import MODELS, resolve
from .instance import Instance
from .lp import max_total
from .patterns import engine_pattern

SINGLE_PATH_ROUTINGS = ("min", "dor")
# A run is saturated when it accepts clearly less than it is offered (Bernoulli noise over a 10^4-cycle window is
# about 1 %), when some link runs full (a link fed just above its capacity loses only a few of the hosts' traffic,
# which the average can hide), or when the engine flags measured packets left undelivered after the drain.
ACCEPT_RATIO = 0.97
FULL_LINK = 0.98
AUTO_LOAD_FACTORS = (0.9, 1.1)  # default loads: these multiples of the MCF saturation load, and 1.0


def saturated_run(ds: xr.Dataset) -> bool:
    return (bool(ds.unstable.item())
            or ds.accepted_phits_per_node_cycle.item() < ACCEPT_RATIO * ds.offered_phits_per_node_cycle.item()
            or float(ds.port_utilization.max()) >= FULL_LINK)


@jit_alloc
def _trace(ps, port, dist, ip, alg, pair_s, pair_t, max_len, dor, out_ports, out_len, out_choices):
    """Follow the engine's minimal next hops from each pair's source to its destination (with dor, the lowest
    dimension offered) and record the most next hops the routing could choose from at one router
    (out_choices > 1: not a single path)."""
    buf = np.empty(max(64, port.shape[0] // max(len(ps) - 1, 1) + 8), dtype=np.int64)
    for i in range(len(pair_s)):
        r, t = pair_s[i], pair_t[i]
        h = 0
        most = 1
        while r != t and h < max_len:
            n = min_ports(ps, port, dist, ip, alg, r, t, buf, scan_of(ip))
            q = buf[0]
            if n > 1 and dor and ip[IP_KIND] == K_HYPERX:
                # the engine's hx_dor_step: a trunk link of the lowest differing dimension (the scan lists it
                # first); more than one trunk link is a choice
                most = max(most, ip[IP_LINKS + hx_first_dim(ip, alg, r, t)])
            elif n > 1 and dor:
                # the engine's dor_step: the lowest dimension that differs; both directions of a ring of even
                # radix at distance k/2 are drawn at random per packet, and so is one of a direction's
                # parallel links (torus `links`): each is a choice
                best = 1 << 30
                ties = 0
                for c in range(n):
                    local = buf[c] - ps[r]
                    for col in range(2 * ip[IP_NDIM]):  # dir_port's columns (the coordinates follow)
                        if alg[r, col] >= 0 and alg[r, col] <= local < alg[r, col] + ip[IP_LINKS + col // 2]:
                            if col // 2 < best // 2:
                                best = col
                                q = buf[c]
                                ties = 1
                            elif col // 2 == best // 2:
                                ties += 1
                if ties > most:
                    most = ties
            elif n > most:
                most = n
            out_ports[i, h] = q
            h += 1
            r = port[q, P_PEER_ROUTER]
        out_len[i] = h if r == t else -1
        out_choices[i] = most


def engine_routes(net: Network, routes: Routes, algorithm: str, pair_s: np.ndarray, pair_t: np.ndarray):
    """(ports int64[n, 1, H], length int64[n, 1], count int64[n]) of the engine's single path per router pair;
    ConfigError where the routing offers a choice."""
    if algorithm not in SINGLE_PATH_ROUTINGS:
        raise ConfigError("routing.algorithm", f"the model cross-check needs single-path routing "
                          f"({', '.join(SINGLE_PATH_ROUTINGS)}); {algorithm!r} chooses among paths per packet")
    dor = algorithm == "dor"
    if dor and int(routes.ip[IP_KIND]) not in (K_TORUS, K_MESH, K_HYPERX):
        raise ConfigError("routing.algorithm", "dor is defined on torus, mesh and hyperx topologies")
    H = 4 * net.n_routers if not dor else int(sum(net.params["dims"]))
    H = min(H, 4096)
    n = len(pair_s)
    ports = np.zeros((n, H), dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    choices = np.zeros(n, dtype=np.int64)
    _trace(net.topo.router_port_start.astype(np.int64), net.topo.port, routes.dist, routes.ip, routes.alg,
           pair_s.astype(np.int64), pair_t.astype(np.int64), H, dor, ports, length, choices)
    if (length < 0).any():
        i = int(np.flatnonzero(length < 0)[0])
        raise ConfigError("routing.algorithm", f"the route from router {pair_s[i]} to {pair_t[i]} did not arrive")
    if (choices > 1).any():
        bad = np.flatnonzero(choices > 1)
        raise ConfigError("routing.algorithm", f"{algorithm} routing is not single-path for this pattern: "
                          f"{len(bad)} of {n} router pairs have several minimal next hops (e.g. router "
                          f"{pair_s[bad[0]]} -> {pair_t[bad[0]]}); use dor on a torus or mesh of odd radices (a "
                          "ring of even radix k draws the direction at distance k/2) and one link per direction, or a pattern/topology with "
                          "unique minimal paths (e.g. a ring of odd size)")
    return ports[:, None, :], length[:, None], np.ones(n, dtype=np.int64)


def engine_instance(net: Network, routes: Routes, cfg: dict[str, Any]) -> Instance:
    """The engine's pattern (traffic.pattern, sim.seed) on the engine's routes, each link's capacity the phits a
    cycle the engine moves on it (1 at the reference rate, less on a slower class: units.py)."""
    flows = engine_pattern(net, cfg["traffic"], cfg["sim"]["seed"])
    R = net.n_routers
    src_r = net.node_router[flows.src].astype(np.int64)
    dst_r = net.node_router[flows.dst].astype(np.int64)
    remote = src_r != dst_r
    keys = np.unique(src_r[remote] * R + dst_r[remote])
    flow_pair = np.full(len(flows.src), -1, dtype=np.int64)
    flow_pair[remote] = np.searchsorted(keys, src_r[remote] * R + dst_r[remote])
    ports, length, count = engine_routes(net, routes, cfg["routing"]["algorithm"], keys // R, keys % R)
    path_ptr, link_ptr, links = _assemble(flows.src.astype(np.int64), flows.dst.astype(np.int64), flow_pair,
                                          net.node_port.astype(np.int64), net.n_ports, ports, length, count)
    lsrc, ldst, cap = links_of(net, 1.0, 1.0)
    return Instance(lsrc, ldst, cap, R + flows.src, R + flows.dst, path_ptr, link_ptr, links, flows.weight)


def crosscheck(cfg: dict[str, Any], loads: list[float] | None = None,
               progress: Callable[[str], None] | None = None) -> xr.Dataset:
    """Models and simulations of `cfg` (see the module docstring) as one Dataset: `model_throughput_per_node`
    (model), `sim_*` (dimension `traffic.load`, named as sweeps name it), and per-link model loads next to the
    simulated port utilisation. `loads` defaults to 0.9 and 1.1 times the MCF saturation load, and 1.0."""
    from ..sim import prepare, simulate
    from ..results import to_dataset

    t_start = time.perf_counter()
    cfg = resolve(cfg)
    for v in loads or []:
        if not 0.0 < v <= 1.0:
            raise ConfigError("--loads", f"each load must be in (0, 1] phits/node/cycle (got {v})")
    net = build_network(cfg)
    routes = build_routes(net)
    inst = engine_instance(net, routes, cfg)
    models = ["mmf", "mcf", "hm", "jm", "waterfill"]
    per_node, link_util, secs = [], [], []
    for m in models:
        t0 = time.perf_counter()
        rate, path_rate = MODELS[m](inst)
        secs.append(time.perf_counter() - t0)
        if m == "mcf":
            mcf_level = (rate / inst.weight).min() if inst.n_flows else 1.0
        per_node.append(rate.sum() / net.n_nodes)
        link_util.append(inst.link_load(path_rate)[: net.n_ports])
    if not loads:  # just below and above the saturation load MCF predicts, and flat out
        # MCF's common level is the load each sending host can offer (weights sum to 1 per host)
        mcf_load = float(mcf_level)
        loads = sorted({round(min(f * mcf_load, 1.0), 4) for f in AUTO_LOAD_FACTORS} | {1.0})
    sims = []
    for load in loads:
        if progress:
            progress(f"simulating load {load:g}")
        run_cfg = {k: v for k, v in cfg.items() if k != "throughput"}
        run_cfg = json.loads(json.dumps(run_cfg))
        run_cfg["traffic"]["load"] = load
        s = prepare(run_cfg)
        simulate(s)
        sims.append(to_dataset(s, wall_seconds=0.0))
    bound_rate, bound_paths = max_total(inst)
    mmf_util = link_util[0]
    saturated = mmf_util >= 1.0 - 1e-9
    v = {
        "model_throughput_per_node": (("model",), np.asarray(per_node), "phits/node/cycle",
                                      "sum of flow rates / hosts (link bandwidth 1 phit/cycle)"),
        "model_seconds": (("model",), np.asarray(secs), "s", "model run time"),
        "model_link_load": (("model", "port"), np.asarray(link_util), "phits/cycle",
                            "model traffic on each port's output link"),
        "sim_offered_phits_per_node_cycle": (("traffic.load",), [d.offered_phits_per_node_cycle.item() for d in sims],
                                             "phits/node/cycle", "offered load measured by the engine"),
        "sim_accepted_phits_per_node_cycle": (("traffic.load",), [d.accepted_phits_per_node_cycle.item() for d in sims],
                                              "phits/node/cycle", "accepted throughput measured by the engine"),
        "sim_saturated": (("traffic.load",), [int(saturated_run(d)) for d in sims], "1",
                          f"1 if accepted < {ACCEPT_RATIO:g} x offered, a link ran >= {FULL_LINK:g} full, or "
                          "measured packets were left undelivered"),
        "sim_port_utilization": (("traffic.load", "port"), np.asarray([d.port_utilization.values for d in sims]),
                                 "phits/cycle", "phits sent on each output port per window cycle"),
        "mmf_saturated_link": (("port",), saturated, "1", "port output links MMF fills to capacity"),
        "max_total_per_node": ((), bound_rate.sum() / net.n_nodes, "phits/node/cycle",
                               "largest total rate the links allow on these routes, fairness aside (an upper "
                               "bound on any simulation)"),
    }
    data_vars = {k: xr.Variable(d, np.asarray(a), attrs={"units": u, "description": s})
                 for k, (d, a, u, s) in v.items()}
    attrs = {
        "fastnet_version": __version__, "config": json.dumps(cfg, sort_keys=True), "topology": net.kind,
        "routers": net.n_routers, "nodes": net.n_nodes, "flows": inst.n_flows,
        "pattern": cfg["traffic"]["pattern"], "routing": cfg["routing"]["algorithm"],
        "hops_mean": float(np.mean(np.diff(inst.link_ptr)) - 2),
        "wall_seconds": time.perf_counter() - t_start,
    }
    return xr.Dataset(data_vars, coords={"model": models, "traffic.load": loads, "port": np.arange(net.n_ports)},
                      attrs=attrs)
