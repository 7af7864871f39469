"""Slim Fly on McKay-Miller-Siran (MMS) graphs, seed 004 §2.1 (Besta & Hoefler; Hafner's construction).

q = 4w + δ is a prime power, δ in {-1, 0, 1}; ξ is a primitive element of GF(q). Routers are (s, x, y) with
s in {0, 1} the subgraph and x, y in GF(q): router id = s*q² + x*q + y, group = s*q + x. Links (seed 004
eqs 1-3, with X' for subgraph 1 as in Besta & Hoefler):

    (0, x, y) ~ (0, x, y')  iff  y - y' ∈ X          (1)
    (1, m, c) ~ (1, m, c')  iff  c - c' ∈ X'         (2)
    (0, x, y) ~ (1, m, c)   iff  y = m·x + c          (3)

Network degree k' = (3q - δ)/2, 2q² routers, diameter 2. Port order: p node ports; then the intra-group ports,
one per element of X (or X') in the order of `params["X"]`, leading to y - X[j]; then q ports to the other
subgraph, port m (or x) leading to (1, m, y - m·x) (or (0, x, m·x + c)). Algebraic routing relies on this order.

>>> from fastnet.topology import build_network
>>> net = build_network({"topology": {"kind": "slimfly", "q": 5}})
>>> net.n_routers, net.radix - net.params["p"], net.params["p"]
(50, 7, 3)
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .gf import field, prime_power
from .network import GLOBAL, LOCAL, RouterGraph


DELTA = {1: 1, 3: -1, 0: 0}  # q mod 4 -> δ (q = 4w + δ; q mod 4 = 2 only for q = 2, which config.py refuses)


def check_q(q: int) -> None:
    if prime_power(q) is None:
        raise ConfigError("topology.q", f"must be a prime power (got {q})")


def generator_sets(q: int) -> tuple[object, list[int], list[int], int]:
    """GF(q), X, X' (as field elements) and δ for the MMS construction."""
    check_q(q)
    F = field(q)
    delta = DELTA[q % 4]
    w = (q - delta) // 4
    pw = [F.power(F.xi, k) for k in range(q)]
    if delta == 1:
        X = [pw[k] for k in range(0, q - 2, 2)]
        Xp = [pw[k] for k in range(1, q - 1, 2)]
    elif delta == -1:
        X = [pw[k] for k in range(0, 2 * w - 1, 2)] + [pw[k] for k in range(2 * w - 1, 4 * w - 2, 2)]
        Xp = [pw[k] for k in range(1, 2 * w, 2)] + [pw[k] for k in range(2 * w, 4 * w - 1, 2)]
    else:
        X = [pw[k] for k in range(0, 4 * w - 1, 2)]
        Xp = [pw[k] for k in range(1, 4 * w, 2)]
    return F, X, Xp, delta


def size(q: int, p: int | str) -> tuple[int, int, int]:
    """(routers, network ports, nodes), by formula: 2q² routers of network degree (3q - δ)/2."""
    check_q(q)
    delta = DELTA[q % 4]
    k_net = (3 * q - delta) // 2
    R = 2 * q * q
    return R, R * k_net, R * (k_net // 2 if p == "auto" else p)


def build(q: int, p: int | str) -> RouterGraph:
    F, X, Xp, delta = generator_sets(q)
    R, n_links, n_nodes = size(q, p)
    k_net, p = n_links // R, n_nodes // R  # k_net = |X| + q
    nx = len(X)
    add, mul, neg = F.add, F.mul, F.neg
    a, b = np.divmod(np.arange(q * q), q)  # (x, y) for s = 0, (m, c) for s = 1
    t = np.arange(q)
    rows = []
    for s, gen in ((0, X), (1, Xp)):
        intra = s * q * q + a[:, None] * q + add[b[:, None], neg[np.asarray(gen)][None, :]]
        if s == 0:  # port t -> (1, m=t, c = y - t*x)
            inter = q * q + t[None, :] * q + add[b[:, None], neg[mul[t[None, :], a[:, None]]]]
        else:  # port t -> (0, x=t, y = m*t + c)
            inter = t[None, :] * q + add[mul[a[:, None], t[None, :]], b[:, None]]
        rows.append(np.concatenate([intra, inter], axis=1))
    nbr = np.concatenate(rows).astype(np.int32).ravel()
    cls = np.tile(np.array([LOCAL] * nx + [GLOBAL] * q, dtype=np.int8), R)
    return RouterGraph(
        kind="slimfly",
        nodes_per_router=np.full(R, p, dtype=np.int32),
        nbr_start=np.arange(R + 1, dtype=np.int64) * k_net,
        nbr=nbr,
        nbr_class=cls,
        router_group=(np.arange(R) // q).astype(np.int32),
        params={"q": q, "p": p, "delta": delta, "k_net": k_net, "X": X, "Xp": Xp, "xi": F.xi, "field": F,
                "diameter": 2},
    )
