"""The MPI kernel: every rank's program advanced inside the cycle loop's generate stage (one call per cycle in
which a message completed, a computing rank wakes up, or a source queue emptied: engine/generate.py).

`advance_mpi(wl, t)`:
1. messages completed this cycle (the inbox) are delivered by kind:
   - eager data and rendezvous requests-to-send (RTS) of point-to-point calls are *envelopes*: they wait in
     their receiver's queue, in the order their senders posted them, until a receive matches them (`deliver`);
   - a receive matched to an RTS answers with a clear-to-send (CTS); the CTS makes the sender post the data;
     the data completes both requests;
   - collective messages are counted by the step they belong to (`coll_arrived`), or kept until their
     receiver reaches that step;
2. computing ranks whose time is up become ready;
3. ready ranks run their ops until one blocks (`run_rank`).

Matching follows MPI: a receive (source or ANY_SOURCE, tag or ANY_TAG, communicator) takes the first envelope
in its queue that matches it, in post order per sender (non-overtaking), once that envelope has arrived; an
envelope that arrives goes to the first posted receive it is the first match of; with ANY_SOURCE, an arrived
candidate of each sender may match, the earliest arrived first. Eager sends complete when posted (the data is
buffered); a rendezvous send completes when its data has arrived. Every protocol message is a real message on
the network: payload plus `header_bytes`.
"""

from __future__ import annotations

import numpy as np
from numba import typeof, types

from ..kernels._jit import jit, jit_callee, jit_inline, jit_stage
from ..kernels.rng import uniform
from ..kernels.pool import fifo_append, fifo_unlink, hist_bin
from ..kernels.state import NEVER
from ..workloads.messages import new_message, queue_message, retire
from ..workloads.state import (
    MS_BIRTH, MS_BYTES, MS_DST, MS_KIND, MS_NEXT, MS_SRC, TK_FINISH, WC_END, WC_FINISHED, WC_FREE_COUNT,
    WC_N_INBOX, WC_NEXT, WC_TASKS_DONE, WC_WAKE,
)
from .collectives import n_steps, round_plan
from .state import (
    ANY, CO_BCAST, CO_SCATTER, MM_ARRIVED, MM_CALL, MM_COMM, MM_PAYLOAD, MM_QNEXT, MM_READY, MM_RECEIVED, MM_RREQ,
    MM_SENT, MM_SEQ, MM_SREQ, MM_TAG, M_CTS, M_DATA, M_EAGER, M_RTS, NULL_PEER, N_MSG, N_OP, N_RK, N_RQ, N_TL,
    OP_ALG, OP_ARG, OP_BYTES, OP_CALL, OP_CODE, OP_COLL, OP_COMM, OP_COMPUTE, OP_IRECV, OP_LIST, OP_PEER, OP_REQ,
    OP_ROOT, OP_SEQ, OP_TAG, OP_WAIT, Q_DONE, Q_FREE, Q_PENDING, RK_BLOCK_CALL, RK_BLOCK_T, RK_CME, RK_CN,
    RK_COMPUTE_CYC, RK_COP, RK_CRECV, RK_CSEND, RK_CSTART, RK_EARLY, RK_HQHEAD, RK_HQTAIL, RK_PC, RK_PEND, RK_QHEAD,
    RK_QTAIL, RK_RECV_FREE, RK_RHEAD, RK_RTAIL, RK_SEND_FREE, RK_STATE, RK_STEP, RK_WAIT_CYC, RQ_CALL, RQ_COMM,
    RQ_NEXT, RQ_PEER, RQ_RANK, RQ_STATE, RQ_TAG, RQ_WAITED, RS_COLL, RS_COMPUTE, RS_DONE, RS_READY, RS_RUNNING,
    RS_WAIT, TL_CALL, TL_END, TL_RANK, TL_START, WM_BYTES, WM_CLAT_SUM, WM_CONTROL, WM_DLAT_SUM, WM_HEAP, WM_READY,
    WM_STAMP, WM_TIMELINE, WM_TRANSFERS, WM_UNM_SUM,
)


# ---------------------------------------------------------------- ready list and the wake-up heap


@jit_inline
def make_ready(wl, r):
    """A blocked or computing rank can go on: it runs later in this cycle's advance."""
    st = wl.tk[r, RK_STATE]
    if st == RS_WAIT or st == RS_COLL or st == RS_COMPUTE:
        wl.tk[r, RK_STATE] = RS_READY
        wl.ready[wl.wc[WM_READY]] = r
        wl.wc[WM_READY] += 1


@jit_inline
def heap_push(wl, wake, r):
    ht, hr, wc = wl.heap_t, wl.heap_r, wl.wc
    i = wc[WM_HEAP]
    wc[WM_HEAP] = i + 1
    while i > 0:
        parent = (i - 1) // 2
        if ht[parent] < wake or (ht[parent] == wake and hr[parent] < r):
            break
        ht[i] = ht[parent]
        hr[i] = hr[parent]
        i = parent
    ht[i] = wake
    hr[i] = r


@jit_inline
def heap_pop(wl):
    """Remove the earliest wake-up (ties: the lowest entry) and return its entry (`schedule` says what each
    means)."""
    ht, hr, wc = wl.heap_t, wl.heap_r, wl.wc
    top = hr[0]
    n = wc[WM_HEAP] - 1
    wc[WM_HEAP] = n
    wake, r = ht[n], hr[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (ht[c + 1] < ht[c] or (ht[c + 1] == ht[c] and hr[c + 1] < hr[c])):
            c += 1
        if wake < ht[c] or (wake == ht[c] and r < hr[c]):
            break
        ht[i] = ht[c]
        hr[i] = hr[c]
        i = c
    ht[i] = wake
    hr[i] = r
    return top


@jit_inline
def log_interval(wl, r, call, start, end):
    """Rank r computed (call = the compute code) or was blocked in an MPI call from start to end: one row of the
    timeline while it has room (wc[WM_TIMELINE] counts every interval, kept or not)."""
    i = wl.wc[WM_TIMELINE]
    wl.wc[WM_TIMELINE] = i + 1
    if i < len(wl.timeline):
        tl = wl.timeline
        tl[i, TL_RANK] = r
        tl[i, TL_CALL] = call
        tl[i, TL_START] = start
        tl[i, TL_END] = end


# ---------------------------------------------------------------- messages


@jit_inline
def envelope(wl, m, kind, nbytes, comm, mtag, seq, sreq, rreq, call, sent, arrived):
    """MPI's columns of message m, and the transfer counters: eager and rendezvous data carry `nbytes`, an RTS
    or CTS is about them."""
    msg = wl.msg
    msg[m, MM_COMM] = comm
    msg[m, MM_TAG] = mtag
    msg[m, MM_SEQ] = seq
    msg[m, MM_SREQ] = sreq
    msg[m, MM_RREQ] = rreq
    msg[m, MM_QNEXT] = -1
    msg[m, MM_ARRIVED] = arrived
    msg[m, MM_CALL] = call
    msg[m, MM_PAYLOAD] = nbytes
    msg[m, MM_SENT] = sent
    msg[m, MM_RECEIVED] = -1
    if kind == M_EAGER or kind == M_DATA:
        wl.wc[WM_BYTES] += nbytes
        wl.wc[WM_TRANSFERS] += 1
        wl.comm_matrix[msg[m, MS_SRC] // wl.comm_cell, msg[m, MS_DST] // wl.comm_cell] += nbytes
    else:
        wl.wc[WM_CONTROL] += 1


@jit_inline
def schedule(wl, due, entry):
    """Something happens at cycle `due`: entry r, rank r's computation ends; n_tasks + m, message m reaches its
    rank (a memory copy done, or a receive overhead spent); -1 - r, rank r's host hands over its next message."""
    heap_push(wl, due, entry)
    wl.wc[WC_WAKE] = max(wl.wc[WC_WAKE], due)


@jit_inline
def host_ready(wl, src, payload, t):
    """The host model (LogGP): the cycle rank src's host hands over a message of `payload` bytes posted at t.
    Its host starts it when free (RK_SEND_FREE), spends o_s + payload x G on it, and starts the next one no
    sooner than g after this one. All zero: t."""
    tk = wl.tk
    start = max(t, tk[src, RK_SEND_FREE])
    ready = start + wl.o_s + np.int64(payload * wl.G + 0.5)
    tk[src, RK_SEND_FREE] = max(ready, start + wl.g)
    return ready


@jit_inline
def depart(wl, m, t):
    """Message m leaves its sender's host: into its sender's FIFO for the network, or, between two ranks of one
    node, a shared-memory copy that arrives after the memory's latency and its wire bytes at its bandwidth."""
    msg = wl.msg
    if wl.task_node[msg[m, MS_SRC]] == wl.task_node[msg[m, MS_DST]]:
        schedule(wl, t + wl.mem_latency + np.int64(np.ceil(msg[m, MS_BYTES] / wl.mem_bytes_per_cycle)),
                 wl.n_tasks + m)
    else:
        queue_message(msg, wl.tk, wl.wc, wl.senders, m)


@jit_stage
def post(wl, src, dst, kind, nbytes, comm, mtag, seq, sreq, rreq, call, sent, t):
    """Post one protocol message about `nbytes` of data from rank src to rank dst (never src itself:
    local_message does that). Eager and rendezvous data carry the bytes; RTS and CTS only the header. It leaves
    when the sender's host is done with it (host_ready); until then it waits in the host's queue, in post order
    (the heap holds the queue's head as entry -1 - src). Compiled apart (_jit.jit_stage): pass int64s, not
    constants, or numba compiles it once more for each."""
    payload = nbytes if kind == M_EAGER or kind == M_DATA else 0
    wire = max(payload + wl.header_bytes, 1)
    m = new_message(wl.msg, wl.wc, src, dst, wire, wl.packet_phits * wl.phit_bytes, kind, 0, t)
    if m < 0:
        return m
    envelope(wl, m, kind, nbytes, comm, mtag, seq, sreq, rreq, call, sent, -1)
    ready = host_ready(wl, src, payload, t)
    if ready > t:
        wl.msg[m, MM_READY] = ready
        if fifo_append(wl.msg, MS_NEXT, wl.tk, src, RK_HQHEAD, RK_HQTAIL, m):
            schedule(wl, ready, -1 - src)
    else:
        depart(wl, m, t)
    return m


@jit_inline
def hand_over(wl, r, t):
    """Rank r's host hands over the messages of its queue that are ready by t, in post order (several may be
    ready in one cycle); the next one's time goes back on the heap."""
    msg, tk = wl.msg, wl.tk
    m = tk[r, RK_HQHEAD]
    while m >= 0 and msg[m, MM_READY] <= t:
        nxt = msg[m, MS_NEXT]
        tk[r, RK_HQHEAD] = nxt
        if nxt < 0:
            tk[r, RK_HQTAIL] = -1
        depart(wl, m, t)
        m = nxt
    if m >= 0:
        schedule(wl, msg[m, MM_READY], -1 - r)


@jit_stage
def receive(wl, m, t):
    """Message m reached its rank's node (its last packet, or the memory copy): handled now, or with a receive
    overhead, once the rank's host has spent o_r on it (one message at a time: RK_RECV_FREE)."""
    if wl.o_r == 0 or wl.msg[m, MM_RECEIVED] >= 0:
        arrived(wl, m, t)
        return
    r = wl.msg[m, MS_DST]
    due = max(t, wl.tk[r, RK_RECV_FREE]) + wl.o_r
    wl.tk[r, RK_RECV_FREE] = due
    wl.msg[m, MM_RECEIVED] = t
    schedule(wl, due, wl.n_tasks + m)


@jit_inline
def answer(wl, m, kind, rreq, t):
    """The receiver of m sends its sender the next message of the rendezvous (CTS, then data) about the same
    bytes, envelope and requests (`rreq`: the receive a CTS names)."""
    msg = wl.msg
    post(wl, msg[m, MS_DST], msg[m, MS_SRC], np.int64(kind), msg[m, MM_PAYLOAD], msg[m, MM_COMM], msg[m, MM_TAG],
         msg[m, MM_SEQ], msg[m, MM_SREQ], np.int64(rreq), msg[m, MM_CALL], msg[m, MM_SENT], t)


@jit_inline
def local_message(wl, r, payload, comm, mtag, call, t):
    """An eager message to oneself: a memory copy, arrived at once, never on the network."""
    m = new_message(wl.msg, wl.wc, r, r, payload, wl.packet_phits * wl.phit_bytes, M_EAGER, 0, t)
    if m >= 0:
        envelope(wl, m, M_EAGER, payload, comm, mtag, -1, -1, -1, call, t, t)
    return m


@jit_inline
def tally(wc, col, v):
    """One more value of a latency statistic: wc[col] its sum, wc[col + 1] its maximum, wc[col + 2] its count."""
    wc[col] += v
    if v > wc[col + 1]:
        wc[col + 1] = v
    wc[col + 2] += 1


@jit_inline
def data_delivered(wl, m, t):
    """Data message m (eager, or rendezvous data) has its last byte at its receiver: its latency from the send's
    post (the RTS's, for rendezvous data), in the scalars and in the histogram of the call that posted it."""
    lat = t - wl.msg[m, MM_SENT]
    tally(wl.wc, WM_DLAT_SUM, lat)
    wl.msg_hist[wl.msg[m, MM_CALL], hist_bin(lat)] += 1


@jit_inline
def matched(wl, m, t):
    """Envelope m (eager data or RTS) is taken by a receive or a collective step: the time it waited unmatched."""
    tally(wl.wc, WM_UNM_SUM, t - wl.msg[m, MM_ARRIVED])


@jit_inline
def complete_request(wl, q):
    rq = wl.rq
    rq[q, RQ_STATE] = Q_DONE
    if rq[q, RQ_WAITED]:
        r = rq[q, RQ_RANK]
        wl.tk[r, RK_PEND] -= 1
        if wl.tk[r, RK_PEND] == 0:
            make_ready(wl, r)


# ---------------------------------------------------------------- point-to-point matching


@jit_inline
def matches(wl, q, m):
    rq, msg = wl.rq, wl.msg
    return (msg[m, MM_COMM] == rq[q, RQ_COMM] and (rq[q, RQ_PEER] == ANY or rq[q, RQ_PEER] == msg[m, MS_SRC])
            and (rq[q, RQ_TAG] == ANY or rq[q, RQ_TAG] == msg[m, MM_TAG]))


@jit_inline
def first_of_sender(wl, r, q, m):
    """True when no envelope posted to rank r before m by m's sender also matches receive q (non-overtaking)."""
    msg = wl.msg
    x = wl.tk[r, RK_QHEAD]
    while x != m:
        if msg[x, MS_SRC] == msg[m, MS_SRC] and matches(wl, q, x):
            return False
        x = msg[x, MM_QNEXT]
    return True


@jit_inline
def unlink_envelope(wl, r, m):
    """Take envelope m out of rank r's queue (a singly linked FIFO: find the one before it)."""
    prev = -1
    x = wl.tk[r, RK_QHEAD]
    while x != m:
        prev = x
        x = wl.msg[x, MM_QNEXT]
    fifo_unlink(wl.msg, MM_QNEXT, wl.tk, r, RK_QHEAD, RK_QTAIL, m, prev)


@jit_inline
def bind(wl, r, q, m, t):
    """Receive q of rank r takes arrived envelope m: eager data completes it, an RTS is answered by a CTS."""
    unlink_envelope(wl, r, m)
    matched(wl, m, t)
    msg = wl.msg
    if msg[m, MS_KIND] == M_EAGER:
        complete_request(wl, q)
    else:
        answer(wl, m, M_CTS, q, t)
    retire(msg, wl.wc, m, t)


@jit_inline
def take_receive(wl, r, m, t):
    """Arrived envelope m binds the first posted receive of rank r whose first match from m's sender it is."""
    prev = -1
    q = wl.tk[r, RK_RHEAD]
    while q >= 0:
        if matches(wl, q, m) and first_of_sender(wl, r, q, m):
            fifo_unlink(wl.rq, RQ_NEXT, wl.tk, r, RK_RHEAD, RK_RTAIL, q, prev)
            bind(wl, r, q, m, t)
            return True
        prev = q
        q = wl.rq[q, RQ_NEXT]
    return False


@jit_stage
def envelope_arrived(wl, r, m, t):
    """An eager message or RTS reached rank r: the first posted receive whose first match it is takes it. Messages
    of one sender may arrive out of order (adaptive or Valiant routing, slower links); one that came before an
    earlier one of its sender waited behind it (non-overtaking), so once m is taken, the envelopes its sender
    posted after it that have arrived try again, in the order they were sent."""
    msg = wl.msg
    msg[m, MM_ARRIVED] = t
    x = msg[m, MM_QNEXT]  # the queue is in posting order: those after m (taking m frees its record)
    if not take_receive(wl, r, m, t):
        return
    s = msg[m, MS_SRC]
    while x >= 0:
        nxt = msg[x, MM_QNEXT]
        if msg[x, MS_SRC] == s and msg[x, MM_ARRIVED] >= 0:
            take_receive(wl, r, x, t)
        x = nxt


@jit_stage
def post_receive(wl, r, q, t):
    """Receive q of rank r looks for its envelope; it waits in the posted list if that has not arrived."""
    msg, seen = wl.msg, wl.seen
    wl.wc[WM_STAMP] += 1
    stamp = wl.wc[WM_STAMP]
    best = -1
    x = wl.tk[r, RK_QHEAD]
    while x >= 0:
        if matches(wl, q, x):
            s = msg[x, MS_SRC]
            if seen[s] != stamp:  # the first match from this sender: the only one it may take from it
                seen[s] = stamp
                if msg[x, MM_ARRIVED] >= 0 and (best < 0 or msg[x, MM_ARRIVED] < msg[best, MM_ARRIVED]):
                    best = x
                if wl.rq[q, RQ_PEER] != ANY:
                    break
        x = msg[x, MM_QNEXT]
    if best >= 0:
        bind(wl, r, q, best, t)
    else:
        fifo_append(wl.rq, RQ_NEXT, wl.tk, r, RK_RHEAD, RK_RTAIL, q)


# ---------------------------------------------------------------- collectives

COLL_BLOCKED, COLL_DONE, COLL_DEFERRED = 0, 1, 2


@jit_inline
def coll_key_is_now(wl, r, m):
    """Message m belongs to the step rank r has started."""
    tk, msg = wl.tk, wl.msg
    c = tk[r, RK_COP]
    return (c >= 0 and tk[r, RK_CRECV] >= 0 and wl.ops[c, OP_COMM] == msg[m, MM_COMM]
            and wl.ops[c, OP_SEQ] == msg[m, MM_SEQ] and tk[r, RK_STEP] == msg[m, MM_TAG])


@jit_inline
def step_complete(tk, r):
    return tk[r, RK_CRECV] == 0 and tk[r, RK_CSEND] == 0


@jit_inline
def step_progressed(wl, r):
    """A message of rank r's current step arrived: a rank blocked in it goes on if the step is complete."""
    if wl.tk[r, RK_STATE] == RS_COLL and step_complete(wl.tk, r):
        make_ready(wl, r)


@jit_stage
def coll_take(wl, r, m, t):
    """Rank r's current step receives collective message m (eager data, or an RTS it answers)."""
    msg = wl.msg
    matched(wl, m, t)
    if msg[m, MS_KIND] == M_EAGER:
        wl.tk[r, RK_CRECV] -= 1
    else:
        answer(wl, m, M_CTS, -1, t)
    retire(msg, wl.wc, m, t)


@jit_stage
def start_step(wl, r, t):
    """Post rank r's sends of its current collective step and take the messages of that step that came early."""
    tk, ops = wl.tk, wl.ops
    c = tk[r, RK_COP]
    kind, n, me = ops[c, OP_ARG], tk[r, RK_CN], tk[r, RK_CME]
    comm, seq, step = ops[c, OP_COMM], ops[c, OP_SEQ], tk[r, RK_STEP]
    ns, nr = round_plan(kind, ops[c, OP_ALG], me, n, ops[c, OP_ROOT], step, ops[c, OP_BYTES], wl.counts,
                        ops[c, OP_LIST], wl.scratch_peer, wl.scratch_bytes)
    tk[r, RK_CRECV] = nr
    tk[r, RK_CSEND] = 0
    base = wl.comm_off[comm]
    call = ops[c, OP_CALL]
    tag = 0 if kind == CO_BCAST or kind == CO_SCATTER else step  # the step in which the receiver takes it
    for i in range(ns):
        dst = wl.comm_members[base + wl.scratch_peer[i]]
        nbytes = wl.scratch_bytes[i]
        eager = nbytes <= wl.eager_bytes
        post(wl, r, dst, M_EAGER if eager else M_RTS, nbytes, comm, tag, seq, np.int64(-1), np.int64(-1), call,
             t, t)
        if not eager:  # the step waits for its data to arrive
            tk[r, RK_CSEND] += 1
    prev = -1
    m = tk[r, RK_EARLY]
    while m >= 0:
        nxt = wl.msg[m, MM_QNEXT]
        if coll_key_is_now(wl, r, m):
            if prev < 0:
                tk[r, RK_EARLY] = nxt
            else:
                wl.msg[prev, MM_QNEXT] = nxt
            coll_take(wl, r, m, t)
        else:
            prev = m
        m = nxt


@jit_inline
def coll_advance(wl, r, t):
    """Move rank r through the steps of its collective that can complete now (RK_CRECV < 0: the step has not
    started). COLL_DEFERRED: the message pool is too low to post a step; the rank retries next cycle."""
    tk = wl.tk
    c = tk[r, RK_COP]
    steps = n_steps(wl.ops[c, OP_ARG], wl.ops[c, OP_ALG], tk[r, RK_CN])
    while True:
        if tk[r, RK_CRECV] < 0:
            if tk[r, RK_STEP] >= steps:
                return COLL_DONE
            if wl.wc[WC_FREE_COUNT] < wl.msg_headroom:
                return COLL_DEFERRED
            start_step(wl, r, t)
        if not step_complete(tk, r):
            return COLL_BLOCKED
        tk[r, RK_STEP] += 1
        tk[r, RK_CRECV] = -1


@jit_inline
def coll_arrived(wl, r, m, t):
    """A collective message (eager or RTS) reached rank r: taken now if r is in its step, else kept for later."""
    if coll_key_is_now(wl, r, m):
        coll_take(wl, r, m, t)
        step_progressed(wl, r)
    else:
        wl.msg[m, MM_QNEXT] = wl.tk[r, RK_EARLY]
        wl.tk[r, RK_EARLY] = m


@jit_inline
def coll_data_arrived(wl, m, t):
    """Rendezvous data of a collective step: the receiver waits for one message less, the sender for one
    transfer less."""
    msg, tk = wl.msg, wl.tk
    dst, src = msg[m, MS_DST], msg[m, MS_SRC]
    tk[dst, RK_CRECV] -= 1
    step_progressed(wl, dst)
    tk[src, RK_CSEND] -= 1
    step_progressed(wl, src)


# ---------------------------------------------------------------- arrivals


@jit_inline
def arrived(wl, m, t):
    """Message m has fully reached its rank."""
    msg = wl.msg
    kind = msg[m, MS_KIND]
    r = msg[m, MS_DST]
    if kind == M_EAGER or kind == M_DATA:
        data_delivered(wl, m, t)
    else:
        tally(wl.wc, WM_CLAT_SUM, t - msg[m, MS_BIRTH])
    if kind == M_CTS:  # at the sender of the data: send it
        answer(wl, m, M_DATA, msg[m, MM_RREQ], t)
        retire(msg, wl.wc, m, t)
    elif kind == M_DATA:
        if msg[m, MM_SEQ] >= 0:
            coll_data_arrived(wl, m, t)
        else:
            complete_request(wl, msg[m, MM_RREQ])
            complete_request(wl, msg[m, MM_SREQ])
        retire(msg, wl.wc, m, t)
    elif msg[m, MM_SEQ] >= 0:
        msg[m, MM_ARRIVED] = t
        coll_arrived(wl, r, m, t)
    else:
        envelope_arrived(wl, r, m, t)


# ---------------------------------------------------------------- ranks


@jit_inline
def comm_rank(wl, r, comm):
    if comm == 0:
        return r
    for i in range(wl.rc_off[r], wl.rc_off[r + 1]):
        if wl.rc_comm[i] == comm:
            return wl.rc_me[i]
    return -1


@jit_inline
def finish_rank(wl, r, t):
    wl.tk[r, RK_STATE] = RS_DONE
    wl.tk[r, TK_FINISH] = t
    wc = wl.wc
    wc[WC_TASKS_DONE] += 1
    if wc[WC_TASKS_DONE] == wl.n_tasks:
        wc[WC_FINISHED] = 1
        wc[WC_END] = t


@jit_inline
def compute_cycles(wl, r, d):
    """The cycles rank r computes for an op of d cycles: d / its speed (rank_time = 1 / speed), times
    max(0, 1 + compute_noise x z) with z a standard normal from the rank's own stream (Box-Muller), when asked."""
    x = d * wl.rank_time[r]
    if wl.compute_noise > 0.0:
        u1 = 1.0 - uniform(wl.rank_rng, r)  # (0, 1]
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * uniform(wl.rank_rng, r))
        x *= max(0.0, 1.0 + wl.compute_noise * z)
    return np.int64(x + 0.5)


@jit_inline
def end_block(wl, r, t):
    """Rank r goes on after a wait it blocked in at cycle tk[r, RK_BLOCK_T]: the cycles count as time in the call."""
    tk = wl.tk
    blocked(wl, r, tk[r, RK_BLOCK_CALL], tk[r, RK_BLOCK_T], t)
    tk[r, RK_BLOCK_T] = -1


@jit_inline
def blocked(wl, r, call, since, t):
    """Rank r was blocked in `call` from cycle `since` to t: the cycles count as waiting and as time in the call,
    and go on its timeline."""
    d = t - since
    wl.tk[r, RK_WAIT_CYC] += d
    wl.call_time[call] += d
    if d > 0:
        log_interval(wl, r, call, since, t)


@jit_inline
def compute_op(wl, r, pc, t):
    """Rank r's compute op pc: True if it now computes (the heap wakes it), False if the op takes no cycle."""
    tk, ops = wl.tk, wl.ops
    d = ops[pc, OP_ARG]
    if wl.compute_model:
        d = compute_cycles(wl, r, d)
    tk[r, RK_PC] = pc + 1
    if d > 0:
        tk[r, RK_STATE] = RS_COMPUTE
        tk[r, RK_COMPUTE_CYC] += d
        log_interval(wl, r, ops[pc, OP_CALL], t, t + d)
        heap_push(wl, t + d, r)
        wl.wc[WC_WAKE] = max(wl.wc[WC_WAKE], t + d)
        return True
    return False


@jit_inline
def wait_op(wl, r, pc, base, t):
    """Rank r's wait op pc on the requests of its list (slots from `base`, the rank's first request): True if
    some are pending (it blocks until they complete), else they are freed and it goes on (False)."""
    tk, ops, rq = wl.tk, wl.ops, wl.rq
    first, count = ops[pc, OP_LIST], ops[pc, OP_ARG]
    pend = 0
    for i in range(first, first + count):
        q = base + wl.req_list[i]
        if rq[q, RQ_STATE] == Q_PENDING:
            rq[q, RQ_WAITED] = 1
            pend += 1
    if pend > 0:
        tk[r, RK_PEND] = pend
        tk[r, RK_STATE] = RS_WAIT
        tk[r, RK_BLOCK_T] = t
        tk[r, RK_BLOCK_CALL] = ops[pc, OP_CALL]
        return True
    for i in range(first, first + count):
        q = base + wl.req_list[i]
        rq[q, RQ_STATE] = Q_FREE
        rq[q, RQ_WAITED] = 0
    tk[r, RK_PC] = pc + 1
    return False


@jit_inline
def collective_op(wl, r, pc, t):
    """Rank r's collective op pc: entered the first time, then moved through the steps that can complete now.
    COLL_DONE: the rank goes on, its time in the call counted; COLL_BLOCKED: it waits for a step's messages;
    COLL_DEFERRED: the message pool is too low to post a step (it runs again next cycle)."""
    tk, ops = wl.tk, wl.ops
    if tk[r, RK_COP] != pc:  # entering it
        tk[r, RK_COP] = pc
        comm = ops[pc, OP_COMM]
        tk[r, RK_CME] = comm_rank(wl, r, comm)
        tk[r, RK_CN] = wl.comm_size[comm]
        tk[r, RK_STEP] = 0
        tk[r, RK_CRECV] = -1
        tk[r, RK_CSEND] = 0
        tk[r, RK_CSTART] = t
    res = coll_advance(wl, r, t)
    if res == COLL_DEFERRED:
        tk[r, RK_STATE] = RS_READY
        return res
    if res == COLL_BLOCKED:
        tk[r, RK_STATE] = RS_COLL
        return res
    blocked(wl, r, ops[pc, OP_CALL], tk[r, RK_CSTART], t)
    tk[r, RK_COP] = -1
    tk[r, RK_PC] = pc + 1
    return res


@jit_inline
def request_op(wl, r, pc, base, t):
    """Rank r's isend or irecv op pc starts its request (slot `base` + the op's): one with NULL_PEER is complete
    at once; a receive looks for its envelope; a send to itself is a local copy, arrived at once; any other send
    posts its envelope (eager data, complete at once, or a rendezvous RTS), queued at the receiver in post
    order."""
    tk, ops, rq = wl.tk, wl.ops, wl.rq
    q = base + ops[pc, OP_REQ]
    peer, comm, nbytes = ops[pc, OP_PEER], ops[pc, OP_COMM], ops[pc, OP_BYTES]
    rq[q, RQ_STATE] = Q_PENDING
    rq[q, RQ_RANK] = r
    rq[q, RQ_WAITED] = 0
    rq[q, RQ_CALL] = ops[pc, OP_CALL]
    rq[q, RQ_NEXT] = -1
    tk[r, RK_PC] = pc + 1
    if peer == NULL_PEER:
        rq[q, RQ_STATE] = Q_DONE
    elif ops[pc, OP_CODE] == OP_IRECV:
        rq[q, RQ_PEER] = peer
        rq[q, RQ_TAG] = ops[pc, OP_TAG]
        rq[q, RQ_COMM] = comm
        post_receive(wl, r, q, t)
    elif peer == r:
        m = local_message(wl, r, nbytes, comm, ops[pc, OP_TAG], ops[pc, OP_CALL], t)
        data_delivered(wl, m, t)
        rq[q, RQ_STATE] = Q_DONE
        fifo_append(wl.msg, MM_QNEXT, wl.tk, r, RK_QHEAD, RK_QTAIL, m)
        envelope_arrived(wl, r, m, t)
    else:
        eager = nbytes <= wl.eager_bytes
        m = post(wl, r, peer, M_EAGER if eager else M_RTS, nbytes, comm, ops[pc, OP_TAG], np.int64(-1),
                 -1 if eager else q, np.int64(-1), ops[pc, OP_CALL], t, t)
        if eager:
            rq[q, RQ_STATE] = Q_DONE
        fifo_append(wl.msg, MM_QNEXT, wl.tk, peer, RK_QHEAD, RK_QTAIL, m)


@jit_stage
def run_rank(wl, r, t):
    """Run rank r's ops until one blocks (True) or the message pool is too low to post (False: run it again
    next cycle, after the pool has grown)."""
    tk, ops = wl.tk, wl.ops
    if tk[r, RK_BLOCK_T] >= 0:  # it was blocked in a wait
        end_block(wl, r, t)
    tk[r, RK_STATE] = RS_RUNNING
    base = r * wl.max_requests
    while True:
        pc = tk[r, RK_PC]
        if pc >= wl.op_end[r]:
            finish_rank(wl, r, t)
            return True
        code = ops[pc, OP_CODE]
        if code == OP_COMPUTE:
            if compute_op(wl, r, pc, t):
                return True
        elif code == OP_WAIT:
            if wait_op(wl, r, pc, base, t):
                return True
        elif code == OP_COLL:
            res = collective_op(wl, r, pc, t)
            if res != COLL_DONE:
                return res == COLL_BLOCKED
        else:  # OP_ISEND, OP_IRECV
            if wl.wc[WC_FREE_COUNT] < wl.msg_headroom:
                tk[r, RK_STATE] = RS_READY
                return False
            request_op(wl, r, pc, base, t)


@jit_inline
def mpi_rows_known(wl):
    """Whether the MPI records have as many columns as their names say: checked at the top of advance_mpi, it makes
    every row length a constant of the code below (engine/loop.py rows_known says why)."""
    return (wl.ops.shape[1] == N_OP and wl.tk.shape[1] == N_RK and wl.rq.shape[1] == N_RQ
            and wl.msg.shape[1] == N_MSG and wl.timeline.shape[1] == N_TL)


@jit_callee
def advance_mpi(wl, t):
    if not mpi_rows_known(wl):
        raise ValueError("an MPI record array has the wrong number of columns")
    wc = wl.wc
    for i in range(wc[WC_N_INBOX]):
        receive(wl, wl.inbox[i], t)
    wc[WC_N_INBOX] = 0
    while wc[WM_HEAP] > 0 and wl.heap_t[0] <= t:
        x = heap_pop(wl)
        if x < 0:  # a rank's host hands over a message (the host model)
            hand_over(wl, -1 - x, t)
        elif x < wl.n_tasks:  # a rank's computation ends
            make_ready(wl, x)
        else:  # a message has been copied between two ranks of one node, or its receive overhead is spent
            receive(wl, x - wl.n_tasks, t)
    deferred = False
    while wc[WM_READY] > 0:
        wc[WM_READY] -= 1
        r = wl.ready[wc[WM_READY]]
        if not run_rank(wl, r, t):
            wc[WM_READY] += 1  # it stays on top: run it first next cycle
            deferred = True
            break
        wc[WC_WAKE] = max(wc[WC_WAKE], t)
    if deferred:
        wc[WC_NEXT] = t + 1
    elif wc[WM_HEAP] > 0:
        wc[WC_NEXT] = wl.heap_t[0]
    else:
        wc[WC_NEXT] = NEVER


def mpi_kernels(wl) -> list[tuple[object, tuple]]:
    """advance_mpi and the stages compiled apart beneath it, each with the argument types of its calls (the
    workload, then int64s: callers pass np.int64 around constants): a cold start compiles them on two cores, each
    after the ones it calls (engine/coldstart.py)."""
    kernels = (advance_mpi, run_rank, receive, start_step, post_receive, envelope_arrived, coll_take, post)
    return [(k, (typeof(wl),) + (types.int64,) * (k.py_func.__code__.co_argcount - 1)) for k in kernels]
