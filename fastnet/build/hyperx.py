"""HyperX (Ahn et al., SC'09): routers on an n-dimensional grid, every dimension fully connected.

`dims[d]` = S_d routers per dimension (R = prod S_d), `trunking[d]` = T_d parallel links between two routers that
differ in coordinate d only, `p` nodes per router. The flattened butterfly (BookSim2's `flatfly`) is the HyperX
with trunking 1 and p = S. Router r has coordinates c (c[0] fastest): r = sum(c[d] * stride[d]).

Port order: p node ports, then dimension by dimension, for every other coordinate value v of that dimension in
increasing order, its T_d parallel links. The first link from r to the router whose coordinate d is v is local port

    p + offset[d] + (v if v < c[d] else v - 1) * T_d,   offset[d] = sum over e < d of (S_e - 1) * T_e

(BookSim2's flatfly orders its ports the same way). Minimal routes change each differing coordinate once, in any
order (distance = number of differing coordinates); the kernels compute ports from this formula
(kernels/minimal.py `_hx_scan`, `hx_trunk`), without a distance table, so a large HyperX builds fast.

With `distance_latency`, a link between coordinates a and b of a dimension takes |a - b| x links.latency_local
cycles: an on-chip flattened butterfly with its routers laid out on a grid (BookSim2's flatfly with use_noc_latency).

>>> from fastnet.topology import build_network
>>> build_network({"topology": {"kind": "hyperx", "dims": [4, 4], "trunking": [1, 2], "p": 2}}).radix
11
"""

from __future__ import annotations

import numpy as np

from .network import LOCAL, RouterGraph
from .torus import grid, per_dimension


def all_to_all(dims: list[int], trunking: list[int], stride: np.ndarray,
               coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every dimension fully connected, `trunking[d]` links per router pair of dimension d, in the port order above
    (`stride` and `coords`: torus.grid(dims)). Returns (neighbour, coordinate distance), both
    int64[R, sum((S_d - 1) * T_d)], row r in r's port order."""
    r = np.arange(len(coords), dtype=np.int64)
    nbr, dist = [], []
    for d, (S, T) in enumerate(zip(dims, trunking)):
        c = coords[:, d]
        j = np.arange(S - 1, dtype=np.int64)
        v = j[None, :] + (j[None, :] >= c[:, None])  # the other coordinates, increasing
        step = np.repeat(v - c[:, None], T, axis=1)  # each repeated once per trunk link
        nbr.append(r[:, None] + step * stride[d])
        dist.append(np.abs(step))
    return np.concatenate(nbr, axis=1), np.concatenate(dist, axis=1)


def size(dims: list[int], trunking: int | list[int], p: int) -> tuple[int, int, int]:
    """(routers, network ports, nodes), by formula: (S_d - 1) x T_d ports per router in each dimension d."""
    R = int(np.prod(dims))
    deg = sum((S - 1) * T for S, T in zip(dims, per_dimension(trunking, dims, "topology.trunking")))
    return R, R * deg, R * p


def build(dims: list[int], trunking: int | list[int], p: int, distance_latency: bool = False) -> RouterGraph:
    trunking = per_dimension(trunking, dims, "topology.trunking")
    R = int(np.prod(dims))
    stride, coords = grid(dims)
    nbr, dist = all_to_all(dims, trunking, stride, coords)
    deg = nbr.shape[1]
    return RouterGraph(
        kind="hyperx",
        nodes_per_router=np.full(R, p, dtype=np.int32),
        nbr_start=np.arange(R + 1, dtype=np.int64) * deg,
        nbr=nbr.ravel().astype(np.int32),
        nbr_class=np.full(R * deg, LOCAL, dtype=np.int8),
        router_group=np.zeros(R, dtype=np.int32),
        nbr_length=dist.ravel().astype(np.int32) if distance_latency else None,
        params={"dims": list(dims), "p": p, "trunking": trunking,
                "stride": stride.tolist(), "diameter": len(dims),
                "coords": coords.astype(np.int32)},  # (routing reads them: build/routing.py)
    )
