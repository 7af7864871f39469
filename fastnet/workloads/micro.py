"""Seed 002's communication micro-kernels (Navaridas & Miguel-Alonso), as in its Figs 1-4.

Send does not block (the message joins the sender's FIFO); Wait(from, to) blocks task `to` until the message
from `from` has fully arrived. Tasks are 0..N-1.

- `o2a`  one-to-all (Fig 1): the root sends S bytes to root+1, root+2, ... (mod N) in turn; every other task
         waits for its message. Injection at the root is the bottleneck.
- `a2o`  all-to-one (Fig 2; the extracted figure repeats Fig 1's text, the prose defines it): every other task
         sends S bytes to the root, which waits for all N-1. Consumption at the root is the bottleneck.
- `a2a`  all-to-all (Fig 3): task t sends to t+1, t+2, ..., t+N-1 (mod N) in that order, then waits for all N-1.
- `sr`   synchronized random (Fig 4): M messages of S bytes with src = Rnd(N), dst = Rnd(N), in waves of W: a
         wave's W sends go out together, the wave ends when all of them have arrived (Store/Wait), then every
         task computes for `compute_cycles`, then the next wave starts. Rnd can give dst = src: such a message is
         a local copy that never enters the network (it completes at once; it still counts in its wave).
- `gups` SR with W = M: one wave, no synchronisation (HPCC RandomAccess).

Execution time is the cycle at which the last wave (SR, GUPS) or the pattern (collectives) has completed, +1
(cycles are numbered from 0). The collectives are recorded as a single wave.
"""

from __future__ import annotations

from enum import IntEnum

from ..kernels._jit import jit, jit_callee, jit_inline
from ..kernels.rng import below
from ..kernels.state import NEVER
from .messages import retire, send
from .state import (
    MS_DST, TB_END, TB_MESSAGES, TB_NET_MESSAGES, TB_START, TK_EXPECT, TK_FINISH, TK_RECV, WC_DRAWN, WC_END,
    WC_FINISHED, WC_LOCAL, WC_N_INBOX, WC_OUTSTANDING, WC_POSTED, WC_ROW, WC_STAGE, WC_NEXT, WC_TASKS_DONE, WC_WAKE,
)
from ..registry import W_A2A, W_A2O, W_O2A


class SR(IntEnum):
    """Stage of the synchronized-random generator (one for the whole workload, as in Fig 4's loop)."""
    SEND = 0  # draw and post the next wave
    WAIT = 1  # Wait for every stored message of the wave
    COMPUTE = 2  # Computation(n) on every task until wc[WC_WAKE]
    DONE = 3


class Task(IntEnum):
    """Stage of a task in a collective."""
    POST = 0  # post this task's sends (cycle 0)
    WAIT = 1  # wait for the messages addressed to it
    DONE = 2


@jit_callee
def advance_sr(wl, packet_bytes, t):
    wc, msg, tk, table, inbox = wl.wc, wl.msg, wl.tk, wl.table, wl.inbox
    for i in range(wc[WC_N_INBOX]):  # Wait: messages that completed this cycle
        m = inbox[i]
        tk[msg[m, MS_DST], TK_RECV] += 1
        wc[WC_OUTSTANDING] -= 1
        retire(msg, wc, m, t)
    wc[WC_N_INBOX] = 0
    stage = wc[WC_STAGE]
    while True:  # a wave of local copies only ends where it starts, and the next may start in the same cycle
        if stage == SR.WAIT and wc[WC_OUTSTANDING] == 0:  # the wave is over
            table[wc[WC_ROW], TB_END] = t
            wc[WC_ROW] += 1
            wc[WC_WAKE] = t + wl.compute_cycles
            stage = SR.COMPUTE
        if stage == SR.COMPUTE and t >= wc[WC_WAKE]:
            if wc[WC_DRAWN] == wl.messages:
                stage = SR.DONE
                wc[WC_FINISHED] = 1
                wc[WC_END] = t
            else:
                stage = SR.SEND
        if stage != SR.SEND:
            break
        post_wave(wl, packet_bytes, t)
        stage = SR.WAIT
    wc[WC_STAGE] = stage
    wc[WC_NEXT] = wc[WC_WAKE] if stage == SR.COMPUTE else NEVER  # otherwise only messages move it on


@jit_inline
def post_wave(wl, packet_bytes, t):
    """The next min(W, M - drawn) messages of Fig 4, drawn from the workload's own random stream."""
    wc, rng, N = wl.wc, wl.rng, wl.n_tasks
    g = N  # the global stream
    row = wc[WC_ROW]
    wl.table[row, TB_START] = t
    count = min(wl.wave, wl.messages - wc[WC_DRAWN])
    for _ in range(count):
        src = below(rng, g, N)
        dst = below(rng, g, N)
        if src == dst:
            wc[WC_LOCAL] += 1
        else:
            send(wl.msg, wl.tk, wc, wl.senders, src, dst, wl.message_bytes, packet_bytes, 0, row, True, t)
            wc[WC_OUTSTANDING] += 1
            wl.table[row, TB_NET_MESSAGES] += 1
    wl.table[row, TB_MESSAGES] = count
    wc[WC_DRAWN] += count


@jit_callee
def advance_collective(wl, packet_bytes, t):
    """a2a, o2a, a2o: every task posts its sends at cycle 0 and finishes when all its messages have arrived."""
    wc, msg, tk, stage, inbox = wl.wc, wl.msg, wl.tk, wl.stage, wl.inbox
    N, root = wl.n_tasks, wl.root
    for i in range(wc[WC_N_INBOX]):
        m = inbox[i]
        d = msg[m, MS_DST]
        tk[d, TK_RECV] += 1
        retire(msg, wc, m, t)
        if tk[d, TK_RECV] == tk[d, TK_EXPECT] and stage[d] == Task.WAIT:
            finish_task(wl, d, t)
    wc[WC_N_INBOX] = 0
    if t == 0:
        wl.table[0, TB_START] = 0
        S = wl.message_bytes
        for task in range(N):  # post every send first, so that each receiver's expected count is complete
            if wl.kind == W_A2A:
                for u in range(1, N):
                    send(msg, tk, wc, wl.senders, task, (task + u) % N, S, packet_bytes, 0, 0, True, t)
            elif wl.kind == W_O2A and task == root:
                for u in range(1, N):
                    send(msg, tk, wc, wl.senders, root, (root + u) % N, S, packet_bytes, 0, 0, True, t)
            elif wl.kind == W_A2O and task != root:
                send(msg, tk, wc, wl.senders, task, root, S, packet_bytes, 0, 0, True, t)
        wl.table[0, TB_MESSAGES] = wc[WC_POSTED]
        wl.table[0, TB_NET_MESSAGES] = wc[WC_POSTED]
        for task in range(N):
            stage[task] = Task.WAIT
            if tk[task, TK_EXPECT] == 0:  # nothing to wait for (o2a's root, a2o's senders)
                finish_task(wl, task, t)
        wc[WC_NEXT] = NEVER  # from now on only arriving messages move the tasks on


@jit_inline
def finish_task(wl, task, t):
    wl.stage[task] = Task.DONE
    wl.tk[task, TK_FINISH] = t
    wc = wl.wc
    wc[WC_TASKS_DONE] += 1
    if wc[WC_TASKS_DONE] == wl.n_tasks:
        wc[WC_FINISHED] = 1
        wc[WC_END] = t
        wl.table[0, TB_END] = t
