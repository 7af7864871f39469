"""Dragonfly (Kim, Dally, Scott, Abts 2008): groups of `a` routers, `h` global ports each; with `group_shape`,
the two-dimensional groups of Cray's Aries (seed 003 §V-B).

Symbols as in the literature (CAMINOS and FOGSim use the same): `p` nodes per router, `a` routers per group,
`h` global ports per router, `g` groups. Router r is router `i = r % a` of group `r // a`.

Groups. `group_shape = [a]` (or "auto") is the canonical group: all-to-all. `group_shape = [n1, n2]` (n1*n2 = a)
lays the group out as n2 rows of n1 routers, router i at column i % n1 of row i // n1, all-to-all along each row
("green" links: Aries' 16 blades of a chassis) and along each column ("black" links: the same blade in the other
5 chassis), so two local hops join any two routers of a group. Both kinds are LOCAL links (same VCs, same
latency); `RouterGraph.nbr_wire` marks the black half-links.

Port order of every router, matching BookSim2's `dragonflynew` for a 1-D group: p node ports, then n1-1 row ports
(row port j leads to column j of the row if j < own column, else j+1), then n2-1 column ports (the same rule on
rows), then h global ports.

Global links. The group's a*h physical global ports are numbered k = i*h + c (router i, port c). With
`global_bundle = b` (Aries: 4), b consecutive physical ports form one logical global link: logical link l is
ports l*b .. l*b + b-1, so a group has L = a*h/b logical links and the network at most L + 1 groups (Aries,
a = 96, h = 10, b = 4: 241). Logical links are wired by the arrangement, and the j-th physical link of logical
link l meets the j-th of the far end's logical link: a logical link is b physical links, each with its own port,
VCs and bandwidth, between the same two routers (or, where b does not divide h, between a router and its
successor at either end). Routing and the VC scheme see only global links, as with b = 1. Logical link l of group
G leads to

- `consecutive`: the (l mod (g-1))-th other group in increasing order, i.e. group l' or l'+1 (BookSim2's wiring;
  `p = h = 4, a = 8` is BookSim2's `dragonflynew k = 4`);
- `palmtree`: group (G - (l mod (g-1)) - 1) mod g (Camarero et al.'s palm-tree arrangement).

With fewer groups than L + 1 (g - 1 must divide L), every pair of groups is joined by L/(g-1) logical links:
those of group G to one group are l, l + (g-1), l + 2(g-1), ..., spread evenly over the group's routers.

Example config (the embedded default; 1056 nodes, 264 routers):

>>> from fastnet.topology import build_network
>>> net = build_network({"topology": {"kind": "dragonfly", "p": 4, "a": 8, "h": 4, "arrangement": "palmtree"}})
>>> net.n_nodes, net.n_routers, net.radix
(1056, 264, 15)

A Trinity-like Aries system (seed 003 §V-C: 96 routers a group, 4 nodes each, 25 groups):

>>> net = build_network({"topology": {"kind": "dragonfly", "p": 4, "a": 96, "h": 10, "g": 25,
...                                   "group_shape": [16, 6], "global_bundle": 4}})
>>> net.n_nodes, net.n_routers, net.radix  # 4 nodes + 15 green + 5 black + 10 global ports
(9600, 2400, 34)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ConfigError
from .network import GLOBAL, LOCAL, RouterGraph

BLACK = 1  # RouterGraph.nbr_wire value of a column ("black") half-link; 0 on every other link


def global_target(G: Any, l: Any, g: int, arrangement: str) -> tuple[Any, Any]:
    """Group reached by logical global link l of group G, and that link's index l' at the far group (numpy
    arrays or scalars)."""
    off, m = l % (g - 1), l // (g - 1)
    if arrangement == "consecutive":
        T = off + (off >= G)
        back = G - (G > T)
    else:
        T = (G - off - 1) % g
        back = (T - G - 1) % g
    return T, back + m * (g - 1)


def group_dims(a: int, group_shape: list[int] | str) -> tuple[int, int]:
    """(routers per row n1, rows n2) of a group."""
    if group_shape == "auto":
        return a, 1
    if int(np.prod(group_shape)) != a:
        raise ConfigError("topology.group_shape", f"must multiply to a = {a} (got {group_shape})")
    return (a, 1) if len(group_shape) == 1 else (group_shape[0], group_shape[1])


def size(p: int, a: int, h: int, g: int | str, group_shape: list[int] | str = "auto",
         global_bundle: int = 1) -> tuple[int, int, int]:
    """(routers, network ports, nodes), by formula: a*g routers with the local ports of their group's shape and h
    global ports."""
    n1, n2 = group_dims(a, group_shape)
    R = a * groups(a, h, g, global_bundle)
    return R, R * ((n1 - 1) + (n2 - 1) + h), R * p


def groups(a: int, h: int, g: int | str, b: int) -> int:
    """The number of groups ("auto": the most, a*h/b + 1), checked against the a*h/b logical global links of a
    group (b = global_bundle physical ports each)."""
    if (a * h) % b:
        raise ConfigError("topology.global_bundle", f"must divide a*h = {a * h} (got {b})")
    L = a * h // b
    g = L + 1 if g == "auto" else g
    if g > L + 1:
        raise ConfigError("topology.g", f"must be <= a*h/global_bundle + 1 = {L + 1} (got {g})")
    if L % (g - 1):
        raise ConfigError("topology.g", f"g - 1 must divide a*h/global_bundle = {L} so every global port is used "
                          f"(got {g})")
    return g


def build(p: int, a: int, h: int, g: int | str, arrangement: str, group_shape: list[int] | str = "auto",
          global_bundle: int = 1) -> RouterGraph:
    n1, n2 = group_dims(a, group_shape)
    b = global_bundle
    g = groups(a, h, g, b)
    R = a * g
    n_local = (n1 - 1) + (n2 - 1)
    deg = n_local + h
    r = np.arange(R, dtype=np.int64)
    G, i = r // a, r % a
    x, y = i % n1, i // n1
    nbr = np.empty((R, deg), dtype=np.int64)
    for j in range(n1 - 1):  # row ("green") ports
        nbr[:, j] = G * a + y * n1 + j + (j >= x)
    for j in range(n2 - 1):  # column ("black") ports
        nbr[:, n1 - 1 + j] = G * a + (j + (j >= y)) * n1 + x
    for c in range(h):
        k = i * h + c  # physical port of the group
        T, lT = global_target(G, k // b, g, arrangement)
        nbr[:, n_local + c] = T * a + (lT * b + k % b) // h
    cls = np.full((R, deg), LOCAL, dtype=np.int8)
    cls[:, n_local:] = GLOBAL
    wire = None
    if n2 > 1:
        wire = np.zeros((R, deg), dtype=np.int8)
        wire[:, n1 - 1:n_local] = BLACK
        wire = wire.ravel()
    local_diameter = (n1 > 1) + (n2 > 1)
    # with fewer groups than global ports allow, every router may have a link to every other group: then one
    # global hop and the local diameter reach anyone; else local, global, local (an upper bound in the rare
    # small network where third groups still bring every pair closer)
    far = np.sort(nbr[:, n_local:] // a, axis=1)  # each router's global neighbours' groups (never its own)
    to_all = h >= g - 1 and bool((1 + (np.diff(far, axis=1) != 0).sum(axis=1) == g - 1).all())
    diameter = local_diameter if g == 1 else local_diameter + 1 if to_all else 2 * local_diameter + 1
    return RouterGraph(
        kind="dragonfly",
        nodes_per_router=np.full(R, p, dtype=np.int32),
        nbr_start=np.arange(R + 1, dtype=np.int64) * deg,
        nbr=nbr.ravel().astype(np.int32),
        nbr_class=cls.ravel(),
        router_group=(np.arange(R) // a).astype(np.int32),
        params={"p": p, "a": a, "h": h, "g": g, "arrangement": arrangement, "group_shape": [n1, n2],
                "global_bundle": b, "diameter": diameter},
        nbr_wire=wire,
    )
