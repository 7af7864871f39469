"""Minimal next-port candidates and router distances, from the table or from each topology's algebra.

The routing algorithms themselves (min, val, ugal, dor, ...) are in routing.py and build on these.

`min_ports(ps, port, dist, ip, alg, r, d, buf, scan)` writes into `buf` the global ids of the ports of router r that
start a minimal path to router d (r != d) and returns how many; `distance(...)` is the hop count. `ps` is
Topology.router_port_start, `port` Topology.port, and `dist, ip, alg` are the fields of build/routing.py's
Routes; `scan` is SCAN_TABLE or the topology kind (`scan_of(ip)`, or a constant of the cycle loop). Port layouts
are documented in each builder module under fastnet/build/. The port of a failed link has no peer router
(fastnet/faults): the table's and the dragonfly's scans skip it, and return 0 candidates when none is left.
"""

from __future__ import annotations

from ..build.kinds import K_DRAGONFLY, K_FATTREE, K_HYPERX, K_MESH, K_SLIMFLY, K_TORUS
from ..build.network import P_PEER_ROUTER
from ..build.routing import (
    IP_A, IP_A_DIV, IP_BUNDLE, IP_DIMS, IP_FT_S, IP_G, IP_H, IP_H_DIV, IP_K, IP_KIND, IP_LINKS, IP_MODE, IP_N, IP_NDIM,
    IP_NX, IP_P, IP_PALM, IP_Q, IP_Q_DIV, IP_ROW, IP_ROW_DIV, IP_ROWS, IP_WRAP, SCAN_TABLE, SF_INV, SF_NEG,
    SF_X, SF_XI, SF_XP, SF_XPI, TABLE,
)
from ._jit import jit, jit_callee, jit_inline, no_implementation
from .state import divide


@jit
def table_min_ports(ps, port, dist, r, d, buf):
    dd = dist[r, d]
    n = 0
    for p in range(ps[r], ps[r + 1]):
        q = port[p, P_PEER_ROUTER]
        if q >= 0 and dist[q, d] + 1 == dd:
            buf[n] = p
            n += 1
    return n


@jit_inline
def _divmod(ip, x, n_at, div_at):
    """(x // n, x % n) for the parameter n = ip[n_at], by its divisor at ip[div_at] (build/routing.py): routing
    asks for these at every hop, and a division by a value known only at run time costs 10-40 cycles."""
    q = divide(x, ip[div_at], ip[div_at + 1])
    return q, x - q * ip[n_at]


# ---------------------------------------------------------------- dragonfly (fastnet/build/dragonfly.py)
# A group is rows of n1 = ip[IP_ROW] routers (n1 = a: one all-to-all row), all-to-all along rows and columns.
# Inside a group a packet moves in dimension order: along its row to the target's column, then along the column.
@jit_inline
def df_place(ip, r):
    """(group, place in the group) of router r: (r // a, r % a)."""
    return _divmod(ip, r, IP_A, IP_A_DIV)


@jit_inline
def df_group(ip, r):
    """The group of router r (or of an intermediate router, Valiant's)."""
    return _divmod(ip, r, IP_A, IP_A_DIV)[0]


@jit_inline
def df_link(ip, k):
    """(place of its router in the group, its port among the router's global ports) of physical global link k
    of a group: (k // h, k % h)."""
    return _divmod(ip, k, IP_H, IP_H_DIV)


@jit_inline
def df_ldist(ip, i, j):
    """Local hops from router i to router j of the same group (places in it)."""
    yi, xi = _divmod(ip, i, IP_ROW, IP_ROW_DIV)
    yj, xj = _divmod(ip, j, IP_ROW, IP_ROW_DIV)
    return (1 if xi != xj else 0) + (1 if yi != yj else 0)


@jit_inline
def df_step(base, ip, i, j):
    """The port of router i (whose ports start at `base`) of the first dimension-order hop toward router j != i
    of its group: the row port to j's column, or if i is in that column already, the column port to j's row."""
    p, n1 = ip[IP_P], ip[IP_ROW]
    yi, xi = _divmod(ip, i, IP_ROW, IP_ROW_DIV)
    yj, xj = _divmod(ip, j, IP_ROW, IP_ROW_DIV)
    if xi != xj:
        return base + p + (xj if xj < xi else xj - 1)
    return base + p + n1 - 1 + (yj if yj < yi else yj - 1)


@jit_inline
def df_global_port(ps, ip, G, k):
    """The port of physical global link k (router k // h, port k % h) of group G."""
    ri, x = df_link(ip, k)
    return ps[G * ip[IP_A] + ri] + ip[IP_P] + ip[IP_ROW] - 1 + ip[IP_ROWS] - 1 + x


@jit_inline
def df_first_link(ip, G, Gt):
    """Index of group G's first logical global link to group Gt; the others follow every g - 1 (build/dragonfly.py's
    consecutive and palm-tree arrangements). Logical link l is physical links l*b .. l*b + b-1 (b = global_bundle)."""
    g = ip[IP_G]
    return (G - Gt - 1) % g if ip[IP_PALM] else (Gt if Gt < G else Gt - 1)


@jit_callee
def _df_scan(ps, port, ip, r, d, buf):
    """Hierarchical minimal paths (at most one global hop, dimension order inside each group) over every global
    link G -> Gd. Returns (candidates, length).

    Minimal routing scans again at every router. In a 2-D group, ties in length are broken toward the fewest hops
    before the global one: otherwise a packet that took a column hop toward one gateway router could next take a
    row hop toward another gateway that is as far in total, a column-then-row turn that can close a cycle of
    waiting packets in one VC class. With the tie-break every hop keeps to a dimension-order path from where the
    phase began (one hop fewer before the global link at each router). A 1-D group has one dimension: no tie-break,
    as it always was."""
    a, h, g, n1, b = ip[IP_A], ip[IP_H], ip[IP_G], ip[IP_ROW], ip[IP_BUNDLE]
    base = ps[r]
    G, i = df_place(ip, r)
    Gd, j = df_place(ip, d)
    if G == Gd:
        buf[0] = df_step(base, ip, i, j)
        return 1, df_ldist(ip, i, j)
    two_d = n1 < a
    off = df_first_link(ip, G, Gd)
    best, best_before = 99, 99
    n = 0
    for l in range(off, a * h // b, g - 1):
        for k in range(l * b, l * b + b):
            gport = df_global_port(ps, ip, G, k)
            if port[gport, P_PEER_ROUTER] < 0:  # a failed link (fastnet/faults)
                continue
            ri = df_link(ip, k)[0]
            before = df_ldist(ip, i, ri)
            length = before + 1 + df_ldist(ip, df_place(ip, port[gport, P_PEER_ROUTER])[1], j)
            if not two_d:
                before = 0
            if length < best or (length == best and before < best_before):
                best, best_before = length, before
                n = 0
            if length == best and before == best_before:
                first = gport if ri == i else df_step(base, ip, i, ri)
                dup = False
                for m in range(n):
                    dup |= buf[m] == first
                if not dup:
                    buf[n] = first
                    n += 1
    return n, best


# ---------------------------------------------------------------- Slim Fly (fastnet/build/slimfly.py)
@jit_inline
def _sf_sub(alg, q, a, b):
    return alg[a, alg[b, 2 * q + SF_NEG]]


@jit_callee
def _sf_port_to(alg, q, nx, s, a, b, s2, a2, b2):
    """Local port index (after the node ports) from router (s,a,b) to an adjacent (s2,a2,b2); -1 if not adjacent."""
    if s == s2:
        if a != a2:
            return -1
        return alg[_sf_sub(alg, q, b, b2), 2 * q + (SF_XI if s == 0 else SF_XPI)]
    if s == 0:  # (0, x=a, y=b) ~ (1, m=a2, c=b2) iff y = m x + c
        return nx + a2 if b == alg[alg[a2, q + a], b2] else -1
    return nx + a2 if b2 == alg[alg[a, q + a2], b] else -1


@jit_inline
def sf_coords(ip, r):
    """Router r = s q^2 + a q + b as (s, a, b), by two multiply-and-shift divisions by q (state.divide)."""
    sa, b = _divmod(ip, r, IP_Q, IP_Q_DIV)
    s, a = _divmod(ip, sa, IP_Q, IP_Q_DIV)
    return s, a, b


@jit_callee
def _sf_scan(ps, ip, alg, r, d, buf):
    q, nx = ip[IP_Q], ip[IP_NX]
    base = ps[r] + ip[IP_P]
    s, a, b = sf_coords(ip, r)
    s2, a2, b2 = sf_coords(ip, d)
    direct = _sf_port_to(alg, q, nx, s, a, b, s2, a2, b2)
    if direct >= 0:
        buf[0] = base + direct
        return 1, 1
    n = 0
    if s == s2:
        if a == a2:  # same group, not adjacent: the common neighbours are inside the group
            col = 2 * q + (SF_X if s == 0 else SF_XP)
            for jj in range(nx):
                mid = _sf_sub(alg, q, b, alg[jj, col])
                if _sf_port_to(alg, q, nx, s, a, mid, s2, a2, b2) >= 0:
                    buf[n] = base + jj
                    n += 1
        else:  # one common neighbour in the other subgraph:
            # s = 0: (1, m, c) with m = (y - y')/(x - x'); s = 1: (0, x, y) with x = (c' - c)/(m - m')
            num = _sf_sub(alg, q, b, b2) if s == 0 else _sf_sub(alg, q, b2, b)
            buf[0] = base + nx + alg[num, q + alg[_sf_sub(alg, q, a, a2), 2 * q + SF_INV]]
            n = 1
    elif s == 0:  # r = (0, x, y), d = (1, m, c)
        mid = alg[alg[a2, q + a], b2]  # (0, x, m x + c) is adjacent to d
        j = alg[_sf_sub(alg, q, b, mid), 2 * q + SF_XI]
        if j >= 0:
            buf[n] = base + j
            n += 1
        c_mid = _sf_sub(alg, q, b, alg[a2, q + a])  # (1, m, y - m x) is adjacent to r
        if alg[_sf_sub(alg, q, c_mid, b2), 2 * q + SF_XPI] >= 0:
            buf[n] = base + nx + a2
            n += 1
    else:  # r = (1, m, c), d = (0, x, y)
        c_mid = _sf_sub(alg, q, b2, alg[a, q + a2])  # (1, m, y - m x) is adjacent to d
        j = alg[_sf_sub(alg, q, b, c_mid), 2 * q + SF_XPI]
        if j >= 0:
            buf[n] = base + j
            n += 1
        y_mid = alg[alg[a, q + a2], b]  # (0, x, m x + c) is adjacent to r
        if alg[_sf_sub(alg, q, y_mid, b2), 2 * q + SF_XI] >= 0:
            buf[n] = base + nx + a2
            n += 1
    return n, 2


# ---------------------------------------------------------------- torus / mesh (fastnet/build/torus.py)
@jit_inline
def torus_coord(ip, dir_port, r, dim):
    """Router r's coordinate in dimension `dim`, (r // stride) % k, read from the routes' table (build/routing.py):
    computed, it costs two integer divisions by values known only at run time, at every hop."""
    return dir_port[r, 2 * ip[IP_NDIM] + dim]


@jit_inline
def _put_links(buf, n, first, links):
    """Append the `links` parallel ports first, first + 1, ... to buf[:n]; returns the new count."""
    for j in range(links):
        buf[n + j] = first + j
    return n + links


@jit_callee
def _torus_scan(ps, ip, dir_port, r, d, buf):
    wrap = ip[IP_WRAP] == 1
    base = ps[r]
    n = 0
    length = 0
    for dim in range(ip[IP_NDIM]):
        k = ip[IP_DIMS + dim]
        cr, cd = torus_coord(ip, dir_port, r, dim), torus_coord(ip, dir_port, d, dim)
        if cr == cd:
            continue
        links = ip[IP_LINKS + dim]
        if wrap:
            plus = cd - cr + (k if cd < cr else 0)  # (cd - cr) mod k
            minus = k - plus
            length += min(plus, minus)
            if plus <= minus:
                n = _put_links(buf, n, base + dir_port[r, 2 * dim], links)
            if minus <= plus:
                n = _put_links(buf, n, base + dir_port[r, 2 * dim + 1], links)
        else:
            length += abs(cd - cr)
            n = _put_links(buf, n, base + dir_port[r, 2 * dim + (0 if cd > cr else 1)], links)
    return n, length


# ---------------------------------------------------------------- HyperX (fastnet/build/hyperx.py)
@jit_inline
def hx_trunk(ps, ip, coords, r, t, dim):
    """(first port, trunk links) of the links from r toward t's coordinate in dimension `dim` (which differs).
    `coords`: the routers' coordinates (Routes.alg of a HyperX): computed, (r // stride) % S costs two integer
    divisions by values known only at run time, a dozen at each hop of a 3-D HyperX."""
    base = ps[r] + ip[IP_P]
    for e in range(dim):
        base += (ip[IP_DIMS + e] - 1) * ip[IP_LINKS + e]
    cr, ct = coords[r, dim], coords[t, dim]
    return base + (ct if ct < cr else ct - 1) * ip[IP_LINKS + dim], ip[IP_LINKS + dim]


@jit_inline
def hx_first_dim(ip, coords, r, t):
    """The lowest dimension in which routers r and t differ (dimension order), -1 if r == t."""
    for dim in range(ip[IP_NDIM]):
        if coords[r, dim] != coords[t, dim]:
            return dim
    return -1


@jit_inline
def hx_last_dim(ip, coords, r, t):
    """The highest dimension in which routers r and t differ (the reverse dimension order), -1 if r == t."""
    for j in range(ip[IP_NDIM]):
        dim = ip[IP_NDIM] - 1 - j
        if coords[r, dim] != coords[t, dim]:
            return dim
    return -1


@jit_callee
def _hx_scan(ps, ip, coords, r, d, buf):
    """Every trunk link of every dimension in which r and d differ; length = the number of such dimensions."""
    base = ps[r] + ip[IP_P]
    n = 0
    length = 0
    for dim in range(ip[IP_NDIM]):
        S, T = ip[IP_DIMS + dim], ip[IP_LINKS + dim]
        cr, cd = coords[r, dim], coords[d, dim]
        if cr != cd:
            length += 1
            n = _put_links(buf, n, base + (cd if cd < cr else cd - 1) * T, T)
        base += (S - 1) * T
    return n, length


# ---------------------------------------------------------------- fat tree (fastnet/build/fattree.py)
@jit_callee
def _ft_scan(ps, ip, r, d, buf):
    k, levels, S = ip[IP_K], ip[IP_N], ip[IP_FT_S]
    level, w = r // S, r % S
    wd = d % S  # d is a leaf (level 0)
    base = ps[r]
    if level == levels - 1:  # a root reaches every leaf: down along the leaf's top digit (radix m in an m-port tree)
        buf[0] = base + wd // k ** (level - 1)
        return 1, level
    span = k**level
    if w // span == wd // span:  # d is below: go down along digit level-1
        buf[0] = base + (wd // (span // k)) % k
        return 1, level
    top = level + 1  # the lowest level of common ancestors (at most the roots')
    while top < levels - 1 and w // k**top != wd // k**top:
        top += 1
    for j in range(k):
        buf[j] = base + k + j
    return k, (top - level) + top


# ---------------------------------------------------------------- dispatch
# `scan` (build/routing.py minimal_scan): SCAN_TABLE or the topology kind. The cycle loop passes it as a constant,
# so numba prunes the other topologies' scans before compiling them (kernels/_jit.py).
@jit_inline
def algebraic_scan(ps, port, ip, alg, r, d, buf, scan):
    if scan == K_DRAGONFLY:
        return _df_scan(ps, port, ip, r, d, buf)
    if scan == K_SLIMFLY:
        return _sf_scan(ps, ip, alg, r, d, buf)
    if scan == K_TORUS or scan == K_MESH:
        return _torus_scan(ps, ip, alg, r, d, buf)
    if scan == K_HYPERX:
        return _hx_scan(ps, ip, alg, r, d, buf)
    if scan == K_FATTREE:
        return _ft_scan(ps, ip, r, d, buf)
    no_implementation(scan)
    raise ValueError("no minimal-port scan for this topology kind")


@jit_inline
def min_ports(ps, port, dist, ip, alg, r, d, buf, scan):
    if scan == SCAN_TABLE:
        return table_min_ports(ps, port, dist, r, d, buf)
    return algebraic_scan(ps, port, ip, alg, r, d, buf, scan)[0]


@jit_inline
def min_ports_len(ps, port, dist, ip, alg, r, d, buf, scan):
    """min_ports and the minimal path length in one scan."""
    if scan == SCAN_TABLE:
        return table_min_ports(ps, port, dist, r, d, buf), int(dist[r, d])
    return algebraic_scan(ps, port, ip, alg, r, d, buf, scan)


@jit_inline
def distance(ps, port, dist, ip, alg, r, d, buf, scan):
    if r == d:
        return 0
    if scan == SCAN_TABLE:
        return int(dist[r, d])
    return algebraic_scan(ps, port, ip, alg, r, d, buf, scan)[1]


@jit_inline
def scan_of(ip):
    """The `scan` of a Routes.ip, read at run time (for callers that are not specialised on it)."""
    return SCAN_TABLE if ip[IP_MODE] == TABLE else ip[IP_KIND]
