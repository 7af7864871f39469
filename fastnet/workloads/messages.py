"""The message layer under every closed-loop workload: Send, packetisation, reassembly, Wait bookkeeping.

- `send()` (seed 002's Send) posts a message of S bytes from task src to task dst: it takes a row of the message
  pool and appends it to src's send FIFO. Sends never block; a task's messages leave in the order posted.
- `packetise()` runs in the generate stage. A node whose source queue is empty gets all the packets of its task's
  oldest message, so messages are packetised one at a time as the injection link frees. Memory stays
  proportional to one message per node plus the packets in flight, not to the bytes posted (an A2A of 10 KB
  messages on 32 tasks posts 158,720 packets at cycle 0), and the workload is called only when a queue empties,
  a message completes or a timer expires, not every cycle (engine/generate.py: `workload_due`). A node may get a whole
  message's packets (at most `burst`) in one cycle, so the engine keeps that many free for every task
  (engine/loop.py: `created`).
  A message of S bytes becomes ceil(S / (packet_phits * phit_bytes)) packets; every packet is full
  (packet_phits phits) except the last, which carries ceil(rest / phit_bytes) phits.
- `packet_arrived()` is called from fire_events when a packet's tail reaches its node. The receiver counts the
  packets of each message; when the last one arrives the message id goes to the inbox, which the workload reads
  in the same cycle's generate stage (seed 002's Wait returns, Store's waves close, Graph500 consumes).

Each helper takes the arrays it touches (never the Workload tuple) so that calling it in a loop costs nothing.
"""

from __future__ import annotations

from ..kernels._jit import jit_inline
from ..kernels.pool import fifo_append, list_add, list_remove, new_packet
from ..kernels.state import ND_TAIL, PK_MSG, PK_TAG
from .state import (
    ERR_INBOX, ERR_MSG_POOL, ERR_SELF, MS_BIRTH, MS_BYTES, MS_DST, MS_MADE, MS_NEXT, MS_PACKETS, MS_RECV, MS_SRC,
    MS_AUX, MS_KIND, TK_EXPECT, TK_QHEAD, TK_QTAIL, TK_SPOS, WC_COMPLETED, WC_ERROR, WC_FREE_COUNT, WC_FREE_HEAD,
    WC_MLAT_MAX, WC_MLAT_SUM, WC_N_INBOX, WC_N_SENDERS, WC_POSTED,
)


@jit_inline
def packets_of(nbytes, packet_bytes):
    return (nbytes + packet_bytes - 1) // packet_bytes


@jit_inline
def new_message(msg, wc, src, dst, nbytes, packet_bytes, tag, aux, t):
    """A message row from the pool, filled in (not yet in any FIFO); -1 (and wc[WC_ERROR] set) if the pool is
    exhausted."""
    m = wc[WC_FREE_HEAD]
    if m < 0:
        wc[WC_ERROR] = ERR_MSG_POOL
        return -1
    wc[WC_FREE_HEAD] = msg[m, MS_NEXT]
    wc[WC_FREE_COUNT] -= 1
    msg[m, MS_SRC] = src
    msg[m, MS_DST] = dst
    msg[m, MS_BYTES] = nbytes
    msg[m, MS_PACKETS] = packets_of(nbytes, packet_bytes)
    msg[m, MS_MADE] = 0
    msg[m, MS_RECV] = 0
    msg[m, MS_KIND] = tag
    msg[m, MS_AUX] = aux
    msg[m, MS_BIRTH] = t
    msg[m, MS_NEXT] = -1
    return m


@jit_inline
def send(msg, tk, wc, senders, src, dst, nbytes, packet_bytes, tag, aux, awaited, t):
    """Post a message; returns its id, or -1 (and sets wc[WC_ERROR]) if the pool is exhausted. `awaited`: the
    receiver's Wait counts it (tk[dst, TK_EXPECT])."""
    if src == dst:
        wc[WC_ERROR] = ERR_SELF
        return -1
    m = new_message(msg, wc, src, dst, nbytes, packet_bytes, tag, aux, t)
    if m < 0:
        return -1
    queue_message(msg, tk, wc, senders, m)
    if awaited:
        tk[dst, TK_EXPECT] += 1  # what Wait counts against (Graph500: the count a sender's signal announces)
    return m


@jit_inline
def queue_message(msg, tk, wc, senders, m):
    """Message row m joins its sender's FIFO: it leaves after the sender's earlier messages."""
    src = msg[m, MS_SRC]
    if fifo_append(msg, MS_NEXT, tk, src, TK_QHEAD, TK_QTAIL, m) and tk[src, TK_SPOS] < 0:
        list_add(senders, tk, TK_SPOS, wc, WC_N_SENDERS, src)
    wc[WC_POSTED] += 1


@jit_inline
def packetise(msg, tk, wc, senders, task_node, pk, nd, node_act, ctr, sc, ts, prm, packet_phits, phit_bytes, burst, t):
    """The oldest message of every sending task whose node has an empty source queue becomes packets, at most
    `burst` of them at a time: the next ones follow when the queue empties again, in time for the injection
    link (it is busy for the last packet's phits), while the packet pool holds only `burst` packets per node. A
    node whose queue empties leaves the list of nodes with packets and joins it again at its end, so `burst`
    changes the order in which nodes inject, and under contention which head wins (docs/mpi.md)."""
    packet_bytes = packet_phits * phit_bytes
    i = 0
    while i < wc[WC_N_SENDERS]:
        task = senders[i]
        n = task_node[task]
        if nd[n, ND_TAIL] >= 0:  # the previous packets are still waiting for the injection link
            i += 1
            continue
        m = tk[task, TK_QHEAD]
        dst = task_node[msg[m, MS_DST]]
        first = msg[m, MS_MADE]
        last = min(msg[m, MS_PACKETS], first + burst)
        for k in range(first, last):
            rest = msg[m, MS_BYTES] - k * packet_bytes
            phits = packet_phits if rest >= packet_bytes else (rest + phit_bytes - 1) // phit_bytes
            h = new_packet(pk, nd, node_act, ctr, sc, ts, prm, n, dst, phits, t, not prm.background)
            pk[h, PK_MSG] = m
            pk[h, PK_TAG] = k
        msg[m, MS_MADE] = last
        if last < msg[m, MS_PACKETS]:
            i += 1
            continue
        nxt = msg[m, MS_NEXT]  # the next message (if any) leads the FIFO
        tk[task, TK_QHEAD] = nxt
        if nxt < 0:
            tk[task, TK_QTAIL] = -1
            list_remove(senders, tk, TK_SPOS, wc, WC_N_SENDERS, task)  # the last sender moves into slot i
        else:
            i += 1


@jit_inline
def sending(tk, nd, task_node, task):
    """True while the task has posted messages whose packets have not all entered the network."""
    return tk[task, TK_QHEAD] >= 0 or nd[task_node[task], ND_TAIL] >= 0


@jit_inline
def packet_arrived(msg, wc, inbox, pk, h):
    """Reassembly: count packet h at its message; a complete message goes to the inbox."""
    m = pk[h, PK_MSG]
    msg[m, MS_RECV] += 1
    if msg[m, MS_RECV] == msg[m, MS_PACKETS]:
        i = wc[WC_N_INBOX]
        if i >= len(inbox):
            wc[WC_ERROR] = ERR_INBOX
            return
        inbox[i] = m
        wc[WC_N_INBOX] = i + 1


@jit_inline
def retire(msg, wc, m, t):
    """A completed message has been handled: message-latency statistics, then its row goes back to the pool."""
    lat = t - msg[m, MS_BIRTH]
    wc[WC_MLAT_SUM] += lat
    if lat > wc[WC_MLAT_MAX]:
        wc[WC_MLAT_MAX] = lat
    wc[WC_COMPLETED] += 1
    msg[m, MS_NEXT] = wc[WC_FREE_HEAD]
    wc[WC_FREE_HEAD] = m
    wc[WC_FREE_COUNT] += 1
