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
def _less(heap, i, j):
    return heap[i, 0] < heap[j, 0] or (heap[i, 0] == heap[j, 0] and heap[i, 1] < heap[j, 1])


@njit
def _push(heap, size, t, seq, kind, p):
    """Add an event (time t, tie broken by seq) to the binary heap of `size` rows; returns the new size."""
    heap[size, 0], heap[size, 1], heap[size, 2], heap[size, 3] = t, seq, kind, p
    i = size
    while i > 0 and _less(heap, i, (i - 1) // 2):
        parent = (i - 1) // 2
        for c in range(4):
            heap[i, c], heap[parent, c] = heap[parent, c], heap[i, c]
        i = parent
    return size + 1


@njit
def _pop(heap, size):
    """The earliest event: (time, kind, packet, new size)."""
    t, kind, p = heap[0, 0], heap[0, 2], heap[0, 3]
    size -= 1
    for c in range(4):
        heap[0, c] = heap[size, c]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _less(heap, c + 1, c):
            c += 1
        if not _less(heap, c, i):
            break
        for x in range(4):
            heap[i, x], heap[c, x] = heap[c, x], heap[i, x]
        i = c
    return t, kind, p, size


# msg[m, M_*]: a message; pkt[p, Q_*]: a packet in flight
M_KIND, M_SRC, M_DST, M_BYTES, M_STEP, M_LEFT = range(6)
Q_MSG, Q_PHITS, Q_ROUTER = range(3)


@njit
def _post(msg, pkt, free, heap, counts, inj_free, node_router, kind, src, dst, nbytes, k, t, header, packet_phits,
          phit_bytes, li, delay):
    """A new message (payload + header; RTS and CTS: the header alone) from rank src at time t: its packets leave
    src's injection link one after the other and reach its router after li + delay. counts: [messages used,
    free packets, heap size, sequence number]."""
    m = counts[0]
    counts[0] += 1
    wire = header if kind == RTS or kind == CTS else nbytes + header
    npk = (wire + packet_phits * phit_bytes - 1) // (packet_phits * phit_bytes)
    msg[m, M_KIND], msg[m, M_SRC], msg[m, M_DST], msg[m, M_BYTES], msg[m, M_STEP], msg[m, M_LEFT] = \
        kind, src, dst, nbytes, k, npk
    rest = (wire + phit_bytes - 1) // phit_bytes
    for _ in range(npk):
        ph = min(packet_phits, rest)
        rest -= ph
        start = max(t, inj_free[src])
        inj_free[src] = start + ph
        if counts[1] == 0:
            raise RuntimeError("schedule model: packet capacity exhausted")
        counts[1] -= 1
        p = free[counts[1]]
        pkt[p, Q_MSG], pkt[p, Q_PHITS], pkt[p, Q_ROUTER] = m, ph, node_router[src]
        counts[2] = _push(heap, counts[2], start + li + delay, counts[3], READY, p)
        counts[3] += 1


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
    msg = np.zeros((3 * len(send_dst) + 16, 6), np.int64)
    pkt = np.zeros((capacity, 3), np.int64)
    free = np.arange(capacity - 1, -1, -1)
    heap = np.zeros((capacity, 4), np.int64)
    counts = np.array([0, capacity, 0, 0], np.int64)
    args = (header, packet_phits, phit_bytes, li, delay)
    buf = np.zeros(512, np.int64)
    rng = np.uint64(seed) | np.uint64(1)
    todo = np.zeros(n + 4, np.int64)  # ranks whose step may have completed (all at first, then at most 2)
    todo[:n] = np.arange(n)
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
                        send_pend[r] += kind == RTS
                        _post(msg, pkt, free, heap, counts, inj_free, node_router, kind, r, send_dst[i],
                              send_bytes[i], k, t, *args)
                    q = early_rts[r * S + k]
                    if q >= 0:  # answer the request that came early: a clear-to-send back to its sender
                        early_rts[r * S + k] = -1
                        _post(msg, pkt, free, heap, counts, inj_free, node_router, CTS, r, msg[q, M_SRC],
                              msg[q, M_BYTES], k, t, *args)
                if recv_pend[r] > 0 or send_pend[r] > 0:
                    break
                step[r] = k + 1
                recv_pend[r] = -1
            if step[r] == S and finish[r] < 0:
                finish[r] = t
        if counts[2] == 0:
            break
        t, kind, p, counts[2] = _pop(heap, counts[2])
        m = pkt[p, Q_MSG]
        u = pkt[p, Q_ROUTER]
        dst = msg[m, M_DST]
        ph = pkt[p, Q_PHITS]
        if kind == READY:
            d = node_router[dst]
            if u == d:  # to the node, over its ejection link
                start = max(t, ej_free[dst])
                ej_free[dst] = start + ph
                counts[2] = _push(heap, counts[2], start + li + ph - 1, counts[3], DELIVERED, p)
            else:
                c = min_ports(ps, port, dist, ip, alg, u, d, buf, scan)
                rng ^= rng << np.uint64(13)
                rng ^= rng >> np.uint64(7)
                rng ^= rng << np.uint64(17)
                o = buf[np.int64(rng % np.uint64(c))]
                start = max(t, link_free[o])
                link_free[o] = start + ph
                pkt[p, Q_ROUTER] = port[o, P_PEER_ROUTER]
                counts[2] = _push(heap, counts[2], start + port[o, P_LATENCY] + delay, counts[3], READY, p)
            counts[3] += 1
            continue
        free[counts[1]] = p
        counts[1] += 1
        msg[m, M_LEFT] -= 1
        if msg[m, M_LEFT] > 0:
            continue
        k, mk, src = msg[m, M_STEP], msg[m, M_KIND], msg[m, M_SRC]
        if mk == EAGER or mk == RTS:
            if step[dst] != k or recv_pend[dst] < 0:  # the receiver is not in that step yet
                if mk == EAGER:
                    early[dst * S + k] += 1
                else:
                    early_rts[dst * S + k] = m
            elif mk == EAGER:
                recv_pend[dst] -= 1
                todo[n_todo] = dst
                n_todo += 1
            else:
                _post(msg, pkt, free, heap, counts, inj_free, node_router, CTS, dst, src, msg[m, M_BYTES], k, t,
                      *args)
        elif mk == CTS:  # at the data's sender: the data goes
            _post(msg, pkt, free, heap, counts, inj_free, node_router, DATA, dst, src, msg[m, M_BYTES], k, t, *args)
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
