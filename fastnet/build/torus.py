"""n-dimensional torus and mesh with any radix per dimension, and the 2-D twisted torus of seed 002.

Router r has coordinates c with c[0] varying fastest: r = sum(c[d] * stride[d]). Port order: p node ports, then
for each dimension d the + port and then the - port (a mesh edge router lacks the ports that would leave the
mesh). `params["dir_port"][r, 2d + (0 for +, 1 for -)]` is the local port index of each direction, -1 if absent.

Twisted torus (Cámara et al., seed 002 §4): a 2-D a×b torus whose wrap-around Y links are shifted by `twist`
in X: (x, b-1) -> ((x + twist) mod a, 0).

>>> from fastnet.build import build_network
>>> build_network({"topology": {"kind": "torus", "dims": [8, 8]}}).radix
5
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .network import LOCAL, RouterGraph


def build(kind: str, dims: list[int], p: int, twist: int = 0) -> RouterGraph:
    n = len(dims)
    R = int(np.prod(dims))
    if R < 2:
        raise ConfigError("topology.dims", "the network needs at least 2 routers")
    wrap = kind in ("torus", "twisted_torus")
    if kind == "twisted_torus" and n != 2:
        raise ConfigError("topology.dims", "a twisted torus has exactly 2 dimensions")
    stride = np.cumprod([1] + list(dims[:-1]))
    coords = (np.arange(R)[:, None] // stride[None, :]) % np.asarray(dims)[None, :]
    dir_nbr = np.full((R, 2 * n), -1, dtype=np.int64)
    for d, k in enumerate(dims):
        for sign, col in ((1, 2 * d), (-1, 2 * d + 1)):
            c = coords.copy()
            c[:, d] += sign
            if wrap:
                crossed = (c[:, d] < 0) | (c[:, d] >= k)
                if kind == "twisted_torus" and d == 1:
                    c[crossed, 0] = (c[crossed, 0] + sign * twist) % dims[0]
                c[:, d] %= k
                valid = np.ones(R, dtype=bool)
            else:
                valid = (c[:, d] >= 0) & (c[:, d] < k)
            dir_nbr[valid, col] = (c[valid] * stride[None, :]).sum(axis=1)
    present = dir_nbr >= 0
    dir_port = np.where(present, p + np.cumsum(present, axis=1) - 1, -1).astype(np.int32)
    counts = present.sum(axis=1)
    start = np.zeros(R + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    nbr = dir_nbr[present].astype(np.int32)  # row-major: keeps each router's direction order
    diameter = sum(k // 2 for k in dims) if wrap and kind == "torus" else sum(k - 1 for k in dims)
    return RouterGraph(
        kind=kind,
        nodes_per_router=np.full(R, p, dtype=np.int32),
        nbr_start=start,
        nbr=nbr,
        nbr_class=np.full(len(nbr), LOCAL, dtype=np.int8),
        router_group=np.zeros(R, dtype=np.int32),
        params={"dims": list(dims), "p": p, "twist": twist, "dir_port": dir_port, "stride": stride.tolist(),
                "diameter": None if kind == "twisted_torus" else diameter},
    )
