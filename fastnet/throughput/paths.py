"""k shortest paths within a hop limit between router pairs, as sequences of output ports (seed 001 §III).

For each (source router, destination router) pair the paths are found level by level: every simple path of
length d (the distance), then d + 1, ... up to `max_hops`, until k are collected. Two ways to pick among the
paths of the level that completes the set:

- `ORDER_RANDOM` (default): uniformly at random (reservoir sampling), so no port numbering is favoured; the
  draw is keyed by (seed, source, destination) alone, so a pair gets the same paths in every pattern.
- `ORDER_PORT`: the first ones in port order, exactly the engine's `ksp` routing (kernels/routing.py
  ksp_walk), so a model can run on the paths a simulation of `routing.algorithm = "ksp"` uses.

Enumeration is a depth-first search that only steps to routers still within reach (BFS distance to the
destination <= hops left). In random order it visits a router's ports from a random offset, and a level that
needs more than `ENUM_CAP` search steps keeps what it found so far (a large cap: it only binds on paths far
longer than the shortest in big, dense graphs).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ..build.network import Network
from ..kernels._jit import jit, jit_alloc, jit_inline, jit_parallel

ENUM_CAP = 200_000
ORDER_RANDOM, ORDER_PORT = 0, 1
ORDERS = {"random": ORDER_RANDOM, "port": ORDER_PORT}


@jit_inline
def _mix(x):
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@jit_inline
def _next(state):
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    return _mix(state[0])


@jit_inline
def _below(state, n):
    return np.int64((_next(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * n)


@jit
def bfs_to(nbr_start, nbr, t, dist, queue):
    """Hop distances from every router to router t (links are bidirectional); returns the eccentricity of t."""
    dist[:] = -1
    dist[t] = 0
    queue[0] = t
    head, tail = 0, 1
    far = 0
    while head < tail:
        u = queue[head]
        head += 1
        for e in range(nbr_start[u], nbr_start[u + 1]):
            v = nbr[e]
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                far = dist[v]
                queue[tail] = v
                tail += 1
    return far


@jit_inline
def _paths_of_length(net_start, port_end, port_peer, dist, s, t, L, need, order, cap, state, stamp, cur, node, tried,
                     off, ports, res):
    """Every simple path of exactly L hops from router s to router t (a depth-first search that steps only to
    routers within reach: dist[v], the distance to t, <= hops left), `need` of them kept in res[:need, :L]: the
    first in port order, or a uniform sample (reservoir) in random order, each router's ports then visited from
    a random offset. Random order stops after `cap` steps. Returns how many paths were seen. Scratch: stamp
    (the routers on the current path are marked `cur`), and at each depth of the path its router (node), the
    ports tried there and their offset, and the port taken (ports)."""
    seen = 0
    depth = 0
    node[0] = s
    stamp[s] = cur
    tried[0] = 0
    deg = port_end[s] - net_start[s]
    off[0] = _below(state, deg) if deg > 0 and order == ORDER_RANDOM else 0
    steps = 0
    while depth >= 0 and (steps < cap or order == ORDER_PORT):
        u = node[depth]
        deg = port_end[u] - net_start[u]
        if tried[depth] == deg:
            stamp[u] = 0
            depth -= 1
            continue
        q = net_start[u] + (off[depth] + tried[depth]) % deg
        tried[depth] += 1
        v = port_peer[q]
        left = L - depth - 1  # hops left after taking q
        if stamp[v] == cur or dist[v] > left:
            continue
        if v == t:
            if left == 0:
                ports[depth] = q
                seen += 1
                if seen <= need:
                    slot = seen - 1
                elif order == ORDER_PORT:
                    break  # the first `need` in port order are kept
                else:
                    slot = _below(state, seen)
                if slot < need:
                    for h in range(L):
                        res[slot, h] = ports[h]
            continue
        if left == 0:
            continue
        steps += 1
        ports[depth] = q
        depth += 1
        node[depth] = v
        stamp[v] = cur
        tried[depth] = 0
        dv = port_end[v] - net_start[v]
        off[depth] = _below(state, dv) if dv > 0 and order == ORDER_RANDOM else 0
    return seen


@jit_alloc
def _ksp_range(net_start, port_end, port_peer, nbr_start, nbr, pair_s, pair_t, k, max_hops, seed, cap, order,
               out_ports, out_len, out_count, lo, hi):
    """Paths for pairs lo..hi-1 (sorted by destination, so each destination's BFS runs once per range): those of
    the shortest length first, then one hop longer, until k are found or the paths reach max_hops."""
    R = len(net_start)
    dist = np.empty(R, dtype=np.int64)
    queue = np.empty(R, dtype=np.int64)
    stamp = np.zeros(R, dtype=np.int64)
    cur = 0
    node = np.empty(max_hops + 1, dtype=np.int64)
    tried = np.empty(max_hops + 1, dtype=np.int64)
    off = np.empty(max_hops + 1, dtype=np.int64)
    ports = np.empty(max_hops, dtype=np.int64)
    res = np.empty((k, max_hops), dtype=np.int64)
    state = np.zeros(1, dtype=np.uint64)
    last_t = -1
    for i in range(lo, hi):
        s, t = pair_s[i], pair_t[i]
        if t != last_t:
            bfs_to(nbr_start, nbr, t, dist, queue)
            last_t = t
        found = 0
        if dist[s] < 0 or dist[s] > max_hops:
            out_count[i] = 0
            continue
        state[0] = _mix(np.uint64(seed) * np.uint64(0x2545F4914F6CDD1D) + np.uint64(s * R + t))
        for L in range(dist[s], max_hops + 1):
            need = k - found
            cur += 1
            seen = _paths_of_length(net_start, port_end, port_peer, dist, s, t, L, need, order, cap, state, stamp,
                                    cur, node, tried, off, ports, res)
            got = min(seen, need)
            for j in range(got):
                for h in range(L):
                    out_ports[i, found + j, h] = res[j, h]
                out_len[i, found + j] = L
            found += got
            if found == k:
                break
        out_count[i] = found


@jit_parallel
def ksp_kernel(net_start, port_end, port_peer, nbr_start, nbr, pair_s, pair_t, k, max_hops, seed, cap, order,
               out_ports, out_len, out_count, bounds):
    """Paths for each pair (pairs sorted by destination), chunk c = pairs bounds[c]..bounds[c+1]-1 on its own
    thread. out_ports[i, j, :out_len[i, j]] are the output ports of pair i's j-th path; out_count[i] <= k paths
    were found within max_hops. Each pair's random draws depend on (seed, s, t) only, so any thread count gives
    the same paths."""
    for c in prange(len(bounds) - 1):
        _ksp_range(net_start, port_end, port_peer, nbr_start, nbr, pair_s, pair_t, k, max_hops, seed, cap, order,
                   out_ports, out_len, out_count, bounds[c], bounds[c + 1])


@jit_parallel
def _eccentricities(nbr_start, nbr, n_chunks):
    R = len(nbr_start) - 1
    ecc = np.zeros(R, dtype=np.int64)
    for c in prange(n_chunks):
        dist = np.empty(R, dtype=np.int64)
        queue = np.empty(R, dtype=np.int64)
        for t in range(c * R // n_chunks, (c + 1) * R // n_chunks):
            ecc[t] = bfs_to(nbr_start, nbr, t, dist, queue)
    return ecc


def _chunks(sorted_t: np.ndarray, n_chunks: int) -> np.ndarray:
    """Chunk bounds over pairs sorted by destination that never split one destination's pairs."""
    n = len(sorted_t)
    cuts = [0]
    for c in range(1, n_chunks):
        i = int(np.searchsorted(sorted_t, sorted_t[min(c * n // n_chunks, n - 1)], side="left"))
        if i > cuts[-1]:
            cuts.append(i)
    cuts.append(n)
    return np.asarray(cuts, dtype=np.int64)


def diameter(net: Network) -> int:
    """Router-graph diameter: from the builder when it knows it, else BFS from every router."""
    d = net.params.get("diameter")
    if d is not None:
        return int(d)
    g = net.graph
    ecc = _eccentricities(g.nbr_start, g.nbr.astype(np.int64), 4 * numba.get_num_threads())
    return int(ecc.max())


def router_paths(net: Network, pair_s: np.ndarray, pair_t: np.ndarray, k: int, max_hops: int,
                 seed: int, order: str = "random") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """k shortest paths (as output-port sequences) for router pairs s != t.

    Returns (ports int64[n, k, max_hops], length int64[n, k], count int64[n]) in the order of the given pairs."""
    pair_s = np.asarray(pair_s, dtype=np.int64)
    pair_t = np.asarray(pair_t, dtype=np.int64)
    path_order, order = order, np.lexsort((pair_s, pair_t))
    n = len(pair_s)
    ports = np.zeros((n, k, max(max_hops, 1)), dtype=np.int64)
    length = np.zeros((n, k), dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    ps = net.topo.router_port_start.astype(np.int64)
    nodes = np.bincount(net.node_router, minlength=net.n_routers).astype(np.int64)
    g = net.graph
    if n:
        bounds = _chunks(pair_t[order], 4 * numba.get_num_threads())
        ports_sorted, len_sorted, cnt_sorted = np.zeros_like(ports), np.zeros_like(length), np.zeros_like(count)
        ksp_kernel(ps[:-1] + nodes, ps[1:], net.port_peer_router.astype(np.int64), g.nbr_start,
                   g.nbr.astype(np.int64), pair_s[order], pair_t[order], k, max_hops, seed, ENUM_CAP,
                   ORDERS[path_order], ports_sorted, len_sorted, cnt_sorted, bounds)
        ports[order], length[order], count[order] = ports_sorted, len_sorted, cnt_sorted
    return ports, length, count
