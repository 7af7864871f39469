"""k-ary n-tree fat tree (Petrini & Vanneschi): k^n nodes, n levels of k^(n-1) switches with 2k ports.

Switch <w, l> (level l = 0 at the leaves, w an (n-1)-digit base-k label) has router id l*k^(n-1) + w.
Port order: k node ports at a leaf (k down ports above it), then k up ports (none at the top level).
Down port j of <w, l> leads to <w with digit l-1 set to j, l-1>; up port j leads to <w with digit l set to j,
l+1>. Leaf w holds nodes w*k .. w*k + k-1. A switch reaches exactly the leaves that share its digits l..n-2,
which is what up/down routing tests.

>>> from fastnet.build import build_network
>>> net = build_network({"topology": {"kind": "fattree", "k": 4, "n": 3}})
>>> net.n_nodes, net.n_routers
(64, 48)
"""

from __future__ import annotations

import numpy as np

from .network import LOCAL, RouterGraph


def build(k: int, n: int) -> RouterGraph:
    S = k ** (n - 1)  # switches per level
    R = n * S
    w = np.arange(S)
    lists: list[np.ndarray] = []
    for level in range(n):
        cols = []
        if level > 0:  # down ports vary digit level-1
            step = k ** (level - 1)
            digit = (w // step) % k
            cols.append((level - 1) * S + (w - digit * step)[:, None] + np.arange(k)[None, :] * step)
        if level < n - 1:  # up ports vary digit level
            step = k**level
            digit = (w // step) % k
            cols.append((level + 1) * S + (w - digit * step)[:, None] + np.arange(k)[None, :] * step)
        lists.append(np.concatenate(cols, axis=1) if cols else np.empty((S, 0), dtype=np.int64))
    counts = np.array([m.shape[1] for m in lists for _ in range(S)], dtype=np.int64)
    start = np.zeros(R + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    nbr = np.concatenate([m.ravel() for m in lists]).astype(np.int32)
    nodes = np.zeros(R, dtype=np.int32)
    nodes[:S] = k
    return RouterGraph(
        kind="fattree",
        nodes_per_router=nodes,
        nbr_start=start,
        nbr=nbr,
        nbr_class=np.full(len(nbr), LOCAL, dtype=np.int8),
        router_group=(np.arange(R) // S).astype(np.int32),  # the level
        params={"k": k, "n": n, "diameter": 2 * (n - 1)},
    )
