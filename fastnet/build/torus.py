"""n-dimensional torus and mesh with any radix per dimension, and the 2-D twisted torus of seed 002.

Router r has coordinates c with c[0] varying fastest: r = sum(c[d] * stride[d]). Dimension d has `links[d]`
parallel links per direction (Cray Gemini: dims [X, Y, Z], links [2, 1, 2]). Port order: p node ports, then for
each dimension d its links[d] + ports and then its links[d] - ports (a mesh edge router lacks the ports that
would leave the mesh). `params["dir_port"][r, 2d + (0 for +, 1 for -)]` is the local port index of the first
link of each direction, -1 if absent; the direction's other parallel links follow it.

Twisted torus (Cámara et al., seed 002 §4): a 2-D a×b torus whose wrap-around Y links are shifted by `twist`
in X: (x, b-1) -> ((x + twist) mod a, 0).

>>> from fastnet.topology import build_network
>>> build_network({"topology": {"kind": "torus", "dims": [8, 8]}}).radix
5
>>> build_network({"topology": {"kind": "torus", "dims": [4, 2, 4], "links": [2, 1, 2], "p": 2}}).radix
12
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .network import LOCAL, RouterGraph


def per_dimension(value: int | list[int], dims: list[int], field: str) -> list[int]:
    """A per-dimension count given as one integer (every dimension) or a list with one entry per dimension."""
    if isinstance(value, int):
        return [value] * len(dims)
    if len(value) != len(dims):
        raise ConfigError(field, f"needs one count per dimension ({len(dims)}), got {len(value)}")
    return list(value)


def size(kind: str, dims: list[int], p: int, links: int | list[int] = 1) -> tuple[int, int, int]:
    """(routers, network ports, nodes), by formula: each dimension d gives every router 2 x links[d] ports, less
    at a mesh's edges (the (k - 1)/k of routers with a neighbour each way)."""
    R = int(np.prod(dims))
    wrap = kind in ("torus", "twisted_torus")
    ports = sum(2 * n * (R if wrap else R // k * (k - 1)) for k, n in zip(dims, per_dimension(links, dims,
                                                                                                "topology.links")))
    return R, ports, R * p


def build(kind: str, dims: list[int], p: int, twist: int = 0, links: int | list[int] = 1) -> RouterGraph:
    n = len(dims)
    R = int(np.prod(dims))
    if R < 2:
        raise ConfigError("topology.dims", "the network needs at least 2 routers")
    wrap = kind in ("torus", "twisted_torus")
    if kind == "twisted_torus" and n != 2:
        raise ConfigError("topology.dims", "a twisted torus has exactly 2 dimensions")
    links = per_dimension(links, dims, "topology.links")
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
    width = present * np.repeat(np.asarray(links, dtype=np.int64), 2)[None, :]  # ports of each direction
    dir_port = np.where(present, p + np.cumsum(width, axis=1) - width, -1).astype(np.int32)
    counts = width.sum(axis=1)
    start = np.zeros(R + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    # row-major: keeps each router's direction order, each direction's neighbour repeated once per parallel link
    nbr = np.repeat(dir_nbr[present], width[present]).astype(np.int32)
    diameter = sum(k // 2 for k in dims) if wrap and kind == "torus" else sum(k - 1 for k in dims)
    return RouterGraph(
        kind=kind,
        nodes_per_router=np.full(R, p, dtype=np.int32),
        nbr_start=start,
        nbr=nbr,
        nbr_class=np.full(len(nbr), LOCAL, dtype=np.int8),
        router_group=np.zeros(R, dtype=np.int32),
        params={"dims": list(dims), "p": p, "twist": twist, "links": links, "dir_port": dir_port,
                "stride": stride.tolist(), "diameter": None if kind == "twisted_torus" else diameter},
    )
