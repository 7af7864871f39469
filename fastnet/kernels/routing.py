"""Minimal next-port candidates and router distances, from the table or from each topology's algebra.

`min_ports(topo, rt, r, d, buf)` writes into `buf` the global ids of the ports of router r that start a shortest
path to router d (r != d) and returns how many. `distance(topo, rt, r, d)` is the hop count. Both dispatch on
`rt.mode` and `rt.kind` (integer codes, so the cached kernels stay cached). Port layouts are documented in each
builder module under fastnet/build/.
"""

from __future__ import annotations

from ._jit import jit
from .rng import below
from .state import VCP_DRAGONFLY, VCP_HOP

TABLE = 0
K_DRAGONFLY, K_SLIMFLY, K_TORUS, K_MESH, K_FATTREE = 1, 2, 3, 4, 6


@jit
def table_min_ports(topo, rt, r, d, buf):
    dd = rt.dist[r, d]
    n = 0
    for port in range(topo.router_port_start[r], topo.router_port_start[r + 1]):
        q = topo.port_peer_router[port]
        if q >= 0 and rt.dist[q, d] + 1 == dd:
            buf[n] = port
            n += 1
    return n


# ---------------------------------------------------------------- dragonfly (fastnet/build/dragonfly.py)
@jit
def _df_local_port(base, a, p, i_from, i_to):
    return base + p + (i_to if i_to < i_from else i_to - 1)


@jit
def _df_link_offset(G, Gd, g, palm):
    """Index (mod g-1) of the global links of group G that reach group Gd."""
    if palm:
        return (G - Gd - 1) % g
    return Gd if Gd < G else Gd - 1


@jit
def _df_scan(topo, rt, r, d, buf):
    """Shortest paths over every parallel global link G -> Gd; returns (count, length)."""
    p, a, h, g, palm = rt.ip[0], rt.ip[1], rt.ip[2], rt.ip[3], rt.ip[4]
    base = topo.router_port_start[r]
    G, i = r // a, r % a
    Gd, j = d // a, d % a
    if G == Gd:
        buf[0] = _df_local_port(base, a, p, i, j)
        return 1, 1
    off = _df_link_offset(G, Gd, g, palm)
    best = 99
    n = 0
    for k in range(off, a * h, g - 1):
        ri, c = k // h, k % h
        land_i = topo.port_peer_router[topo.router_port_start[G * a + ri] + p + a - 1 + c] % a
        length = (0 if ri == i else 1) + 1 + (0 if land_i == j else 1)
        port = base + p + a - 1 + c if ri == i else _df_local_port(base, a, p, i, ri)
        if length < best:
            best = length
            n = 0
        if length == best:
            dup = False
            for m in range(n):
                dup |= buf[m] == port
            if not dup:
                buf[n] = port
                n += 1
    return n, best


# ---------------------------------------------------------------- Slim Fly (fastnet/build/slimfly.py)
@jit
def _sf_sub(rt, a, b):
    return rt.gf_add[a, rt.gf_neg[b]]


@jit
def _sf_port_to(rt, s, a, b, s2, a2, b2):
    """Local port index (after the p node ports) from router (s,a,b) to an adjacent (s2,a2,b2); -1 if not adjacent."""
    nx = rt.ip[2]
    if s == s2:
        if a != a2:
            return -1
        j = rt.x_index[_sf_sub(rt, b, b2)] if s == 0 else rt.xp_index[_sf_sub(rt, b, b2)]
        return j
    if s == 0:  # (0, x=a, y=b) ~ (1, m=a2, c=b2) iff y = m x + c
        return nx + a2 if b == rt.gf_add[rt.gf_mul[a2, a], b2] else -1
    return nx + a2 if b2 == rt.gf_add[rt.gf_mul[a, a2], b] else -1


@jit
def _sf_scan(topo, rt, r, d, buf):
    p, q, nx = rt.ip[0], rt.ip[1], rt.ip[2]
    qq = q * q
    base = topo.router_port_start[r] + p
    s, a, b = r // qq, (r % qq) // q, r % q
    s2, a2, b2 = d // qq, (d % qq) // q, d % q
    direct = _sf_port_to(rt, s, a, b, s2, a2, b2)
    if direct >= 0:
        buf[0] = base + direct
        return 1, 1
    n = 0
    if s == s2:
        if a == a2:  # same group, not adjacent: common neighbours inside the group
            gen = rt.x_set if s == 0 else rt.xp_set
            for jj in range(nx):
                mid = _sf_sub(rt, b, gen[jj])
                if _sf_port_to(rt, s, a, mid, s2, a2, b2) >= 0:
                    buf[n] = base + jj
                    n += 1
        else:  # exactly one common neighbour in the other subgraph
            # s = 0: (1, m, c) with m = (y - y')/(x - x'); s = 1: (0, x, y) with x = (c' - c)/(m - m')
            num = _sf_sub(rt, b, b2) if s == 0 else _sf_sub(rt, b2, b)
            t = rt.gf_mul[num, rt.gf_inv[_sf_sub(rt, a, a2)]]
            buf[0] = base + nx + t
            n = 1
    elif s == 0:  # r = (0, x, y), d = (1, m, c)
        mid = rt.gf_add[rt.gf_mul[a2, a], b2]  # (0, x, m x + c) is adjacent to d
        j = rt.x_index[_sf_sub(rt, b, mid)]
        if j >= 0:
            buf[n] = base + j
            n += 1
        c_mid = _sf_sub(rt, b, rt.gf_mul[a2, a])  # (1, m, y - m x) is adjacent to r
        if rt.xp_index[_sf_sub(rt, c_mid, b2)] >= 0:
            buf[n] = base + nx + a2
            n += 1
    else:  # r = (1, m, c), d = (0, x, y)
        c_mid = _sf_sub(rt, b2, rt.gf_mul[a, a2])  # (1, m, y - m x) is adjacent to d
        j = rt.xp_index[_sf_sub(rt, b, c_mid)]
        if j >= 0:
            buf[n] = base + j
            n += 1
        y_mid = rt.gf_add[rt.gf_mul[a, a2], b]  # (0, x, m x + c) is adjacent to r
        if rt.x_index[_sf_sub(rt, y_mid, b2)] >= 0:
            buf[n] = base + nx + a2
            n += 1
    return n, 2


# ---------------------------------------------------------------- torus / mesh (fastnet/build/torus.py)
@jit
def _torus_scan(topo, rt, r, d, buf):
    wrap = rt.ip[2] == 1
    base = topo.router_port_start[r]
    n = 0
    length = 0
    for dim in range(rt.ip[1]):
        k = rt.dims[dim]
        cr = (r // rt.stride[dim]) % k
        cd = (d // rt.stride[dim]) % k
        if cr == cd:
            continue
        if wrap:
            plus = (cd - cr) % k
            minus = k - plus
            length += min(plus, minus)
            if plus <= minus:
                buf[n] = base + rt.dir_port[r, 2 * dim]
                n += 1
            if minus <= plus:
                buf[n] = base + rt.dir_port[r, 2 * dim + 1]
                n += 1
        else:
            length += abs(cd - cr)
            buf[n] = base + rt.dir_port[r, 2 * dim + (0 if cd > cr else 1)]
            n += 1
    return n, length


# ---------------------------------------------------------------- fat tree (fastnet/build/fattree.py)
@jit
def _ft_scan(topo, rt, r, d, buf):
    k, levels = rt.ip[0], rt.ip[1]
    S = k ** (levels - 1)
    level, w = r // S, r % S
    wd = d % S  # d is a leaf (level 0)
    base = topo.router_port_start[r]
    span = k**level
    if w // span == wd // span:  # d is below: go down along digit level-1
        buf[0] = base + (wd // (span // k)) % k
        return 1, level
    top = level + 1
    while w // k**top != wd // k**top:
        top += 1
    for j in range(k):
        buf[j] = base + k + j
    return k, (top - level) + top


# ---------------------------------------------------------------- dispatch
@jit
def algebraic_scan(topo, rt, r, d, buf):
    if rt.kind == K_DRAGONFLY:
        return _df_scan(topo, rt, r, d, buf)
    if rt.kind == K_SLIMFLY:
        return _sf_scan(topo, rt, r, d, buf)
    if rt.kind == K_TORUS or rt.kind == K_MESH:
        return _torus_scan(topo, rt, r, d, buf)
    return _ft_scan(topo, rt, r, d, buf)


@jit
def min_ports(topo, rt, r, d, buf):
    if rt.mode == TABLE:
        return table_min_ports(topo, rt, r, d, buf)
    return algebraic_scan(topo, rt, r, d, buf)[0]


@jit
def distance(topo, rt, r, d, buf):
    if r == d:
        return 0
    if rt.mode == TABLE:
        return int(rt.dist[r, d])
    return algebraic_scan(topo, rt, r, d, buf)[1]


# ---------------------------------------------------------------- the routing stage
@jit
def vc_class(topo, prm, st, h, out):
    """VC class of the hop about to be taken: distance classes unless the routing brings its own scheme."""
    if prm.vc_policy == VCP_HOP:
        return st.pk_hops[h]
    if prm.vc_policy == VCP_DRAGONFLY:  # BookSim2's min_dragonflynew: class 1 from the global hop on
        return 1 if (st.pk_ghops[h] > 0 or topo.port_class[out] == 2) else 0
    return 0


@jit
def route_head(topo, rt, prm, st, r, h):
    """MIN routing: a uniformly random port among those on a shortest path; ejection at the last router."""
    dn = st.pk_dst[h]
    d = topo.node_router[dn]
    if r == d:
        st.pk_out[h] = topo.node_port[dn]
        st.pk_cls[h] = 0
        return
    n = min_ports(topo, rt, r, d, st.buf)
    out = st.buf[0] if n == 1 else st.buf[below(st.rng_router, r, n)]
    st.pk_out[h] = out
    st.pk_cls[h] = vc_class(topo, prm, st, h, out)
