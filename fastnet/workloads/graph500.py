"""Seed 000's Graph500 BFS model as the paper describes it (§3-4, Fig 6): one stage machine per process.

Levels (tree levels l = 0, 1, ...):
- Level 0 explores the root's d_r edges: only the root's host sends, ceil(d_r (n-1)/n) queries (eq 1 for the one
  process that owns the level) in m messages (eqs 2-3).
- Level l >= 1: each process draws E_l from Normal(mean, sigma) (eqs 4-16, the mean capped at the edges left;
  a negative draw explores nothing), and sends q = E_l/n (n-1)/n queries (eq 1) in m messages (eqs 2-3, m rounded
  to the nearest integer), spread evenly over the messages. The explored total is truncated at 2 f_e 2^s: if
  the level's draws would pass it they are scaled down to reach it exactly.
- Messages go to uniformly random other processes. A process produces a message of k queries after a Bernoulli
  number of free cycles with p = t_c / (t_q k) per cycle: t_q per query, so a full message (k = c_s) comes at
  eq 17's rate, p_inj = p_s t_c / (t_q c_s) phits/cycle, and a message of fewer queries (sparse levels of small
  graphs) sooner. A cycle is free when the process is not consuming (half-duplex) and its previous message has
  entered the network (the injection buffer holds one message).
- Consuming a message of k queries keeps the process busy max(ceil(k t_q / t_c), p_s) cycles after any earlier
  backlog: a process consumes a packet no faster than it receives it (half-duplex, Fig 9's 0.5 phits/node/cycle).
- A process that has posted its messages notifies every other process (end-of-level signal, one packet each).
  When it has every signal of the level, every message announced to it and (unless `backlog_blocks_allreduce`
  is false) has consumed its backlog, it joins the all-reduce: a reduce message to the root's host, which after
  all n-1 of them broadcasts one message to each process in turn (Fig 1's all-reduce, flat).
- The root's host decides after the reduce whether the graph is traversed (2 f_e 2^s edges explored, an empty
  level, or `max_levels`), draws the next level for everyone, and starts it; every other process starts it when
  the broadcast arrives. Execution ends when the last process has received the final broadcast.

Every query, signal and all-reduce message is one full packet of p_s phits (the paper's single packet size).
Counters are cumulative over levels: a process can be one level ahead of another only after the all-reduce,
when the slower one is only waiting for its broadcast, so cumulative targets separate the levels exactly.
"""

from __future__ import annotations

import math
from enum import IntEnum

import numpy as np

from ..kernels._jit import jit, jit_callee, jit_inline
from ..kernels.rng import below, geometric, uniform
from .graph500_model import effective_destinations, mean_edges, messages_per_process, sigma_edges
from .messages import retire, send, sending
from .state import (
    GF_EDGES2, GF_EXPLORED, MS_AUX, MS_DST, MS_KIND, TB_END, TB_MEAN, TB_MESSAGES, TB_QUERIES, TB_SENDERS,
    TB_SIGMA, TB_START, TK_BCAST_RX, TK_BUSY, TK_EXPECT, TK_FINISH, TK_GEN_LEFT, TK_HOLD, TK_LEVEL, TK_M,
    TK_MSGS_LEFT, TK_Q, TK_Q_LEFT, TK_RECV, TK_RED_RX, TK_SIG_RX, WC_BFS_DONE, WC_END, WC_FINISHED, WC_LEVEL,
    WC_N_INBOX, WC_NEXT, WC_TASKS_DONE, WC_WAKE,
)

# MS_KIND of Graph500 messages (both variants); a query message carries its query count in MS_AUX
G_QUERY, G_SIGNAL, G_REDUCE, G_BCAST = 0, 1, 2, 3


class Stage(IntEnum):
    LEVEL_START = 0  # load this level's queries and messages
    GENERATE = 1  # produce the level's query messages
    SIGNAL = 2  # post the end-of-level signal to every other process
    DRAIN = 3  # wait for every signal, every announced message and the receive backlog
    REDUCE = 4  # root's host: wait for the n-1 reduce messages, then broadcast and decide
    WAIT_BCAST = 5  # wait for the root's broadcast
    DONE = 6


@jit_inline
def normal(states, i, mu, sigma):
    """Normal(mu, sigma) by Box-Muller from stream i."""
    u1 = 1.0 - uniform(states, i)  # (0, 1]
    u2 = uniform(states, i)
    return mu + sigma * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@jit_inline
def count_control(tk, d, tag):
    """Process d received an end-of-level signal, a reduce or a broadcast message (both variants)."""
    if tag == G_SIGNAL:
        tk[d, TK_SIG_RX] += 1
    elif tag == G_REDUCE:
        tk[d, TK_RED_RX] += 1
    else:
        tk[d, TK_BCAST_RX] += 1


@jit_inline
def consume(tk, wl, d, k, t):
    """Half-duplex consumption of a query message of k queries: busy after any backlog for ceil(k t_q) cycles,
    and at least the packet's p_s cycles of reception (the paper: nodes cannot generate while consuming an
    incoming packet, which caps network usage near 0.5 phits/node/cycle at every link bandwidth, Fig 9)."""
    cost = max(np.int64(math.ceil(k * wl.query_cycles - 1e-9)), np.int64(wl.packet_phits))
    tk[d, TK_BUSY] = max(tk[d, TK_BUSY], t) + cost
    wl.wc[WC_WAKE] = max(wl.wc[WC_WAKE], tk[d, TK_BUSY])


@jit_inline
def next_message(tk, wl, rng, p, t):
    """Queries of p's next message (the level's queries spread evenly) and the free cycles to produce them."""
    k = (tk[p, TK_Q_LEFT] + tk[p, TK_MSGS_LEFT] - 1) // tk[p, TK_MSGS_LEFT]
    tk[p, TK_HOLD] = k
    tk[p, TK_GEN_LEFT] = geometric(rng, p, 1.0 / max(k * wl.query_cycles, 1.0))
    wl.wc[WC_WAKE] = max(wl.wc[WC_WAKE], t + tk[p, TK_GEN_LEFT])


@jit_inline
def draw_level(wl, l, t):
    """The root's host, at the start of level l: every process's queries and messages for the level."""
    tk, gf, table, n = wl.tk, wl.gf, wl.table, wl.n_tasks
    g = n  # the workload's global stream
    c_s = wl.coalescing
    table[l, TB_START] = t
    if l == 0:
        for p in range(n):
            tk[p, TK_Q] = 0
            tk[p, TK_M] = 0
        q = np.int64(math.ceil(wl.root_degree * (n - 1) / n))
        tk[wl.root, TK_Q] = q
        tk[wl.root, TK_M] = max(1, np.int64(round(messages_per_process(q, c_s, effective_destinations(q, n)))))
        table[l, TB_MEAN] = wl.root_degree
    else:
        remaining = gf[GF_EDGES2] - gf[GF_EXPLORED]
        mu = min(mean_edges(l, wl.root_degree, wl.scale, wl.edgefactor, False), remaining)
        sigma = sigma_edges(l, wl.root_degree, wl.scale, wl.edgefactor, False)
        total = 0.0
        draws = wl.rng[g]  # each process's edges E[p] are drawn twice from here: once for their sum, once to use
        for p in range(n):
            total += max(0.0, normal(wl.rng, g, mu, sigma)) / n
        scale = 1.0
        if total > remaining:
            scale = remaining / total
            total = remaining
        gf[GF_EXPLORED] += total
        wl.rng[g] = draws
        for p in range(n):
            q = np.int64(round(max(0.0, normal(wl.rng, g, mu, sigma)) * scale / n * (n - 1) / n))
            m = 0
            if q > 0:
                m = max(1, np.int64(round(messages_per_process(q, c_s, effective_destinations(q, n)))))
            tk[p, TK_Q] = q
            tk[p, TK_M] = m
        table[l, TB_MEAN] = np.int64(round(mu))
        table[l, TB_SIGMA] = np.int64(min(round(sigma), 2**62))
    for p in range(n):
        table[l, TB_QUERIES] += tk[p, TK_Q]
        table[l, TB_MESSAGES] += tk[p, TK_M]
        if tk[p, TK_M] > 0:
            table[l, TB_SENDERS] += 1


@jit_inline
def start_graph500(wl, t):
    wl.gf[GF_EXPLORED] = wl.root_degree
    draw_level(wl, 0, t)


@jit_inline
def leave_level(wl, p, t):
    """Process p has finished the all-reduce of its level: it starts the next one or is done."""
    tk, wc, table = wl.tk, wl.wc, wl.table
    l = tk[p, TK_LEVEL]
    table[l, TB_END] = max(table[l, TB_END], t)
    if wc[WC_BFS_DONE]:
        tk[p, TK_FINISH] = t
        wc[WC_TASKS_DONE] += 1
        if wc[WC_TASKS_DONE] == wl.n_tasks:
            wc[WC_FINISHED] = 1
            wc[WC_END] = t
        return Stage.DONE
    tk[p, TK_LEVEL] = l + 1
    return Stage.LEVEL_START


@jit_callee
def advance_graph500(wl, nd, packet_bytes, t):
    wc, msg, tk, stage, rng = wl.wc, wl.msg, wl.tk, wl.stage, wl.rng
    n, root = wl.n_tasks, wl.root
    if t == 0:
        start_graph500(wl, t)
    for i in range(wc[WC_N_INBOX]):
        m = wl.inbox[i]
        d = msg[m, MS_DST]
        tag = msg[m, MS_KIND]
        if tag == G_QUERY:
            consume(tk, wl, d, msg[m, MS_AUX], t)
            tk[d, TK_RECV] += 1
        else:
            count_control(tk, d, tag)
        retire(msg, wc, m, t)
    wc[WC_N_INBOX] = 0
    wc[WC_NEXT] = t + 1  # generation and the backlog are cycle by cycle: called every cycle
    for p in range(n):
        s = np.int64(stage[p])  # int64, so that IntEnum stages can be assigned to it
        l = tk[p, TK_LEVEL]
        if s == Stage.LEVEL_START:
            tk[p, TK_MSGS_LEFT] = tk[p, TK_M]
            tk[p, TK_Q_LEFT] = tk[p, TK_Q]
            s = Stage.SIGNAL
            if tk[p, TK_M] > 0:
                next_message(tk, wl, rng, p, t)
                s = Stage.GENERATE
        if s == Stage.GENERATE and t >= tk[p, TK_BUSY] and not sending(tk, nd, wl.task_node, p):
            tk[p, TK_GEN_LEFT] -= 1
            if tk[p, TK_GEN_LEFT] <= 0:
                k = tk[p, TK_HOLD]
                d = below(rng, p, n - 1)
                d = d + 1 if d >= p else d
                send(msg, tk, wc, wl.senders, p, d, packet_bytes, packet_bytes, G_QUERY, k, True, t)
                tk[p, TK_MSGS_LEFT] -= 1
                tk[p, TK_Q_LEFT] -= k
                if tk[p, TK_MSGS_LEFT] == 0:
                    s = Stage.SIGNAL
                else:
                    next_message(tk, wl, rng, p, t)
        if s == Stage.SIGNAL:
            for u in range(1, n):
                send(msg, tk, wc, wl.senders, p, (p + u) % n, packet_bytes, packet_bytes, G_SIGNAL, l, False, t)
            s = Stage.DRAIN
        if s == Stage.DRAIN:
            if (tk[p, TK_SIG_RX] >= (n - 1) * (l + 1) and tk[p, TK_RECV] >= tk[p, TK_EXPECT]
                    and (t >= tk[p, TK_BUSY] or not wl.backlog_blocks)):
                if p == root:
                    s = Stage.REDUCE
                else:
                    send(msg, tk, wc, wl.senders, p, root, packet_bytes, packet_bytes, G_REDUCE, l, False, t)
                    s = Stage.WAIT_BCAST
        if s == Stage.REDUCE and tk[p, TK_RED_RX] >= (n - 1) * (l + 1):
            for u in range(1, n):
                send(msg, tk, wc, wl.senders, p, (p + u) % n, packet_bytes, packet_bytes, G_BCAST, l, False, t)
            table = wl.table
            if (wl.gf[GF_EXPLORED] >= wl.gf[GF_EDGES2] * (1.0 - 1e-12) or l + 1 >= wl.max_levels
                    or (l >= 1 and table[l, TB_QUERIES] == 0)):
                wc[WC_BFS_DONE] = 1
            else:
                wc[WC_LEVEL] = l + 1
                draw_level(wl, l + 1, t)
            s = leave_level(wl, p, t)
        if s == Stage.WAIT_BCAST and tk[p, TK_BCAST_RX] >= l + 1:
            s = leave_level(wl, p, t)
        stage[p] = s
