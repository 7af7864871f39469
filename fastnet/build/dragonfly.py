"""Dragonfly (Kim, Dally, Scott, Abts 2008): groups of `a` fully connected routers, `h` global links each.

Symbols as in the literature (CAMINOS and FOGSim use the same): `p` nodes per router, `a` routers per group,
`h` global ports per router, `g` groups (at most a*h + 1). Router r is router `r % a` of group `r // a`.

Port order of every router, matching BookSim2's `dragonflynew`: p node ports, then a-1 local ports (local port
j leads to router j of the group if j < own index, else j+1), then h global ports. Global link k = i*h + c of a
group (router i, global port c) leads to

- `consecutive`: the (k mod (g-1))-th other group in increasing order, i.e. group k' or k'+1 (BookSim2's wiring;
  `p = h = 4, a = 8` is BookSim2's `dragonflynew k = 4`);
- `palmtree`: group (G - (k mod (g-1)) - 1) mod g (Camarero et al.'s palm-tree arrangement).

With g < a*h + 1 the (g-1) other groups each get (a*h)/(g-1) parallel global links.

Example config (the embedded default; 1056 nodes, 264 routers):

>>> from fastnet.build import build_network
>>> net = build_network({"topology": {"kind": "dragonfly", "p": 4, "a": 8, "h": 4, "arrangement": "palmtree"}})
>>> net.n_nodes, net.n_routers, net.radix
(1056, 264, 15)
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .network import GLOBAL, LOCAL, RouterGraph


def global_target(G: int, k: int, g: int, arrangement: str) -> tuple[int, int]:
    """Group reached by global link k of group G, and that link's index k' at the far group."""
    off, m = k % (g - 1), k // (g - 1)
    if arrangement == "consecutive":
        T = off if off < G else off + 1
        back = G if G < T else G - 1
    else:
        T = (G - off - 1) % g
        back = (T - G - 1) % g
    return T, back + m * (g - 1)


def build(p: int, a: int, h: int, g: int | str, arrangement: str) -> RouterGraph:
    g = a * h + 1 if g == "auto" else g
    if g > a * h + 1:
        raise ConfigError("topology.g", f"must be <= a*h + 1 = {a * h + 1} (got {g})")
    if (a * h) % (g - 1):
        raise ConfigError("topology.g", f"g - 1 must divide a*h = {a * h} so every global port is used (got {g})")
    R = a * g
    deg = (a - 1) + h
    nbr = np.empty(R * deg, dtype=np.int32)
    cls = np.empty(R * deg, dtype=np.int8)
    for r in range(R):
        G, i = divmod(r, a)
        row = r * deg
        for j in range(a - 1):
            nbr[row + j] = G * a + (j if j < i else j + 1)
            cls[row + j] = LOCAL
        for c in range(h):
            T, kT = global_target(G, i * h + c, g, arrangement)
            nbr[row + a - 1 + c] = T * a + kT // h
            cls[row + a - 1 + c] = GLOBAL
    return RouterGraph(
        kind="dragonfly",
        nodes_per_router=np.full(R, p, dtype=np.int32),
        nbr_start=np.arange(R + 1, dtype=np.int64) * deg,
        nbr=nbr,
        nbr_class=cls,
        router_group=(np.arange(R) // a).astype(np.int32),
        params={"p": p, "a": a, "h": h, "g": g, "arrangement": arrangement, "diameter": 3 if g > 1 else 1},
    )
