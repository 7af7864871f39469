"""Routing algorithms: the route stage decides each head packet's output port and VC class at each router.

`route(...)` dispatches on the routing algorithm (`prm.routing`, its code in fastnet/registry.py ROUTINGS):

- min       a uniformly random port among the minimal ones (minimal.py); with `min_path` = fixed, one fixed
            shortest path per router pair, the one BookSim2's anynet takes (fixed_min_port).
- val       Valiant: a random intermediate (dragonfly: a group, as in the dragonfly literature and FOGSim; fat tree:
            a top switch; HyperX: random coordinates where source and destination differ; else a router other
            than source and destination), minimal to it, then minimal to the destination (dimension order in
            each phase on a torus, mesh or HyperX).
- ugal_l    at the source router, minimal unless q_min*H_min > penalty * q_val*H_val + threshold for the best of
            `indirect` random Valiant candidates; q is the occupancy of the first output port (phits reserved in
            the VCs behind it), H the path length. With indirect = n_I and penalty = c_SF this is seed 004's
            Slim Fly UGAL (§2.2.3).
            On a dragonfly, `ugal_queue` = vc / vc_h reads instead the VCs of the class the path's first hop
            would use (Kim et al. 2008 UGAL-L_VC; vc_h only where both paths leave by the same port,
            UGAL-L_VC_H), which tells the paths apart only if minimal packets have VC classes of their own
            (`ugal_vcs` = booksim or separate, see vc_class).
- ugal_g    the same decision on an estimated delay: q summed over every output port along each path (global
            knowledge) plus one packet time per hop.
- dor       dimension order on a torus (dateline VCs), mesh or HyperX (one hop per dimension, one VC class); of
            parallel links (torus `links`, HyperX `trunking`) the least occupied (least_occupied).
- adaptive  minimal adaptive on torus/mesh: any minimal direction on the adaptive VCs, the one with most room;
            when none has room, the dimension-order escape channel with dateline VCs (Duato). A packet that
            took an escape VC stays on the escape network.
- updown    fat tree: down when the destination is below, else up by `up_port` (mlid: the source's digit, as
            Lin et al.'s multiple-LID routing; dmodk: the destination's digit; random: per packet; adaptive:
            least occupied; random_path: one pseudo-random path per flow). See ft_fixed_up.
- ksp       source routing over the k shortest simple paths within `hop_limit` (seed 001), enumerated in
            (length, port order); each packet picks one at random or by least-occupied first hop.

On a dragonfly with 2-D groups (build/dragonfly.py `group_shape`) every algorithm moves inside a group in dimension
order: along the row, then along the column (kernels/minimal.py df_step), which keeps the VC classes by global hop
deadlock-free with up to two local hops a class.

The VC class of each hop follows `prm.vc_policy` (build/vcs.py documents the schemes). Route state travels in
the packet: PK_PHASE (0: to the intermediate / undecided, 1: to the destination, 2: on the escape network),
PK_INTER (intermediate router, dragonfly group, fat-tree top switch, or ksp path index), PK_VCC (torus DOR
state; ugal_l's xy_yx order on a HyperX).
"""

from __future__ import annotations

import numpy as np

from ..build.network import GLOBAL, NODE_PORT, NODE_ROUTER, NODE, P_CLASS, P_PEER_PORT, P_PEER_ROUTER, P_ROUTER
from ..build.routing import (
    IP_A, IP_BUNDLE, IP_DIMS, IP_EXPRESS, IP_FT_ROOTS, IP_FT_S, IP_G, IP_H, IP_K, IP_KIND, IP_LINKS, IP_N, IP_NDIM,
    IP_STRIDES, IP_WRAP, SCAN_TABLE, UNREACHABLE,
)
from ..build.kinds import K_DRAGONFLY, K_FATTREE, K_HYPERX, K_MESH, K_TORUS
from ..build.vcs import VCP_DATELINE, VCP_DRAGONFLY, VCP_ESCAPE, VCP_HOP
from ..registry import (
    R_ADAPTIVE, R_ADAPTIVE_XY_YX, R_DOR, R_DOR_EXPRESS, R_KSP, R_MIN, R_UGAL_G, R_UGAL_L, R_UPDOWN, R_VAL, R_XY_YX,
    UP_ADAPTIVE, UP_DMODK, UP_MLID, UP_RANDOM_PATH, UQ_PORT, UQ_VC, UQ_VC_H, UV_BOOKSIM, UV_SHARED,
)
from ._jit import jit, jit_callee, jit_inline, jit_stage, no_implementation
from .minimal import (
    df_first_link, df_global_port, df_group, df_ldist, df_link, df_place, df_step, distance,
    hx_first_dim, hx_last_dim, hx_trunk, min_ports, min_ports_len, torus_coord,
)
from .rng import below
from .state import (
    PK_CLS, PK_DST, PK_GHOPS, PK_HOPS, PK_INTER, PK_OUT, PK_PHASE, PK_SIZE, PK_SRC, PK_VCC, PT_HELD, PT_WAIT, VC_CAP,
    VC_FREE,
)

TO_INTER, TO_DEST, ESCAPED = 0, 1, 2  # PK_PHASE values


@jit_inline
def occupancy(port, pt, o):
    """Congestion of output o as UGAL and adaptive choices read it: phits of head packets here waiting for o
    (the output queue of an output-buffered router) plus phits reserved in the VCs behind o (credits in use)."""
    if port[o, P_CLASS] == NODE:
        return pt[o, PT_WAIT]
    return pt[o, PT_WAIT] + pt[port[o, P_PEER_PORT], PT_HELD]


@jit_inline
def class_occupancy(port, vc, vcr, V, pt, o, cls):
    """UGAL-L_VC's congestion of output o for a packet of VC class `cls`: the output queue here (as in
    `occupancy`) plus the phits reserved in the VCs of that class behind o."""
    if port[o, P_CLASS] == NODE:
        return pt[o, PT_WAIT]
    first, n = vcr[port[o, P_CLASS], cls, 0], vcr[port[o, P_CLASS], cls, 1]
    base = port[o, P_PEER_PORT] * V + first
    q = pt[o, PT_WAIT]
    for v in range(base, base + n):
        q += vc[v, VC_CAP] - vc[v, VC_FREE]
    return q


@jit_inline
def room(port, vc, vcr, V, o, cls):
    """Most free phits among the VCs of class `cls` behind output o."""
    first, n = vcr[port[o, P_CLASS], cls, 0], vcr[port[o, P_CLASS], cls, 1]
    base = port[o, P_PEER_PORT] * V + first
    best = 0
    for v in range(base, base + n):
        best = max(best, vc[v, VC_FREE])
    return best


# ---------------------------------------------------------------- dragonfly groups (build/dragonfly.py)
@jit_callee
def df_to_group(ps, port, ip, rng, r, Gt):
    """Toward group Gt (!= r's group) over one of the global links that reach it, in dimension order inside the
    group; one of the links fewest local hops away. Returns (first port, hops to reach the group, router where
    the packet lands). Called again at each router, which keeps dimension order: after a row hop toward links 2 hops
    away the nearest are 1 hop away, down the new column; after any other local hop the packet is at a link."""
    a, h, g, b = ip[IP_A], ip[IP_H], ip[IP_G], ip[IP_BUNDLE]
    G, i = df_place(ip, r)
    off = df_first_link(ip, G, Gt)
    best_len, first, land, seen = 99, -1, -1, 0
    for l in range(off, a * h // b, g - 1):
        for k in range(l * b, l * b + b):
            ri = df_link(ip, k)[0]
            gport = df_global_port(ps, ip, G, k)
            if port[gport, P_PEER_ROUTER] < 0:  # failed (fastnet/faults): (-1, 99, -1) when none is left
                continue
            length = 1 + df_ldist(ip, i, ri)
            if length < best_len:
                best_len, seen = length, 0
            if length == best_len:  # reservoir sample among the shortest
                seen += 1
                if below(rng, r, seen) == 0:
                    first = gport if ri == i else df_step(ps[r], ip, i, ri)
                    land = port[gport, P_PEER_ROUTER]
    return first, best_len, land


@jit_inline
def df_local_cost(ps, port, ip, pt, r, t):
    """(occupancy summed along the dimension-order path from r to router t of its group, hops)."""
    q, hops = 0, 0
    while r != t:
        o = df_step(ps[r], ip, df_place(ip, r)[1], df_place(ip, t)[1])
        q += occupancy(port, pt, o)
        r = port[o, P_PEER_ROUTER]
        hops += 1
    return q, hops


@jit_callee
def df_min_cost(ps, port, ip, pt, r, d):
    """UGAL-G on a dragonfly: (occupancy summed along the minimal path of least total, its length) from the
    group arithmetic in one pass (local, global, local hops), instead of a minimal-port scan at every router."""
    a, h, g, b = ip[IP_A], ip[IP_H], ip[IP_G], ip[IP_BUNDLE]
    G, Gd = df_group(ip, r), df_group(ip, d)
    if G == Gd:
        return df_local_cost(ps, port, ip, pt, r, d)
    off = df_first_link(ip, G, Gd)
    best_q, best_len = 1 << 62, 99
    for l in range(off, a * h // b, g - 1):
        for k in range(l * b, l * b + b):
            gport = df_global_port(ps, ip, G, k)
            if port[gport, P_PEER_ROUTER] < 0:  # failed: (1 << 62, 99) when none is left
                continue
            q_src, n_src = df_local_cost(ps, port, ip, pt, r, G * a + df_link(ip, k)[0])
            q_dst, n_dst = df_local_cost(ps, port, ip, pt, port[gport, P_PEER_ROUTER], d)
            q = occupancy(port, pt, gport) + q_src + q_dst
            length = 1 + n_src + n_dst
            if length < best_len or (length == best_len and q < best_q):
                best_q, best_len = q, length
    return best_q, best_len


@jit_callee
def df_linked(ps, port, ip, G, Gt):
    """Whether a live global link joins group G to group Gt (fastnet/faults); a group needs none to itself (a
    Valiant group that is the destination's, as on a dragonfly of two groups)."""
    if G == Gt:
        return True
    a, h, g, b = ip[IP_A], ip[IP_H], ip[IP_G], ip[IP_BUNDLE]
    for l in range(df_first_link(ip, G, Gt), a * h // b, g - 1):
        for k in range(l * b, l * b + b):
            if port[df_global_port(ps, ip, G, k), P_PEER_ROUTER] >= 0:
                return True
    return False


@jit_callee
def df_detour(ps, port, ip, rng, r, Gd):
    """A Valiant group for a packet at router r whose way to group Gd is cut (fastnet/faults): a group with live
    global links from r's group and to Gd, the first such from a random one; -1 if there is none."""
    g, G = ip[IP_G], df_group(ip, r)
    start = below(rng, r, g)
    for j in range(g):
        x = (start + j) % g
        if x != G and x != Gd and df_linked(ps, port, ip, G, x) and df_linked(ps, port, ip, x, Gd):
            return x
    return -1


# ---------------------------------------------------------------- parallel links
@jit_inline
def least_occupied(port, pt, rng, r, first, n):
    """One of the n parallel ports first .. first + n - 1 (one direction of a torus dimension, a HyperX trunk):
    the least occupied (`occupancy`, which counts the heads routed to it earlier in this cycle too, so packets
    routed together spread), ties at random. Parallel links lead to the same router, so the choice changes
    neither the path nor its VC class. With one link no random number is drawn."""
    if n == 1:
        return first
    best, best_q, ties = first, occupancy(port, pt, first), 1
    for o in range(first + 1, first + n):
        q = occupancy(port, pt, o)
        if q < best_q:
            best, best_q, ties = o, q, 1
        elif q == best_q:
            ties += 1
            if below(rng, r, ties) == 0:  # reservoir sample among the least occupied
                best = o
    return best


# ---------------------------------------------------------------- torus / mesh dimension order
@jit_inline
def ring_arc_live(ps, port, ip, dir_port, r, dim, d, ct):
    """Whether every link from r along dimension `dim` in direction d up to coordinate ct is up (fastnet/faults:
    a failed link has no peer router; its parallel links fail with it)."""
    x = r
    while torus_coord(ip, dir_port, x, dim) != ct:
        x = port[ps[x] + dir_port[x, 2 * dim + d], P_PEER_ROUTER]
        if x < 0:
            return False
    return True


@jit
def dor_step(ps, port, pt, ip, dir_port, pk, rng, r, t, h, faults, descending):
    """Dimension-order step from r toward router t, lowest dimension first (highest first if `descending`: the YX
    order of xy_yx). Returns (port, dateline partition); PK_VCC keeps the
    direction and partition chosen on entering a dimension (a packet crossing the wrap-around link of a ring
    uses partition 1 for the whole dimension, which breaks the ring's cycle). Of a direction's parallel links
    it takes the least occupied (least_occupied): any of them keeps the dateline argument, which is about
    positions on the ring, not about which wire joins two of them.

    With failures (`faults`) the packet takes the direction whose arc to the target coordinate is all up, and
    turns round if the link ahead fails under it; (-1, 0) if neither arc is up. A ring with a failed link is a
    line, whose channels cannot wait on each other in a cycle whatever the direction or partition."""
    wrap = ip[IP_WRAP] == 1
    for j in range(ip[IP_NDIM]):
        dim = ip[IP_NDIM] - 1 - j if descending else j
        k = ip[IP_DIMS + dim]
        cr, ct = torus_coord(ip, dir_port, r, dim), torus_coord(ip, dir_port, t, dim)
        if cr == ct:
            continue
        state = pk[h, PK_VCC]
        if state >= 0 and state // 4 == dim:
            d, part = (state // 2) % 2, state % 2
        else:
            if wrap:
                plus = ct - cr + (k if ct < cr else 0)  # (ct - cr) mod k
                d = 0 if 2 * plus < k else (1 if 2 * plus > k else below(rng, r, 2))
                part = 1 if (d == 0 and ct < cr) or (d == 1 and ct > cr) else 0
            else:
                d, part = (0 if ct > cr else 1), 0
            pk[h, PK_VCC] = dim * 4 + d * 2 + part
        if faults and not ring_arc_live(ps, port, ip, dir_port, r, dim, d, ct):
            d = 1 - d
            if not wrap or not ring_arc_live(ps, port, ip, dir_port, r, dim, d, ct):
                return -1, 0
            part = 1 if (d == 0 and ct < cr) or (d == 1 and ct > cr) else 0
            pk[h, PK_VCC] = dim * 4 + d * 2 + part
        return least_occupied(port, pt, rng, r, ps[r] + dir_port[r, 2 * dim + d], ip[IP_LINKS + dim]), part
    return -1, 0


# ---------------------------------------------------------------- HyperX dimension order (build/hyperx.py)
@jit_inline
def hx_dor_step(ps, port, pt, ip, coords, rng, r, t, descending):
    """One hop in the lowest dimension in which r and t differ (the highest if `descending`: xy_yx's YX order),
    over the least occupied of its trunk links. Each dimension is fully connected, so a dimension takes one hop
    and a path changes dimensions in increasing order: no channel waits on a channel of its own or a lower
    dimension, and one VC class is deadlock-free (per order, for xy_yx)."""
    first, links = hx_trunk(ps, ip, coords, r, t, hx_last_dim(ip, coords, r, t) if descending else
                            hx_first_dim(ip, coords, r, t))
    return least_occupied(port, pt, rng, r, first, links)


@jit_inline
def express_port(ps, ip, r, t):
    """dor_express on a k x k mesh with express channels (build/torus.py): the express port r takes toward router
    t, else -1. BookSim2's cmesh_xy: moving in x by more than one router along the bottom (top) row, the channel
    of the row's -y (+y) edge; moving in y by more than one along the left (right) column, the -x (+x) edge's.
    Each runs k/2 routers along the edge, wrapping: taken only where it lands closer to t (for k = 4, always)."""
    k = ip[IP_DIMS]
    h = k // 2
    x, y, tx, ty = r % k, r // k, t % k, t // k
    edge = -1  # 0 +x, 1 -x, 2 +y, 3 -y: the edge of the router whose missing mesh port is the express channel
    if x != tx:
        if abs(tx - x) > 1 and abs(tx - (x + h) % k) < abs(tx - x):
            edge = 3 if y == 0 else (2 if y == k - 1 else -1)
    elif abs(ty - y) > 1 and abs(ty - (y + h) % k) < abs(ty - y):
        edge = 1 if x == 0 else (0 if x == k - 1 else -1)
    if edge < 0:
        return -1
    on = (x == k - 1, x == 0, y == k - 1, y == 0)  # the router's express ports, last, in this order of edges
    after = 0
    for e in range(edge + 1, 4):
        after += on[e]
    return ps[r + 1] - 1 - after


@jit_inline
def order_first_port(ps, ip, alg, r, t, descending):
    """xy_yx: the first port (of its parallel links) of the dimension-order path from r to router t != r, lowest
    dimension first or (descending) highest first, on a mesh or a HyperX. `alg`: the routes' table
    (build/routing.py), a mesh's ports by direction and its routers' coordinates, a HyperX's coordinates."""
    if ip[IP_KIND] == K_HYPERX:
        return hx_trunk(ps, ip, alg, r, t, hx_last_dim(ip, alg, r, t) if descending else
                        hx_first_dim(ip, alg, r, t))[0]
    for j in range(ip[IP_NDIM]):
        dim = ip[IP_NDIM] - 1 - j if descending else j
        cr, ct = torus_coord(ip, alg, r, dim), torus_coord(ip, alg, t, dim)
        if cr != ct:
            return ps[r] + alg[r, 2 * dim + (0 if ct > cr else 1)]
    return -1


@jit_inline
def xy_yx_order(ps, port, pt, ip, dir_port, rng, routing, r, t):
    """The dimension order of a packet leaving its source router r for router t (PK_INTER): 0 lowest dimension
    first (XY), 1 highest first (YX); at random (xy_yx), or (adaptive_xy_yx) the order whose first port has fewer
    phits held in the VCs behind it (BookSim2's GetUsedCredit), ties at random."""
    if routing == R_ADAPTIVE_XY_YX:
        q0 = pt[port[order_first_port(ps, ip, dir_port, r, t, False), P_PEER_PORT], PT_HELD]
        q1 = pt[port[order_first_port(ps, ip, dir_port, r, t, True), P_PEER_PORT], PT_HELD]
        if q0 != q1:
            return 0 if q0 < q1 else 1
    return below(rng, r, 2)


# ---------------------------------------------------------------- fat tree (build/fattree.py)
@jit
def ft_up_or_down(ps, ip, r, leaf):
    """(-1, level) if `leaf` is not below r, else (down port, level)."""
    k, S = ip[IP_K], ip[IP_FT_S]
    level, w = r // S, r % S
    if level == ip[IP_N] - 1:  # a root: every leaf is below; its top digit (radix m in an m-port tree) is the port
        return ps[r] + leaf // k ** (level - 1), level
    span = k**level
    if w // span != leaf // span:
        return -1, level
    return ps[r] + (leaf // (span // k)) % k, level


@jit
def ft_fixed_up(ip, up_port, level, src_node, dst_node):
    """The up port (0..k-1) a deterministic up_port scheme takes at `level`.

    mlid (Lin et al.'s MLID, seed 003 §VI): the source picks the destination LID BaseLID(d) + rank, rank = its
    own digits below the common prefix, and switches forward by that LID; going up from level l it leaves by up
    port = digit l of the source (Lin's p_{n-1-l}), so the k nodes of a leaf leave it by different links and each
    source of a subtree reaches its own top switch. dmodk: the same digit of the destination (D-mod-k), so each
    destination is reached through its own top switch. random_path: a pseudo-random port per (source,
    destination, level), the same for every packet of a flow: what an InfiniBand subnet manager that assigns each
    flow a random path gives (IB forwards by destination LID, so a flow cannot spray its packets)."""
    if up_port == UP_RANDOM_PATH:
        return flow_hash(src_node, dst_node, level) % ip[IP_K]
    node = src_node if up_port == UP_MLID else dst_node
    return (node // ip[IP_K] ** level) % ip[IP_K]


@jit_inline
def flow_hash(a, b, c):
    """A fixed pseudo-random number of (a, b, c) (splitmix64's finaliser): random_path's per-flow choice."""
    x = np.uint64(a) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(b) * np.uint64(0xBF58476D1CE4E5B9) ^ np.uint64(c)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.int64((x ^ (x >> np.uint64(31))) >> np.uint64(1))


@jit_callee
def ft_up_port(ps, port, vc, pt, ip, prm, rng, r, level, src_node, dst_node):
    k = ip[IP_K]
    first = ps[r] + k
    if prm.up_port == UP_MLID or prm.up_port == UP_DMODK or prm.up_port == UP_RANDOM_PATH:
        return first + ft_fixed_up(ip, prm.up_port, level, src_node, dst_node)
    if prm.up_port == UP_ADAPTIVE:
        best, best_q = first, 1 << 62
        for j in range(k):
            q = occupancy(port, pt, first + j)
            if q < best_q:
                best, best_q = first + j, q
        return best
    return first + below(rng, r, k)


@jit_callee
def ft_live_up(ps, port, pt, alg, ip, prm, o, r, d):
    """With failures (fastnet/faults): the up port to take instead of up port o, whose link or parent may have no
    live up*/down* way to leaf d. alg[x, leaf] bit 0 says that switch x has one (faults/plan.py updown_reach). The
    first good port from o on (o itself if it is), or with adaptive up ports the least occupied good one; -1 if
    none."""
    k = ip[IP_K]
    first = ps[r] + k
    best, best_q = -1, 1 << 62
    for j in range(k):
        x = first + (o - first + j) % k
        parent = port[x, P_PEER_ROUTER]
        if parent < 0 or (alg[parent, d] & 1) == 0:
            continue
        if prm.up_port != UP_ADAPTIVE:
            return x
        q = occupancy(port, pt, x)
        if q < best_q:
            best, best_q = x, q
    return best


# ---------------------------------------------------------------- k shortest paths (seed 001)
@jit
def ksp_walk(ps, port, dist, s, d, limit, want, hop, stack_r, stack_p):
    """Enumerate simple paths s -> d of length dist[s, d] .. limit in (length, port order). Returns the port at
    position `hop` of path number `want`, or, with want < 0, the number of paths found (at most -want); path
    first hops go to stack_p[...] as they are found only for the caller's use via `hop` = 0."""
    count = 0
    for L in range(dist[s, d], limit + 1):
        depth = 0
        stack_r[0] = s
        stack_p[0] = ps[s]
        while depth >= 0:
            u = stack_r[depth]
            if depth == L:
                if u == d:
                    if count == want:
                        return stack_p[hop] - 1
                    count += 1
                    if want < 0 and count == -want:
                        return count
                depth -= 1
                continue
            found = -1
            for p in range(stack_p[depth], ps[u + 1]):
                v = port[p, P_PEER_ROUTER]
                if v < 0 or dist[v, d] > L - depth - 1 or (v == d and depth + 1 < L):
                    continue
                on_path = False
                for j in range(depth + 1):
                    on_path |= stack_r[j] == v
                if not on_path:
                    found = p
                    break
            if found < 0:
                depth -= 1
                continue
            stack_p[depth] = found + 1
            depth += 1
            stack_r[depth] = port[found, P_PEER_ROUTER]
            stack_p[depth] = ps[stack_r[depth]]
    return count if want < 0 else -1


# ---------------------------------------------------------------- UGAL
@jit_inline
def path_cost(ps, port, dist, ip, alg, pt, buf, r, t, global_q, scan, yx):
    """(congestion, hops) toward router t: the first minimal port's occupancy (ugal_l), or the sum along a
    minimal path following the least occupied minimal port at each router (ugal_g). On a HyperX, along the
    dimension-order path the packet will take (its least occupied trunk link at each hop), highest dimension
    first if `yx` (ugal_l's order xy_yx)."""
    q = 0
    hops = 0
    if scan == K_HYPERX:
        while r != t:
            first, links = hx_trunk(ps, ip, alg, r, t, hx_last_dim(ip, alg, r, t) if yx else
                                    hx_first_dim(ip, alg, r, t))
            best, best_q = first, occupancy(port, pt, first)
            for o in range(first + 1, first + links):
                qo = occupancy(port, pt, o)
                if qo < best_q:
                    best, best_q = o, qo
            q += best_q
            if not global_q:
                return q, distance(ps, port, dist, ip, alg, r, t, buf, scan)
            r = port[best, P_PEER_ROUTER]
            hops += 1
        return q, hops
    while r != t:
        n, length = min_ports_len(ps, port, dist, ip, alg, r, t, buf, scan)
        best, best_q = buf[0], 1 << 62
        for j in range(n):
            qj = occupancy(port, pt, buf[j])
            if qj < best_q:
                best, best_q = buf[j], qj
        q += best_q
        if not global_q:
            return q, length
        r = port[best, P_PEER_ROUTER]
        hops += 1
    return q, hops


@jit_inline
def random_intermediate(ip, alg, rng, n_routers, r, d, any_router):
    """A Valiant intermediate: a dragonfly group other than the source's and destination's, a fat-tree top
    switch, on a HyperX a random coordinate in each dimension where r and d differ (the others kept: BookSim2's
    flatfly find_ran_intm; the path stays within twice the minimal hops, and a draw equal to r or d is the
    minimal path), or a router other than source and destination. With any_router (routing.intermediate = "any",
    not on a dragonfly or fat tree), any router, r and d included (BookSim2's valiant_flatfly)."""
    kind = ip[IP_KIND]
    if any_router:
        return below(rng, r, n_routers)
    if kind == K_HYPERX:
        x = r
        for dim in range(ip[IP_NDIM]):
            cr = alg[r, dim]
            if cr != alg[d, dim]:
                x += (below(rng, r, ip[IP_DIMS + dim]) - cr) * ip[IP_STRIDES + dim]
        return x
    if kind == K_DRAGONFLY:
        n_groups = ip[IP_G]
        G, Gd = df_group(ip, r), df_group(ip, d)
        if n_groups < 3:  # no third group: minimal between the two, the other group within one
            return 1 - G if n_groups == 2 and G == Gd else Gd
        x = below(rng, r, n_groups - 2 if G != Gd else n_groups - 1)
        lo, hi = min(G, Gd), max(G, Gd)
        x += x >= lo
        if G != Gd:
            x += x >= hi
        return x
    if kind == K_FATTREE:  # a top switch
        return (ip[IP_N] - 1) * ip[IP_FT_S] + below(rng, r, ip[IP_FT_ROOTS])
    if n_routers < 3:
        return d
    x = below(rng, r, n_routers - 2 if r != d else n_routers - 1)
    lo, hi = min(r, d), max(r, d)
    x += x >= lo
    if r != d:
        x += x >= hi
    return x


@jit_inline
def valiant_live(ps, port, dist, ip, r, inter, d, scan):
    """Whether both phases of a Valiant path through `inter` have a live route (fastnet/faults): on a dragonfly a
    live global link into and out of group `inter`, with a table a finite distance to it and from it."""
    if ip[IP_KIND] == K_DRAGONFLY:
        G, Gd = df_group(ip, r), df_group(ip, d)
        return df_linked(ps, port, ip, G, inter) and df_linked(ps, port, ip, inter, Gd)
    if scan == SCAN_TABLE:
        return dist[r, inter] != UNREACHABLE and dist[inter, d] != UNREACHABLE
    return True


@jit_inline
def reached(ip, r, inter, router):
    """Whether router r is the Valiant intermediate: on a dragonfly a group, or a router when `router`
    (routing.intermediate = "router")."""
    if ip[IP_KIND] == K_DRAGONFLY and not router:
        return df_group(ip, r) == inter
    return r == inter


@jit_inline
def inter_group(ip, inter, router):
    """The dragonfly group of a Valiant intermediate (a group, or a router when `router`)."""
    return df_group(ip, inter) if router else inter


@jit_inline
def ugal_cost(q, hops, size, global_q, by_hops):
    """UGAL-L: first-hop occupancy times path length (Kim et al.), or alone (`by_hops` false: routing.ugal_hops);
    UGAL-G: occupancy summed along the path plus the zero-load serialisation of each hop, both in phits (an estimate
    of the delay)."""
    if global_q:
        return q + hops * size
    return q * hops if by_hops else q


@jit_inline
def df_first_leg_rest(ps, port, ip, rng, pt, first, land, Gi, inter, router, global_q):
    """A dragonfly Valiant candidate's first leg after its first hop `first`: (occupancy to add, hops to add, the
    router its second leg starts from). UGAL-G adds the local hops left to the global link; the leg ends where
    the packet lands in group Gi, or goes on to the intermediate router (routing.intermediate = "router")."""
    q = 0
    gateway = port[first, P_PEER_ROUTER]
    if global_q and gateway != land:
        o = df_to_group(ps, port, ip, rng, gateway, Gi)[0]
        q += occupancy(port, pt, o)
        if port[o, P_CLASS] != GLOBAL:  # the second local hop of a 2-D group
            q += occupancy(port, pt, df_to_group(ps, port, ip, rng, port[o, P_PEER_ROUTER], Gi)[0])
    if not router:
        return q, 0, land
    q_in, h_in = df_local_cost(ps, port, ip, pt, land, inter)
    return (q + q_in if global_q else q), h_in, inter


@jit_inline
def ugal_decide(ps, port, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, n_routers, r, d, h, scan):
    """At the source router: stay minimal (PK_PHASE = TO_DEST) or go through the best Valiant candidate."""
    global_q = prm.routing == R_UGAL_G
    size = pk[h, PK_SIZE]
    dragonfly_g = global_q and ip[IP_KIND] == K_DRAGONFLY
    uq = prm.ugal_queue if not global_q and ip[IP_KIND] == K_DRAGONFLY else UQ_PORT
    V = prm.vcs
    first_min = -1
    cut = False
    yx = False
    if prm.ugal_xy_yx:  # BookSim2's ugal_xyyx_flatfly: XY or YX at random, for both paths compared and both phases
        pk[h, PK_VCC] = below(rng, r, 2)
        yx = pk[h, PK_VCC] == 1
    if prm.faults and ip[IP_KIND] == K_DRAGONFLY:
        G, Gd = df_group(ip, r), df_group(ip, d)
        cut = G != Gd and not df_linked(ps, port, ip, G, Gd)
    if cut:  # the minimal path has failed: infinitely loaded
        q_min, h_min = 1 << 40, 1
    elif dragonfly_g:
        q_min, h_min = df_min_cost(ps, port, ip, pt, r, d)
    elif uq != UQ_PORT:
        n, h_min = min_ports_len(ps, port, dist, ip, alg, r, d, buf, scan)
        q_min = 1 << 62
        for j in range(n):
            qj = occupancy(port, pt, buf[j])
            if qj < q_min:
                first_min, q_min = buf[j], qj
        pk[h, PK_PHASE] = TO_DEST  # the class the first hop of the minimal path would use
        cls_min = vc_class(ip, prm, pk, h, 0, port[first_min, P_CLASS] == GLOBAL)
        pk[h, PK_PHASE] = TO_INTER
        if uq == UQ_VC:
            q_min = class_occupancy(port, vc, vcr, V, pt, first_min, cls_min)
    else:
        q_min, h_min = path_cost(ps, port, dist, ip, alg, pt, buf, r, d, global_q, scan, yx)
    cost_min = ugal_cost(q_min, h_min, size, global_q, prm.ugal_hops)
    if cut:
        cost_min = 1 << 60
    best, best_gain = -1, 0.0
    router = prm.inter_router
    for _ in range(prm.indirect):
        inter = random_intermediate(ip, alg, rng, n_routers, r, d, router)
        Gi = inter_group(ip, inter, router)  # (inter itself but for an intermediate router of a dragonfly)
        if (ip[IP_KIND] == K_DRAGONFLY and Gi == df_group(ip, r)) or reached(ip, r, inter, router) or (
                prm.faults and not valiant_live(ps, port, dist, ip, r, Gi, d, scan)):
            continue  # the minimal path (an intermediate router in the source's group), or a failed one
        if ip[IP_KIND] == K_DRAGONFLY:  # to the intermediate group (and router), then minimal on
            first, hops, land = df_to_group(ps, port, ip, rng, r, Gi)
            q = occupancy(port, pt, first)
            c_min = cost_min
            if uq != UQ_PORT:
                cls_val = vc_class(ip, prm, pk, h, 0, port[first, P_CLASS] == GLOBAL)
            if uq == UQ_VC or (uq == UQ_VC_H and first == first_min):
                q = class_occupancy(port, vc, vcr, V, pt, first, cls_val)
                if uq == UQ_VC_H:
                    c_min = ugal_cost(class_occupancy(port, vc, vcr, V, pt, first_min, cls_min), h_min, size,
                                      global_q, prm.ugal_hops)
            q_rest, h_rest, start = df_first_leg_rest(ps, port, ip, rng, pt, first, land, Gi, inter, router, global_q)
            q += q_rest
            hops += h_rest
        else:
            q, hops = path_cost(ps, port, dist, ip, alg, pt, buf, r, inter, global_q, scan, yx)
            start = inter
            c_min = cost_min
        if dragonfly_g:
            q2, h2 = df_min_cost(ps, port, ip, pt, start, d)
            q += q2
        elif global_q:
            q2, h2 = path_cost(ps, port, dist, ip, alg, pt, buf, start, d, True, scan, yx)
            q += q2
        else:
            h2 = distance(ps, port, dist, ip, alg, start, d, buf, scan)
        gain = c_min - (prm.penalty * ugal_cost(q, hops + h2, size, global_q, prm.ugal_hops) + prm.threshold)
        if best < 0 or gain > best_gain:
            best, best_gain = inter, gain
    if best >= 0 and best_gain > 0:
        pk[h, PK_INTER] = best
        pk[h, PK_PHASE] = TO_INTER
    else:
        pk[h, PK_PHASE] = TO_DEST


# ---------------------------------------------------------------- the route stage
@jit_inline
def vc_class(ip, prm, pk, h, part, glob):
    """VC class of the hop about to be taken (build/vcs.py); `glob`: the hop is on a global link.

    UGAL on a dragonfly may move minimally routed packets (no intermediate) off Valiant's classes (Params.ugal_vcs):
    booksim puts them on the classes of Valiant's second phase (local 1, global 1, local 2, as BookSim2's
    ugal_dragonflynew); separate gives their local hop before the global one a class of its own (3), then global
    0 and local 2. Both keep every path's classes increasing in the order L0 < L3 < G0 < L1 < G1 < L2."""
    policy = prm.vc_policy
    if policy == VCP_HOP:
        return pk[h, PK_HOPS]
    if policy == VCP_DRAGONFLY:  # global hops already taken (seed 000 Table IV: 2/1 VCs for MIN, 3/2 for VAL)
        g = pk[h, PK_GHOPS]
        if prm.ugal_vcs == UV_BOOKSIM and pk[h, PK_PHASE] == TO_INTER:  # BookSim2: the whole way to the intermediate
            return 0  # on VC 0 (its hops inside an intermediate router's group too)
        if prm.ugal_vcs != UV_SHARED and pk[h, PK_INTER] < 0 and pk[h, PK_PHASE] == TO_DEST and (
                prm.routing == R_UGAL_L or prm.routing == R_UGAL_G):
            if prm.ugal_vcs == UV_BOOKSIM:  # BookSim2: minimal packets on the classes of Valiant's second phase
                return g + 1
            if g == 0:  # a class of their own before the global hop
                return 0 if glob else 3
            return 2
        return g
    if policy == VCP_DATELINE:  # dateline partition; Valiant phases (xy_yx's two orders) use separate partitions
        if prm.routing == R_DOR:
            phase = 0
        elif prm.routing == R_XY_YX or prm.routing == R_ADAPTIVE_XY_YX:
            phase = pk[h, PK_INTER]
        else:
            phase = pk[h, PK_PHASE]
            if prm.ugal_xy_yx and prm.routing == R_UGAL_L and pk[h, PK_VCC] == 1:  # YX: the upper half
                phase += 2
        return phase * (2 if ip[IP_WRAP] == 1 else 1) + part
    if policy == VCP_ESCAPE:
        return part
    return 0


@jit_inline
def route(routing, scan, ps, port, node, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, buf2, r, h):
    """Set PK_OUT and PK_CLS of head packet h at router r. `routing` (= prm.routing) and `scan` (minimal.py) are
    constants of the cycle loop (engine/loop.py cycle_loop): every branch that calls an algorithm's helpers compares
    `routing` with that algorithm's code directly, so the helpers of the others are pruned before they are
    inlined (_jit._PruneThenInline), and a code no branch takes does not compile (_jit.no_implementation)."""
    dn = pk[h, PK_DST]
    d = node[dn, NODE_ROUTER]
    if prm.faults and scan == SCAN_TABLE and routing != R_UPDOWN and dist[r, d] == UNREACHABLE:  # (a failed
        pk[h, PK_OUT] = -1  # router is unreachable even from itself): no route, dropped (cycle.drop_head)
        return
    if prm.faults and routing == R_UPDOWN and (alg[r, d] & 1) == 0:  # no live up*/down* way to leaf d
        pk[h, PK_OUT] = -1
        return
    if routing == R_VAL or routing == R_UGAL_L or routing == R_UGAL_G:  # two phases, through an intermediate
        valiant_phase(routing, scan, ps, port, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, r, d, h)
    elif routing == R_XY_YX or routing == R_ADAPTIVE_XY_YX:  # the order, chosen at the source
        if pk[h, PK_INTER] < 0 and r != d:
            pk[h, PK_INTER] = xy_yx_order(ps, port, pt, ip, alg, rng, routing, r, d)
    elif not (routing == R_MIN or routing == R_DOR or routing == R_ADAPTIVE or routing == R_UPDOWN
              or routing == R_KSP or routing == R_DOR_EXPRESS):
        no_implementation(routing)
        raise ValueError("no route stage for this routing code")
    valiant = routing == R_VAL or routing == R_UGAL_L or routing == R_UGAL_G
    to_inter = valiant and pk[h, PK_PHASE] == TO_INTER
    target = pk[h, PK_INTER] if to_inter else d
    if r == d and not to_inter:
        pk[h, PK_OUT] = node[dn, NODE_PORT]
        pk[h, PK_CLS] = 0
        return
    out, part = next_port(routing, scan, ps, port, node, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, buf2, r, d,
                          dn, target, to_inter, h)
    if out == ADAPTIVE_TAKEN:  # minimal adaptive found room: PK_OUT and PK_CLS are set
        return
    if prm.faults and prm.vc_policy == VCP_HOP and pk[h, PK_HOPS] >= vcr.shape[1]:
        out = -1  # a detour longer than the hop-indexed VC classes (a route recomputed on its way)
    pk[h, PK_OUT] = out
    if out >= 0:
        pk[h, PK_CLS] = vc_class(ip, prm, pk, h, part, port[out, P_CLASS] == GLOBAL)


ADAPTIVE_TAKEN = -2  # next_port: the adaptive class was taken, the packet's output is set


@jit_inline
def valiant_phase(routing, scan, ps, port, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, r, d, h):
    """Val and UGAL: at the source, choose the intermediate (Val: at random, drawn again while a phase of the path
    has failed; UGAL: or none, minimal); on reaching it, turn to the destination."""
    n_routers = len(ps) - 1
    if pk[h, PK_PHASE] == TO_INTER and pk[h, PK_INTER] < 0:  # at the source: choose the route
        if r == d:
            pk[h, PK_PHASE] = TO_DEST
        elif routing == R_VAL:
            router = prm.inter_router
            pk[h, PK_INTER] = random_intermediate(ip, alg, rng, n_routers, r, d, prm.val_any or router)
            if prm.faults:  # draw again while a phase of the path has failed; then minimal, or a detour
                tries = 0
                while not valiant_live(ps, port, dist, ip, r, inter_group(ip, pk[h, PK_INTER], router), d,
                                       scan) and tries < 8:
                    pk[h, PK_INTER] = random_intermediate(ip, alg, rng, n_routers, r, d, prm.val_any or router)
                    tries += 1
                if tries == 8:
                    pk[h, PK_INTER] = -1
                    pk[h, PK_PHASE] = TO_DEST
            if router and df_group(ip, pk[h, PK_INTER]) == df_group(ip, r):  # in the source's group: minimal
                pk[h, PK_INTER] = -1
                pk[h, PK_PHASE] = TO_DEST
        elif routing == R_UGAL_L or routing == R_UGAL_G:
            ugal_decide(ps, port, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, n_routers, r, d, h, scan)
    if pk[h, PK_PHASE] == TO_INTER and (reached(ip, r, pk[h, PK_INTER], prm.inter_router)
                                        or (prm.val_any and r == d)):
        pk[h, PK_PHASE] = TO_DEST
        if not prm.ugal_xy_yx:  # (PK_VCC holds ugal_l's xy_yx order for both phases)
            pk[h, PK_VCC] = -1  # a new dimension-order pass starts here


@jit_inline
def next_port(routing, scan, ps, port, node, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, buf2, r, d, dn, target,
              to_inter, h):
    """(output port, dateline partition) of head h at r != its destination: by the topology's own way for this
    routing (k shortest paths, up*/down*, dimension order, a dragonfly's way to a group), else a minimal port."""
    kind = ip[IP_KIND]
    part = 0
    out = -1
    if routing == R_KSP:
        out = ksp_port(ps, port, node, dist, pt, prm, pk, rng, buf, buf2, r, d, h)
    elif kind == K_FATTREE and (routing == R_UPDOWN or routing == R_VAL or routing == R_UGAL_L
                                or routing == R_UGAL_G):
        out = tree_port(ps, port, vc, pt, ip, alg, prm, pk, rng, r, d, dn, target, to_inter, h)
    elif (kind == K_TORUS or kind == K_MESH) and (routing == R_DOR or routing == R_ADAPTIVE or routing == R_VAL
                                                  or routing == R_UGAL_L or routing == R_UGAL_G or routing == R_XY_YX
                                                  or routing == R_ADAPTIVE_XY_YX or routing == R_DOR_EXPRESS):
        if routing == R_ADAPTIVE and pk[h, PK_PHASE] != ESCAPED:
            if adaptive_port(ps, port, dist, ip, alg, vcr, vc, prm, pk, buf, r, d, h, scan):
                return ADAPTIVE_TAKEN, 0
        yx = (routing == R_XY_YX or routing == R_ADAPTIVE_XY_YX) and pk[h, PK_INTER] == 1
        out, part = dor_step(ps, port, pt, ip, alg, pk, rng, r, target, h, prm.faults, yx)
        if routing == R_DOR_EXPRESS and ip[IP_EXPRESS] == 1:
            e = express_port(ps, ip, r, target)
            if e >= 0:
                out = e
    elif scan == K_HYPERX and (routing == R_DOR or routing == R_VAL or routing == R_UGAL_L or routing == R_UGAL_G
                               or routing == R_XY_YX or routing == R_ADAPTIVE_XY_YX):
        # dor, the dimension-order phases of val and ugal, xy_yx's order (registry.py `ordered`)
        yx = ((routing == R_XY_YX or routing == R_ADAPTIVE_XY_YX) and pk[h, PK_INTER] == 1) or (
            routing == R_UGAL_L and prm.ugal_xy_yx and pk[h, PK_VCC] == 1)
        out = hx_dor_step(ps, port, pt, ip, alg, rng, r, target, yx)
    elif kind == K_DRAGONFLY and (routing == R_VAL or routing == R_UGAL_L or routing == R_UGAL_G) and to_inter and not (
            prm.inter_router and df_group(ip, r) == df_group(ip, target)):  # (an intermediate in r's group: minimal)
        out, _, _ = df_to_group(ps, port, ip, rng, r, inter_group(ip, target, prm.inter_router))
        if out < 0:  # its link to the intermediate group failed on the way
            out = df_reroute(ps, port, ip, pk, rng, r, d, h)
    else:
        n = min_ports(ps, port, dist, ip, alg, r, target, buf, scan)
        if n == 0:  # failures cut every minimal path
            if kind == K_DRAGONFLY and (routing == R_VAL or routing == R_UGAL_L or routing == R_UGAL_G):
                out = df_reroute(ps, port, ip, pk, rng, r, d, h)
        elif n == 1:
            out = buf[0]
        elif routing == R_MIN and prm.fixed_min:
            out = fixed_min_port(ps, port, dist, r, target, buf, n)
        else:
            out = buf[below(rng, r, n)]
    return out, part


@jit_inline
def ksp_port(ps, port, node, dist, pt, prm, pk, rng, buf, buf2, r, d, h):
    """k shortest paths: the packet's path, chosen at its source (at random, or by least-occupied first hop), and
    its port at this hop."""
    s = node[pk[h, PK_SRC], NODE_ROUTER]
    if pk[h, PK_INTER] < 0:  # choose the packet's path at its source
        n = ksp_walk(ps, port, dist, s, d, prm.hop_limit, -prm.paths, 0, buf, buf2)
        choice = 0
        if prm.adaptive_choice:
            best_q = 1 << 62
            for j in range(n):
                first = ksp_walk(ps, port, dist, s, d, prm.hop_limit, j, 0, buf, buf2)
                q = occupancy(port, pt, first)
                if q < best_q:
                    choice, best_q = j, q
        elif n > 1:
            choice = below(rng, r, n)
        pk[h, PK_INTER] = choice
    return ksp_walk(ps, port, dist, s, d, prm.hop_limit, pk[h, PK_INTER], pk[h, PK_HOPS], buf, buf2)


@jit_inline
def tree_port(ps, port, vc, pt, ip, alg, prm, pk, rng, r, d, dn, target, to_inter, h):
    """Fat tree: up along the unique path to the chosen top switch (Valiant's phase), else down when d is below,
    else up by routing.up_port; with failures, down if a live way down is left (then for good), else up toward
    one: up*/down*."""
    if to_inter:  # up along the unique path to the chosen top switch: its digit at this level
        k, S = ip[IP_K], ip[IP_FT_S]
        return ps[r] + k + ((target % S) // k ** (r // S)) % k
    out, level = ft_up_or_down(ps, ip, r, d)
    if prm.faults:
        if alg[r, d] & 2:
            pk[h, PK_PHASE] = TO_DEST
        elif pk[h, PK_PHASE] == TO_DEST:
            out = -1  # its way down failed under it: no up hop may follow a down hop
        else:
            out = ft_live_up(ps, port, pt, alg, ip, prm,
                             ft_up_port(ps, port, vc, pt, ip, prm, rng, r, level, pk[h, PK_SRC], dn), r, d)
    elif out < 0:
        out = ft_up_port(ps, port, vc, pt, ip, prm, rng, r, level, pk[h, PK_SRC], dn)
    return out


@jit_inline
def adaptive_port(ps, port, dist, ip, alg, vcr, vc, prm, pk, buf, r, d, h, scan):
    """Minimal adaptive (torus, mesh): the minimal direction whose adaptive VCs have the most room for the whole
    packet (virtual cut-through); True if one was taken (PK_OUT, PK_CLS set), False: the escape channel."""
    out = -1
    n = min_ports(ps, port, dist, ip, alg, r, d, buf, scan)
    best_room = pk[h, PK_SIZE] - 1  # virtual cut-through: the whole packet must fit
    for j in range(n):
        if port[buf[j], P_PEER_ROUTER] < 0:  # failed (an algebraic scan lists it)
            continue
        fits = room(port, vc, vcr, prm.vcs, buf[j], prm.n_escape)
        if fits > best_room:
            out, best_room = buf[j], fits
    if out < 0:
        return False
    pk[h, PK_OUT] = out
    pk[h, PK_CLS] = prm.n_escape  # the adaptive class
    return True


@jit_callee
def df_reroute(ps, port, ip, pk, rng, r, d, h):
    """A dragonfly packet whose next global link failed (fastnet/faults): before its first global hop it turns
    into a Valiant packet through a group both of whose links are up, which keeps its VC classes increasing
    (they count global hops); after it, no class is left for a detour and it is dropped (-1)."""
    if pk[h, PK_GHOPS] > 0:
        return -1
    x = df_detour(ps, port, ip, rng, r, df_group(ip, d))
    if x < 0:
        return -1
    pk[h, PK_INTER] = x
    pk[h, PK_PHASE] = TO_INTER
    return df_to_group(ps, port, ip, rng, r, x)[0]


@jit_inline
def fixed_min_port(ps, port, dist, r, d, buf, n):
    """The minimal port of r toward d that BookSim2's anynet routing takes (src/networks/anynet.cpp AnyNet::route:
    Dijkstra from r over hop counts, routers taken in (distance, id) order, each reached first from, and so
    remembering, its lowest-numbered neighbour one hop closer to r). Walk back from d along those neighbours to
    the one next to r; of the minimal ports buf[:n], the first leading to it. Needs the distance table."""
    x = d
    while dist[r, x] > 1:
        closer = -1
        for q in range(ps[x], ps[x + 1]):
            y = port[q, P_PEER_ROUTER]
            if y >= 0 and dist[r, y] == dist[r, x] - 1 and (closer < 0 or y < closer):
                closer = y
        x = closer
    for j in range(n):
        if port[buf[j], P_PEER_ROUTER] == x:
            return buf[j]
    return buf[0]


@jit_inline
def took_hop(port, prm, pk, h, out, cls):
    """Route state after the hop was granted: global hop count, and the escape network for adaptive."""
    if port[out, P_CLASS] == GLOBAL:
        pk[h, PK_GHOPS] += 1
    if prm.routing == R_ADAPTIVE and cls < prm.n_escape:
        pk[h, PK_PHASE] = ESCAPED


@jit_stage
def route_head(ps, port, node, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, buf2, p, h, routing, scan):
    """Route head packet h of input port p (again, if adaptive), keeping its output's PT_WAIT; False if failures
    left it no route."""
    before = pk[h, PK_OUT]
    route(routing, scan, ps, port, node, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, buf2, port[p, P_ROUTER], h)
    if before >= 0:
        pt[before, PT_WAIT] -= pk[h, PK_SIZE]
    if pk[h, PK_OUT] < 0:  # only with failures (kernels/routing.py route)
        return False
    pt[pk[h, PK_OUT], PT_WAIT] += pk[h, PK_SIZE]
    return True
