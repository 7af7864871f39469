"""Model instances from a compiled fastnet network: its links, a flow set and k shortest paths per flow.

Link numbering follows the engine's ports so model link loads line up with `port_utilization` of a run:
link l < P (P = ports) is the output side of port l — router -> peer router for a network port, router -> host
for a node port (ejection) — and link P + n is host n's injection link into its router. Node ids: routers are
0..R-1, host n is R + n. A path from host s to host t is [P + s, router ports..., node port of t].
"""

from __future__ import annotations

import numpy as np

from ..build.network import Network
from ..errors import ConfigError
from ..kernels._jit import jit_alloc
from ..units import PERIOD_ONE
from .instance import Instance
from .patterns import Flows
from .paths import router_paths


def links_of(net: Network, link_capacity: float = 1.0, host_capacity: float = 1.0):
    """(src, dst, capacity) of the model links of `net` (see the module docstring): `link_capacity` and
    `host_capacity` times each link's rate, the phits a cycle the engine moves on it (1 at the reference rate, less
    on a class `[links]` makes slower: units.py), so that the models see the bandwidths a run simulates."""
    R, P, N = net.n_routers, net.n_ports, net.n_nodes
    peer = net.port_peer_router.astype(np.int64)
    is_node = peer < 0
    src = np.concatenate([net.port_router.astype(np.int64), R + np.arange(N, dtype=np.int64)])
    dst = np.concatenate([np.where(is_node, R + net.port_peer_port.astype(np.int64), peer),
                          net.node_router.astype(np.int64)])
    rate = PERIOD_ONE / net.port_period.astype(np.float64)  # a port's link, both ways (a node's: its injection too)
    cap = np.concatenate([np.where(is_node, host_capacity, link_capacity) * rate, host_capacity * rate[net.node_port]])
    assert len(src) == P + N
    return src, dst, cap.astype(np.float64)


@jit_alloc
def _assemble(flow_src, flow_dst, flow_pair, node_port, n_ports, ports, length, count):
    F = len(flow_src)
    path_ptr = np.zeros(F + 1, dtype=np.int64)
    n_entries = 0
    for f in range(F):
        i = flow_pair[f]
        if i < 0:
            path_ptr[f + 1] = path_ptr[f] + 1
            n_entries += 2
        else:
            path_ptr[f + 1] = path_ptr[f] + count[i]
            for j in range(count[i]):
                n_entries += length[i, j] + 2
    link_ptr = np.zeros(path_ptr[F] + 1, dtype=np.int64)
    links = np.empty(n_entries, dtype=np.int64)
    p = 0
    e = 0
    for f in range(F):
        i = flow_pair[f]
        n = 1 if i < 0 else count[i]
        for j in range(n):
            links[e] = n_ports + flow_src[f]
            e += 1
            if i >= 0:
                for h in range(length[i, j]):
                    links[e] = ports[i, j, h]
                    e += 1
            links[e] = node_port[flow_dst[f]]
            e += 1
            p += 1
            link_ptr[p] = e
    return path_ptr, link_ptr, links


def build_instance(net: Network, flows: Flows, k: int, max_hops: int, seed: int, link_capacity: float = 1.0,
                   host_capacity: float = 1.0, path_order: str = "random") -> Instance:
    """Flows between hosts of `net`, each with up to k shortest router paths of at most max_hops hops
    (paths.py: ties in length broken at random or in port order)."""
    src_r = net.node_router[flows.src].astype(np.int64)
    dst_r = net.node_router[flows.dst].astype(np.int64)
    R = net.n_routers
    remote = src_r != dst_r
    keys = np.unique(src_r[remote] * R + dst_r[remote])
    flow_pair = np.full(len(flows.src), -1, dtype=np.int64)
    flow_pair[remote] = np.searchsorted(keys, src_r[remote] * R + dst_r[remote])
    ports, length, count = router_paths(net, keys // R, keys % R, k, max_hops, seed, path_order)
    if len(count) and count.min() == 0:
        i = int(np.argmin(count))
        raise ConfigError("throughput.max_hops", f"no path of at most {max_hops} hops from router {keys[i] // R} "
                          f"to router {keys[i] % R}; raise it")
    path_ptr, link_ptr, links = _assemble(flows.src.astype(np.int64), flows.dst.astype(np.int64), flow_pair,
                                          net.node_port.astype(np.int64), net.n_ports, ports, length, count)
    lsrc, ldst, cap = links_of(net, link_capacity, host_capacity)
    return Instance(lsrc, ldst, cap, net.n_routers + flows.src, net.n_routers + flows.dst, path_ptr, link_ptr,
                    links, flows.weight)
