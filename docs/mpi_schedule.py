"""The schedule model of docs/mpi.md's collective table: Hockney's cost per message, alpha + bytes x beta, with
the ranks' own timing and the links their messages share.

Plain Hockney sums alpha + the busiest sender's bytes over the steps of an algorithm, as if every rank ran each
step in lockstep and no two messages met on a link. Here every message is costed on its own, as the algorithm
orders it:
- a rank starts step k when its step k-1 is complete (its receives have arrived; a rendezvous send's data too),
  and posts that step's messages then; a message of payload above eager_bytes goes as a request-to-send, a
  clear-to-send answered when the receiver has started that step, then the data (MPICH's protocols, as
  fastnet/mpi/kernel.py);
- a message is its packets (payload + header in whole phits, packet_phits a packet); a packet takes alpha, the
  zero-load latency of docs/model.md, hop by hop: latency_injection, then per router `delay` and the link's
  latency, then latency_injection to the node;
- beta is a phit per cycle per link, and a link carries one packet at a time, in the order packets reach it: a
  packet waits while another crosses it. Links: each node's injection and ejection link and every router port.
- a packet picks each hop as the simulator's minimal routing does (a uniformly random minimal port,
  kernels/minimal.py `min_ports`), from a seeded stream of its own.
What it leaves out: virtual channels, credits and buffer limits, the switch allocator (a link serves whoever
reaches it first), and the simulator's own random draws.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastnet.build.network import P_LATENCY, P_PEER_ROUTER
from fastnet.kernels.minimal import min_ports

EAGER, RTS, CTS, DATA = 0, 1, 2, 3
READY, DELIVERED = 0, 1


@njit
def _push(ht, hs, hk, hp, size, t, seq, kind, p):
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if ht[parent] < t or (ht[parent] == t and hs[parent] < seq):
            break
        ht[i], hs[i], hk[i], hp[i] = ht[parent], hs[parent], hk[parent], hp[parent]
        i = parent
    ht[i], hs[i], hk[i], hp[i] = t, seq, kind, p
    return size + 1


@njit
def _pop(ht, hs, hk, hp, size):
    t, k, p = ht[0], hk[0], hp[0]
    size -= 1
    lt, ls, lk, lp = ht[size], hs[size], hk[size], hp[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and (ht[c + 1] < ht[c] or (ht[c + 1] == ht[c] and hs[c + 1] < hs[c])):
            c += 1
        if lt < ht[c] or (lt == ht[c] and ls < hs[c]):
            break
        ht[i], hs[i], hk[i], hp[i] = ht[c], hs[c], hk[c], hp[c]
        i = c
    ht[i], hs[i], hk[i], hp[i] = lt, ls, lk, lp
    return t, k, p, size


@njit
def _schedule(n_steps, send_off, send_dst, send_bytes, recv_expected, node_router, ps, port, dist, ip, alg, scan,
              delay, li, packet_phits, phit_bytes, header, eager, capacity, seed):
    n = len(node_router)
    S = n_steps
    link_free = np.zeros(len(port), np.int64)
    inj_free = np.zeros(n, np.int64)
    ej_free = np.zeros(n, np.int64)
    step = np.zeros(n, np.int64)
    recv_pend = np.full(n, -1, np.int64)  # -1: the rank has not entered its current step yet
    send_pend = np.zeros(n, np.int64)
    finish = np.full(n, -1, np.int64)
    early = np.zeros(n * S, np.int64)  # eager messages of (rank, step) that arrived before the rank got there
    early_rts = np.full(n * S, -1, np.int64)  # a request-to-send that did
    n_msg = 3 * len(send_dst) + 16
    m_kind = np.zeros(n_msg, np.int64)
    m_src = np.zeros(n_msg, np.int64)
    m_dst = np.zeros(n_msg, np.int64)
    m_bytes = np.zeros(n_msg, np.int64)
    m_step = np.zeros(n_msg, np.int64)
    m_left = np.zeros(n_msg, np.int64)
    p_msg = np.zeros(capacity, np.int64)
    p_phits = np.zeros(capacity, np.int64)
    p_router = np.zeros(capacity, np.int64)
    free = np.arange(capacity - 1, -1, -1)
    n_free = capacity
    ht = np.zeros(capacity, np.int64)
    hs = np.zeros(capacity, np.int64)
    hk = np.zeros(capacity, np.int64)
    hp = np.zeros(capacity, np.int64)
    size = 0
    seq = 0
    used = 0
    buf = np.zeros(512, np.int64)
    rng = np.uint64(seed) | np.uint64(1)
    todo = np.zeros(n + 4, np.int64)  # ranks whose step may have completed (all at first, then at most 2)
    for r in range(n):
        todo[r] = r
    n_todo = n
    t = np.int64(0)
    while True:
        # ranks whose current step is complete go on to the next, posting its messages at time t
        while n_todo > 0:
            n_todo -= 1
            r = todo[n_todo]
            while step[r] < S:
                k = step[r]
                if recv_pend[r] < 0:  # entering step k: post its sends, take what came early
                    recv_pend[r] = recv_expected[r * S + k] - early[r * S + k]
                    for i in range(send_off[r * S + k], send_off[r * S + k + 1]):
                        kind = EAGER if send_bytes[i] <= eager else RTS
                        m = used
                        used += 1
                        m_kind[m], m_src[m], m_dst[m], m_bytes[m], m_step[m] = kind, r, send_dst[i], send_bytes[i], k
                        if kind == RTS:
                            send_pend[r] += 1
                        # post: its packets leave the node's injection link one after the other
                        wire = (header if kind == RTS else send_bytes[i] + header)
                        npk = (wire + packet_phits * phit_bytes - 1) // (packet_phits * phit_bytes)
                        m_left[m] = npk
                        rest = (wire + phit_bytes - 1) // phit_bytes
                        for j in range(npk):
                            ph = min(packet_phits, rest)
                            rest -= ph
                            start = max(t, inj_free[r])
                            inj_free[r] = start + ph
                            if n_free == 0:
                                raise RuntimeError("schedule model: packet capacity exhausted")
                            n_free -= 1
                            p = free[n_free]
                            p_msg[p], p_phits[p], p_router[p] = m, ph, node_router[r]
                            size = _push(ht, hs, hk, hp, size, start + li + delay, seq, READY, p)
                            seq += 1
                    q = early_rts[r * S + k]
                    if q >= 0:  # answer the request that came early: a clear-to-send back to its sender
                        early_rts[r * S + k] = -1
                        m = used
                        used += 1
                        m_kind[m], m_src[m], m_dst[m], m_bytes[m], m_step[m] = CTS, r, m_src[q], m_bytes[q], k
                        m_left[m] = 1
                        start = max(t, inj_free[r])
                        inj_free[r] = start + (header + phit_bytes - 1) // phit_bytes
                        n_free -= 1
                        p = free[n_free]
                        p_msg[p], p_phits[p], p_router[p] = m, (header + phit_bytes - 1) // phit_bytes, node_router[r]
                        size = _push(ht, hs, hk, hp, size, start + li + delay, seq, READY, p)
                        seq += 1
                if recv_pend[r] > 0 or send_pend[r] > 0:
                    break
                step[r] = k + 1
                recv_pend[r] = -1
            if step[r] == S and finish[r] < 0:
                finish[r] = t
        if size == 0:
            break
        t, kind, p, size = _pop(ht, hs, hk, hp, size)
        m = p_msg[p]
        u = p_router[p]
        dst = m_dst[m]
        if kind == READY:
            d = node_router[dst]
            ph = p_phits[p]
            if u == d:  # to the node, over its ejection link
                start = max(t, ej_free[dst])
                ej_free[dst] = start + ph
                size = _push(ht, hs, hk, hp, size, start + li + ph - 1, seq, DELIVERED, p)
                seq += 1
            else:
                c = min_ports(ps, port, dist, ip, alg, u, d, buf, scan)
                rng ^= rng << np.uint64(13)
                rng ^= rng >> np.uint64(7)
                rng ^= rng << np.uint64(17)
                o = buf[np.int64(rng % np.uint64(c))]
                start = max(t, link_free[o])
                link_free[o] = start + ph
                p_router[p] = port[o, P_PEER_ROUTER]
                size = _push(ht, hs, hk, hp, size, start + port[o, P_LATENCY] + delay, seq, READY, p)
                seq += 1
            continue
        free[n_free] = p
        n_free += 1
        m_left[m] -= 1
        if m_left[m] > 0:
            continue
        k, mk, src = m_step[m], m_kind[m], m_src[m]
        if mk == EAGER:
            if step[dst] == k and recv_pend[dst] >= 0:
                recv_pend[dst] -= 1
                todo[n_todo] = dst
                n_todo += 1
            else:
                early[dst * S + k] += 1
        elif mk == RTS:
            if step[dst] == k and recv_pend[dst] >= 0:
                mm = used
                used += 1
                m_kind[mm], m_src[mm], m_dst[mm], m_bytes[mm], m_step[mm] = CTS, dst, src, m_bytes[m], k
                m_left[mm] = 1
                ph = (header + phit_bytes - 1) // phit_bytes
                start = max(t, inj_free[dst])
                inj_free[dst] = start + ph
                n_free -= 1
                q = free[n_free]
                p_msg[q], p_phits[q], p_router[q] = mm, ph, node_router[dst]
                size = _push(ht, hs, hk, hp, size, start + li + delay, seq, READY, q)
                seq += 1
            else:
                early_rts[dst * S + k] = m
        elif mk == CTS:  # at the data's sender: the data goes
            mm = used
            used += 1
            m_kind[mm], m_src[mm], m_dst[mm], m_bytes[mm], m_step[mm] = DATA, dst, src, m_bytes[m], k
            wire = m_bytes[m] + header
            npk = (wire + packet_phits * phit_bytes - 1) // (packet_phits * phit_bytes)
            m_left[mm] = npk
            rest = (wire + phit_bytes - 1) // phit_bytes
            for j in range(npk):
                ph = min(packet_phits, rest)
                rest -= ph
                start = max(t, inj_free[dst])
                inj_free[dst] = start + ph
                n_free -= 1
                q = free[n_free]
                p_msg[q], p_phits[q], p_router[q] = mm, ph, node_router[dst]
                size = _push(ht, hs, hk, hp, size, start + li + delay, seq, READY, q)
                seq += 1
        else:  # DATA: both ends of the transfer are done
            recv_pend[dst] -= 1
            send_pend[src] -= 1
            todo[n_todo] = dst
            n_todo += 1
            todo[n_todo] = src
            n_todo += 1
    return finish


def schedule(net, steps: list[np.ndarray], packet_phits: int, eager: int, seed: int = 1) -> dict:
    """Time of the collective whose steps are `steps` (model_steps: per step an int64[m, 3] of sender, receiver,
    payload), on `net` (gen_mpi.Net), ranks on nodes 0..n-1. Returns the time the last rank finished."""
    n = net.n_nodes
    S = len(steps)
    rows = np.concatenate([np.column_stack([s[:, 0], np.full(len(s), k), s[:, 1], s[:, 2]]) for k, s in
                           enumerate(steps) if len(s)])
    order = np.lexsort((rows[:, 1], rows[:, 0]))
    rows = rows[order]
    send_off = np.zeros(n * S + 1, np.int64)
    np.add.at(send_off, rows[:, 0] * S + rows[:, 1] + 1, 1)
    send_off = np.cumsum(send_off)
    recv_expected = np.zeros(n * S, np.int64)
    np.add.at(recv_expected, rows[:, 2] * S + rows[:, 1], 1)
    ps, port, routes, scan = net._routing
    pk_bytes = packet_phits * net.phit_bytes
    most = int(max((np.sum(-(-(s[:, 2] + net.header) // pk_bytes)) for s in steps if len(s)), default=1))
    finish = _schedule(S, send_off, rows[:, 2].copy(), rows[:, 3].copy(), recv_expected,
                       np.asarray(net.node_router, np.int64), ps, port, routes.dist, routes.ip, routes.alg, scan,
                       net.delay, net.li, packet_phits, net.phit_bytes, net.header, eager, 4 * most + 4 * n + 1024,
                       seed)
    if (finish < 0).any():
        raise RuntimeError("the schedule model left ranks unfinished")
    return {"cycles": float(finish.max())}
