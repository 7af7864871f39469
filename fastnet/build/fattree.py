"""Fat trees: the k-ary n-tree (Petrini & Vanneschi) and the m-port n-tree (Lin, Chung & Huang, IPDPS 2004; seed
003 §VI), built by one construction that differs only in how many children a root has.

Both are n levels of switches, level 0 at the leaves. Below the top every switch has k children and k parents
(k = m/2 for the m-port n-tree); a top switch (a root) has `top` children: k in the k-ary n-tree, m = 2k in the
m-port n-tree, which therefore has twice the leaves under as many roots.

| form | nodes | switches | ports per switch |
|---|---|---|---|
| k_ary_n_tree | k^n | n k^(n-1) | 2k (k at the leaves and roots) |
| m_port_n_tree | 2(m/2)^n | (2n-1)(m/2)^(n-1): 2(m/2)^(n-1) per level, (m/2)^(n-1) roots | m |

Switch <w, l> has an (n-1)-digit label w; digit i has radix k, except digit n-2 below the top, which has radix
`top`. Digits l..n-2 name the subtree the switch heads (the leaves below it share them); digits 0..l-1 are the up
ports taken to reach it from a leaf. Router id = l * S + w with S = top * k^(n-2) switches per level below the top
(the roots, k^(n-1) of them, come last). Port order: the k node ports at a leaf or k down ports above it (`top`
at a root), then k up ports (none at a root). Down port j of <w, l> leads to <w with digit l-1 set to j, l-1>;
up port j leads to <w with digit l set to j, l+1>. Leaf w holds nodes w*k .. w*k + k-1.

The m-port n-tree is Lin et al.'s construction, port for port: their node P(p_0 .. p_{n-1}) (p_0 < m, the other
digits < m/2) is node p_0 (m/2)^(n-1) + ... + p_{n-1}; their switch SW<w_0 .. w_{n-2}, L> (L = 0 at the roots) is
level l = n-1-L here, with w_0 .. w_{L-1} our digits n-2 .. l (the subtree) and w_L .. w_{n-2} our digits 0 ..
l-1 (the up ports taken, first one first); their port number is our port index (`lin_switch_label`,
`lin_node_label`; tests/test_fattree_mport.py checks their link rule on every port).

>>> from fastnet.topology import build_network
>>> net = build_network({"topology": {"kind": "fattree", "k": 4, "n": 3}})
>>> net.n_nodes, net.n_routers
(64, 48)
>>> net = build_network({"topology": {"kind": "fattree", "form": "m_port_n_tree", "m": 4, "n": 3}})
>>> net.n_nodes, net.n_routers, net.radix
(16, 20, 4)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .network import LOCAL, RouterGraph


def size(form: str, n: int, k: int = 0, m: int = 0) -> tuple[int, int, int]:
    """(routers, network ports, nodes), by formula: S switches on each of the n - 1 lower levels (k up ports each,
    and k down above the leaves), k^(n-1) roots with `top` down ports, k nodes on each leaf."""
    top = m if form == "m_port_n_tree" else k
    k = m // 2 if form == "m_port_n_tree" else k
    if n == 1:
        return 1, 0, top
    S, roots = top * k ** (n - 2), k ** (n - 1)
    return (n - 1) * S + roots, S * k + (n - 2) * S * 2 * k + roots * top, S * k


def build(form: str, n: int, k: int = 0, m: int = 0) -> RouterGraph:
    """The fat tree of `form`: k_ary_n_tree(k, n) or m_port_n_tree(m, n)."""
    if form == "m_port_n_tree":
        k, top = m // 2, m
    else:
        top = k
    if n == 1:  # one switch, both leaf and root: all its ports hold nodes
        S, R, roots = 1, 1, 1
    else:
        S, roots = top * k ** (n - 2), k ** (n - 1)
        R = (n - 1) * S + roots
    lists: list[np.ndarray] = []
    for level in range(n):
        w = np.arange(S if level < n - 1 else roots)
        cols = []
        if level > 0:  # down ports vary digit level-1 (the subtree's digit of the switch below: radix top at a root)
            step = k ** (level - 1)
            digit = (w // step) % k
            fan = top if level == n - 1 else k
            cols.append((level - 1) * S + (w - digit * step)[:, None] + np.arange(fan)[None, :] * step)
        if level < n - 1:  # up ports vary digit level; below the top, digit n-2 has radix top
            step = k**level
            digit = w // step if level == n - 2 else (w // step) % k
            cols.append((level + 1) * S + (w - digit * step)[:, None] + np.arange(k)[None, :] * step)
        lists.append(np.concatenate(cols, axis=1) if cols else np.empty((len(w), 0), dtype=np.int64))
    counts = np.concatenate([np.full(len(a), a.shape[1], dtype=np.int64) for a in lists])
    start = np.zeros(R + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    nbr = np.concatenate([a.ravel() for a in lists]).astype(np.int32)
    nodes = np.zeros(R, dtype=np.int32)
    nodes[:S] = k if n > 1 else top
    params: dict[str, Any] = {"form": form, "k": k, "n": n, "top": top, "switches_per_level": S, "roots": roots,
                              "diameter": 2 * (n - 1)}
    if form == "m_port_n_tree":
        params["m"] = m
    return RouterGraph(
        kind="fattree",
        nodes_per_router=nodes,
        nbr_start=start,
        nbr=nbr,
        nbr_class=np.full(len(nbr), LOCAL, dtype=np.int8),
        router_group=(np.arange(R) // S).astype(np.int32),  # the level (0: leaves)
        params=params,
    )


def _digits(params: dict[str, Any], level: int, w: int) -> list[int]:
    """Digits 0..n-2 of switch label w at `level` (digit n-2 has radix top below the top level)."""
    k, n = params["k"], params["n"]
    out = [(w // k**i) % k for i in range(n - 1)]
    if n > 1 and level < n - 1:
        out[n - 2] = w // k ** (n - 2)
    return out


def lin_switch_label(params: dict[str, Any], r: int) -> tuple[int, tuple[int, ...]]:
    """Router r as Lin et al. label it: (L, (w_0, ..., w_{n-2})), L = 0 at the roots."""
    n, S = params["n"], params["switches_per_level"]
    level, w = r // S, r % S
    d = _digits(params, level, w)
    L = n - 1 - level
    return L, tuple([d[n - 2 - i] for i in range(L)] + [d[t] for t in range(level)])


def lin_node_label(params: dict[str, Any], node: int) -> tuple[int, ...]:
    """Node id as Lin et al.'s P(p_0, ..., p_{n-1}): the id in mixed radix (p_0 < top, the others < k)."""
    k, n = params["k"], params["n"]
    return tuple([node // k ** (n - 1)] + [(node // k ** (n - 1 - i)) % k for i in range(1, n)])
