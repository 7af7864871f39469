"""n-dimensional torus and mesh with any radix per dimension, and the 2-D twisted torus of seed 002.

Router r has coordinates c with c[0] varying fastest: r = sum(c[d] * stride[d]). Dimension d has `links[d]`
parallel links per direction (Cray Gemini: dims [X, Y, Z], links [2, 1, 2]). Port order: p node ports, then for
each dimension d its links[d] + ports and then its links[d] - ports (a mesh edge router lacks the ports that
would leave the mesh). `params["dir_port"][r, 2d + (0 for +, 1 for -)]` is the local port index of the first
link of each direction, -1 if absent; the direction's other parallel links follow it.

Express channels (BookSim2's concentrated mesh, src/networks/cmesh.cpp; `express` > 0, a 2-D k x k mesh, k even):
the port a mesh edge router lacks (the one that would leave the mesh) links it to the router k/2 away along the
same edge, `express` times as long as a mesh link: router (k-1, y) to (k-1, y +- k/2), (0, y) to (0, y +- k/2),
(x, k-1) to (x +- k/2, k-1), (x, 0) to (x +- k/2, 0). They follow the mesh ports (dir_port does not list them),
so dimension-order routing never takes them; routings over the distance table (min) do.

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


def grid(dims: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(stride, coordinates) of the routers of a grid of `dims`: stride[d] = prod(dims[:d]), and row r of the
    coordinates r's c with r = sum(c[d] * stride[d]) (c[0] fastest). A HyperX numbers its routers the same way."""
    stride = np.cumprod([1] + list(dims[:-1]))
    return stride, (np.arange(int(np.prod(dims)))[:, None] // stride[None, :]) % np.asarray(dims)[None, :]


def size(kind: str, dims: list[int], p: int, links: int | list[int] = 1, express: int = 0) -> tuple[int, int, int]:
    """(routers, network ports, nodes), by formula: each dimension d gives every router 2 x links[d] ports, less
    at a mesh's edges (the (k - 1)/k of routers with a neighbour each way); express channels add one port to each
    router of each of the 4 edges (4k)."""
    R = int(np.prod(dims))
    wrap = kind in ("torus", "twisted_torus")
    ports = sum(2 * n * (R if wrap else R // k * (k - 1)) for k, n in zip(dims, per_dimension(links, dims,
                                                                                                "topology.links")))
    return R, ports + (4 * dims[0] if express else 0), R * p


def express_neighbours(k: int) -> list[list[int]]:
    """Each router's express neighbours (cmesh.cpp's wrap ports), in the order +x, -x, +y, -y of its edges."""
    out: list[list[int]] = [[] for _ in range(k * k)]
    h = k // 2
    for y in range(k):
        for x in range(k):
            r = y * k + x
            if x == k - 1:
                out[r].append((y + h) % k * k + x)
            if x == 0:
                out[r].append((y + h) % k * k + x)
            if y == k - 1:
                out[r].append(y * k + (x + h) % k)
            if y == 0:
                out[r].append(y * k + (x + h) % k)
    return out


def build(kind: str, dims: list[int], p: int, twist: int = 0, links: int | list[int] = 1,
          express: int = 0) -> RouterGraph:
    n = len(dims)
    R = int(np.prod(dims))
    if R < 2:
        raise ConfigError("topology.dims", "the network needs at least 2 routers")
    wrap = kind in ("torus", "twisted_torus")
    if kind == "twisted_torus" and n != 2:
        raise ConfigError("topology.dims", "a twisted torus has exactly 2 dimensions")
    links = per_dimension(links, dims, "topology.links")
    stride, coords = grid(dims)
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
    length = None
    if express:
        if kind != "mesh" or n != 2 or dims[0] != dims[1] or dims[0] % 2 or links != [1, 1]:
            raise ConfigError("topology.express", "express channels (BookSim2's cmesh) need a 2-D k x k mesh, k "
                                                  "even, one link per direction")
        extra = express_neighbours(dims[0])
        rows = np.split(nbr, start[1:-1])
        rows = [np.concatenate([row, extra[r]]).astype(np.int32) for r, row in enumerate(rows)]
        length = np.concatenate([np.r_[np.ones(len(row) - len(extra[r])), np.full(len(extra[r]), express)]
                                 for r, row in enumerate(rows)]).astype(np.int32)
        nbr = np.concatenate(rows)
        np.cumsum([len(row) for row in rows], out=start[1:])
    diameter = sum(k // 2 for k in dims) if wrap and kind == "torus" else sum(k - 1 for k in dims)
    return RouterGraph(
        kind=kind,
        nodes_per_router=np.full(R, p, dtype=np.int32),
        nbr_start=start,
        nbr=nbr,
        nbr_class=np.full(len(nbr), LOCAL, dtype=np.int8),
        router_group=np.zeros(R, dtype=np.int32),
        nbr_length=length,
        params={"dims": list(dims), "p": p, "twist": twist, "links": links, "dir_port": dir_port, "express": express,
                "stride": stride.tolist(), "coords": coords.astype(np.int32),  # (routing reads them: build/routing.py)
                "diameter": None if kind == "twisted_torus" else diameter},
    )
