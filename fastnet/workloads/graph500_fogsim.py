"""Seed 000's Graph500 model as FOGSim v4 codes it (`[workload] variant = "fogsim"`).

Follows reference/fogsim/GRAPH500_SPEC.md (§3-§6), which differs from the paper (graph500.py) in 15 places
(its §10); the ones that change results:
- eq 7 uses FOGSim's constants and eq 13 an integer s/10; n' is an integer (trunc) in eqs 2-3;
- each process draws a network-wide level total Q = trunc(X (n-1)/n), X ~ Normal(mean, sigma), redrawn while
  Q < 0; adds the deficit R - R_mm (queries still unreceived minus the means not yet used); becomes a sender
  with probability 1 - (1 - 1/n)^Q and then sends q = floor(Q / n'(Q)) queries in n' ceil(q / (n' c_s))
  messages, filled to c_s first;
- the mean is capped at the remaining budget ceil(R n/(n-1)); R drops as query messages are received;
- a process creates a message only every >= p_s cycles, each cycle with probability p_s / (t_q c_s); after each
  injection it works through its receive backlog (one cycle per cycle) before generating again; the backlog
  never delays signals or the all-reduce and is dropped at the next level;
- only the root's host signals at level 0; levels start together, when every process has ended the last one;
- the BFS stops when R <= 0, at `max_levels` (default 9), or from level 5 once R <= 10 % of the budget.

fastnet differences: the root degree and host are drawn from the run seed unless given (FOGSim draws them before
seeding: d_r = 2, host 60 for n = 72 at s <= 27), a message's injection is seen one cycle after it happens
(FOGSim sees it in the same cycle, and its SEND_MSG then runs the RECEIVE step one cycle earlier: the two
offsets cancel), and a process posts its n-1 signals together (they leave at link rate, as FOGSim's do once its
injection buffer is full).
"""

from __future__ import annotations

import math
from enum import IntEnum

import numpy as np

from ..kernels._jit import jit, jit_callee, jit_inline
from ..kernels.rng import below, uniform
from .graph500 import G_BCAST, G_QUERY, G_REDUCE, G_SIGNAL, count_control, normal
from .graph500_model import fogsim_destinations, fogsim_messages, mean_edges, sigma_edges
from .messages import retire, send, sending
from .state import (
    MS_AUX, MS_DST, MS_KIND, TB_END, TB_MEAN, TB_MESSAGES, TB_QUERIES, TB_SENDERS, TB_SIGMA, TB_START,
    TK_BCAST_RX, TK_BUSY, TK_EXPECT, TK_FINISH, TK_HOLD, TK_LAST_INJ, TK_M, TK_MSGS_LEFT, TK_Q, TK_Q_LEFT,
    TK_RECV, TK_RED_RX, TK_SIG_NEED, TK_SIG_RX, WC_AT_LEVEL_END, WC_END, WC_FINISHED, WC_LEVEL, WC_N_INBOX,
    WC_QTOT, WC_REMAIN, WC_REMAIN_MM, WC_NEXT, WC_WAKE,
)


class FStage(IntEnum):
    LEVEL_START = 0  # draws done for everyone: load them
    GENERATE = 1  # wait for the p_s gap and the Bernoulli trial, then create a message
    SEND_MSG = 2  # hold the message until it enters the network
    RECEIVE = 3  # work off the backlog (pending) one cycle per cycle, then decide
    SIGNALLING = 4  # the end-of-level signals are leaving
    AR_REDUCE = 5  # send the reduce (others) / wait for n-1 reduces (root's host)
    AR_BCAST = 6  # wait for the broadcast (others) / the broadcast is leaving (root's host)
    LEVEL_END = 7


@jit_inline
def fogsim_draws(wl, l, t):
    """LEVEL_START of level l for every process, in process order (FOGSim spec §4.1-4.2)."""
    tk, wc, table, n, rng = wl.tk, wl.wc, wl.table, wl.n_tasks, wl.rng
    g = n
    c_s = wl.coalescing
    table[l, TB_START] = t
    if l == 0:
        q = np.int64(math.ceil(wl.root_degree * (n - 1) / n))
        for p in range(n):
            tk[p, TK_Q] = 0
            tk[p, TK_M] = 0
            tk[p, TK_SIG_NEED] = 1  # the root's signal
        tk[wl.root, TK_Q] = q
        tk[wl.root, TK_M] = max(1, fogsim_messages(q, c_s, n))
        tk[wl.root, TK_SIG_NEED] = 0
        wc[WC_REMAIN_MM] = wc[WC_QTOT] - q
        table[l, TB_MEAN] = wl.root_degree
    else:
        R = wc[WC_REMAIN]
        mu = min(mean_edges(l, wl.root_degree, wl.scale, wl.edgefactor, True), math.ceil(R * n / (n - 1)))
        sigma = sigma_edges(l, wl.root_degree, wl.scale, wl.edgefactor, True)
        delta = R - wc[WC_REMAIN_MM]
        for p in range(n):
            Q = np.int64(-1)
            while Q < 0:  # rejection, not clipping (spec §4.2 step 3)
                Q = np.int64(math.trunc(normal(rng, g, mu, sigma) * (n - 1) / n))
            if Q + delta > 0:  # deficit correction (step 4)
                Q += delta
            q = np.int64(0)
            if uniform(rng, g) <= 1.0 - (1.0 - 1.0 / n) ** Q:  # is this process a sender? (step 6)
                q = np.int64(Q // fogsim_destinations(Q, n))
            tk[p, TK_Q] = q
            tk[p, TK_M] = fogsim_messages(q, c_s, n) if q > 0 else 0
            tk[p, TK_SIG_NEED] = n - 1
        wc[WC_REMAIN_MM] = np.int64(math.trunc(wc[WC_REMAIN_MM] - mu))  # step 5 (the last process)
        table[l, TB_MEAN] = np.int64(round(mu))
        table[l, TB_SIGMA] = np.int64(min(round(sigma), 2**62))
    for p in range(n):
        tk[p, TK_MSGS_LEFT] = tk[p, TK_M]
        tk[p, TK_Q_LEFT] = tk[p, TK_Q]
        tk[p, TK_BUSY] = 0  # the backlog is dropped
        tk[p, TK_RECV] = 0
        tk[p, TK_EXPECT] = 0
        tk[p, TK_SIG_RX] = 0
        tk[p, TK_RED_RX] = 0
        tk[p, TK_BCAST_RX] = 0
        tk[p, TK_HOLD] = -1
        table[l, TB_QUERIES] += tk[p, TK_Q]
        table[l, TB_MESSAGES] += tk[p, TK_M]
        if tk[p, TK_M] > 0:
            table[l, TB_SENDERS] += 1
        wl.stage[p] = FStage.GENERATE if tk[p, TK_M] > 0 else FStage.SIGNALLING
    if l == 0:
        for p in range(n):
            if p != wl.root:
                wl.stage[p] = FStage.RECEIVE  # nothing to send, no signal to send


@jit_inline
def next_queries(tk, c_s, p):
    """Queries of the next message: full messages first, the rest spread thinly, the last takes what is left."""
    left, msgs = tk[p, TK_Q_LEFT], tk[p, TK_MSGS_LEFT]
    if msgs == 1:
        return left
    if left >= c_s + msgs - 1:
        return np.int64(c_s)
    return (left + msgs - 1) // msgs


@jit_inline
def receive_step(wl, tk, p):
    """FOGSim's RECEIVE step: one cycle of backlog, then the next stage (takes effect next cycle)."""
    tk[p, TK_BUSY] -= 1
    if tk[p, TK_MSGS_LEFT] > 0:
        return FStage.GENERATE if tk[p, TK_BUSY] < 0 else FStage.RECEIVE
    if tk[p, TK_EXPECT] == tk[p, TK_RECV] and tk[p, TK_SIG_RX] >= tk[p, TK_SIG_NEED]:
        return FStage.AR_REDUCE
    return FStage.RECEIVE


@jit_inline
def start_level(wl, t):
    """At cycle 0 the first level starts; a cycle after every process has ended a level, the next one."""
    wc = wl.wc
    if t == 0:
        wc[WC_REMAIN] = wc[WC_QTOT]
        fogsim_draws(wl, 0, t)
    elif wc[WC_AT_LEVEL_END]:
        wc[WC_AT_LEVEL_END] = 0
        wc[WC_LEVEL] += 1
        fogsim_draws(wl, wc[WC_LEVEL], t)


@jit_inline
def receive_messages(wl, t):
    """The messages that arrived: a query message adds its queries' time (t_q each) to its receiver's backlog and
    takes them off the queries still unreceived; signals, reduces and broadcasts are counted."""
    wc, msg, tk = wl.wc, wl.msg, wl.tk
    for i in range(wc[WC_N_INBOX]):
        m = wl.inbox[i]
        d = msg[m, MS_DST]
        tag = msg[m, MS_KIND]
        if tag == G_QUERY:
            k = msg[m, MS_AUX]
            tk[d, TK_BUSY] = max(0, tk[d, TK_BUSY]) + np.int64(math.ceil(k * wl.query_cycles - 1e-9))
            tk[d, TK_RECV] += 1
            wc[WC_REMAIN] -= k
            wc[WC_WAKE] = max(wc[WC_WAKE], t + tk[d, TK_BUSY])
        else:
            count_control(tk, d, tag)
        retire(msg, wc, m, t)
    wc[WC_N_INBOX] = 0


@jit_inline
def generate(wl, packet_bytes, p, t):
    """GENERATE: p_s cycles after its last injection, each cycle with probability p_gen, process p creates its
    next query message, to another process drawn at random, and holds it (SEND_MSG)."""
    tk, wc, rng, P = wl.tk, wl.wc, wl.rng, wl.packet_phits
    wc[WC_WAKE] = max(wc[WC_WAKE], t + P + np.int64(40.0 / wl.p_gen))  # the Bernoulli wait, generously
    gap_ok = tk[p, TK_LAST_INJ] < 0 or t >= tk[p, TK_LAST_INJ] + P
    if gap_ok and uniform(rng, p) < wl.p_gen:
        k = next_queries(tk, wl.coalescing, p)
        d = below(rng, p, wl.n_tasks - 1)
        d = d + 1 if d >= p else d
        send(wl.msg, tk, wc, wl.senders, p, d, packet_bytes, packet_bytes, G_QUERY, k, True, t)
        tk[p, TK_HOLD] = k
        return FStage.SEND_MSG
    return FStage.GENERATE


@jit_inline
def send_msg(wl, nd, p, t):
    """SEND_MSG: once the held message has entered the network (last cycle), process p signals after its last
    message or takes its RECEIVE step; until then only its backlog goes down."""
    tk = wl.tk
    if sending(tk, nd, wl.task_node, p):
        tk[p, TK_BUSY] -= 1  # the RECEIVE step while holding: backlog only
        return FStage.SEND_MSG
    tk[p, TK_LAST_INJ] = t - 1
    tk[p, TK_MSGS_LEFT] -= 1
    tk[p, TK_Q_LEFT] -= tk[p, TK_HOLD]
    tk[p, TK_HOLD] = -1
    if tk[p, TK_MSGS_LEFT] == 0:
        return FStage.SIGNALLING
    return receive_step(wl, tk, p)


@jit_inline
def signalling(wl, nd, packet_bytes, p, t):
    """SIGNALLING: process p posts its end-of-level signal to every other process; once the last has entered the
    network, it takes its RECEIVE step; until then only its backlog goes down."""
    tk = wl.tk
    if tk[p, TK_HOLD] == -1:
        tk[p, TK_HOLD] = -2  # posted
        for u in range(wl.n_tasks):
            if u != p:
                send(wl.msg, tk, wl.wc, wl.senders, p, u, packet_bytes, packet_bytes, G_SIGNAL, 0, False, t)
        return FStage.SIGNALLING
    if not sending(tk, nd, wl.task_node, p):
        tk[p, TK_HOLD] = -1
        tk[p, TK_LAST_INJ] = t - 1
        return receive_step(wl, tk, p)
    tk[p, TK_BUSY] -= 1
    return FStage.SIGNALLING


@jit_inline
def ar_reduce(wl, nd, packet_bytes, p, t):
    """AR_REDUCE: the root's host waits for the n-1 reduces and then broadcasts to every other process; any
    other process sends its reduce to the root's host and, once it has entered the network, waits for the
    broadcast (AR_BCAST)."""
    tk, n, root = wl.tk, wl.n_tasks, wl.root
    if p == root:
        if tk[p, TK_RED_RX] >= n - 1:
            for u in range(n):
                if u != p:
                    send(wl.msg, tk, wl.wc, wl.senders, p, u, packet_bytes, packet_bytes, G_BCAST, 0, False, t)
            return FStage.AR_BCAST
    elif tk[p, TK_HOLD] == -1:
        send(wl.msg, tk, wl.wc, wl.senders, p, root, packet_bytes, packet_bytes, G_REDUCE, 0, False, t)
        tk[p, TK_HOLD] = -2
    elif not sending(tk, nd, wl.task_node, p):
        tk[p, TK_HOLD] = -1
        return FStage.AR_BCAST
    return FStage.AR_REDUCE


@jit_inline
def ar_bcast(wl, nd, p):
    """AR_BCAST: the level ends for the root's host once its last broadcast has entered the network (last
    cycle), for any other process once the broadcast has arrived."""
    if p == wl.root:
        if not sending(wl.tk, nd, wl.task_node, p):
            return FStage.LEVEL_END
    elif wl.tk[p, TK_BCAST_RX] >= 1:
        return FStage.LEVEL_END
    return FStage.AR_BCAST


@jit_inline
def process_step(wl, nd, packet_bytes, p, s, t):
    """One cycle of process p in stage s; returns its stage for the next cycle. A process that finishes its
    messages or its RECEIVE step this cycle goes on to signal or reduce in the same cycle."""
    if s == FStage.GENERATE:
        s = generate(wl, packet_bytes, p, t)
    elif s == FStage.SEND_MSG:
        s = send_msg(wl, nd, p, t)
    elif s == FStage.RECEIVE:
        s = receive_step(wl, wl.tk, p)
    if s == FStage.SIGNALLING:
        s = signalling(wl, nd, packet_bytes, p, t)
    elif s == FStage.AR_REDUCE:
        s = ar_reduce(wl, nd, packet_bytes, p, t)
    elif s == FStage.AR_BCAST:
        s = ar_bcast(wl, nd, p)
    return s


@jit_inline
def end_level(wl, t):
    """Every process has ended the level: the BFS stops when no query is left unreceived, at max_levels, or from
    level 5 once at most 10 % of the budget is left; else the next level starts next cycle."""
    wc, tk = wl.wc, wl.tk
    l = wc[WC_LEVEL]
    wl.table[l, TB_END] = t
    R, Q_tot = wc[WC_REMAIN], wc[WC_QTOT]
    if R <= 0 or l + 1 >= wl.max_levels or (l >= 5 and R <= 0.1 * Q_tot):
        wc[WC_FINISHED] = 1
        wc[WC_END] = t
        for p in range(wl.n_tasks):
            tk[p, TK_FINISH] = t
    else:
        wc[WC_AT_LEVEL_END] = 1  # every process starts the next level next cycle


@jit_callee
def advance_graph500_fogsim(wl, nd, packet_bytes, t):
    """One cycle of every process: a level starts (its draws made for all), the arrived messages are received,
    each process takes a step of its stage machine, and the level ends once every process has reached
    LEVEL_END."""
    stage = wl.stage
    start_level(wl, t)
    receive_messages(wl, t)
    wl.wc[WC_NEXT] = t + 1  # the stage machine is cycle by cycle: called every cycle
    ended = 0
    for p in range(wl.n_tasks):
        # the stage as int64, so that the steps can assign IntEnum stages to it
        s = process_step(wl, nd, packet_bytes, p, np.int64(stage[p]), t)
        stage[p] = s
        if s == FStage.LEVEL_END:
            ended += 1
    if ended == wl.n_tasks:
        end_level(wl, t)
