"""Workload state: the `Workload` NamedTuple the cycle loop carries, its record layouts and integer codes.

Every closed-loop workload is a state machine per task (house style 7): `stage[task]` holds an IntEnum stage of
the workload's module and `tk[task, TK_*]` its counters and timers. Messages are rows of `msg` (a free-list pool,
like the packet pool); global counters live in `wc[WC_*]`, global reals in `gf[GF_*]`, and the per-wave (SR,
GUPS, collectives) or per-level (Graph500) results in `table[row, TB_*]`.

Tasks and nodes: tasks 0..T-1 run one per node, on `task_node[task]` (linear or seeded random mapping).
Messages name tasks; packets name nodes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

V_PAPER, V_FOGSIM = 0, 1  # Graph500 variants

# msg[m, ...]: one message (int64)
MS_SRC, MS_DST, MS_BYTES, MS_PACKETS, MS_MADE, MS_RECV, MS_KIND, MS_AUX, MS_BIRTH, MS_NEXT = range(10)
N_MS = 10

# tk[task, ...]: per-task record (int64). The first block is the message layer's; the rest belong to the workloads.
TK_QHEAD, TK_QTAIL, TK_SPOS, TK_RECV, TK_EXPECT, TK_FINISH = 0, 1, 2, 3, 4, 5
TK_LEVEL, TK_MSGS_LEFT, TK_Q_LEFT, TK_GEN_LEFT, TK_BUSY, TK_SIG_RX = 6, 7, 8, 9, 10, 11
TK_RED_RX, TK_BCAST_RX, TK_LAST_INJ, TK_HOLD, TK_SIG_NEED, TK_M, TK_Q = 12, 13, 14, 15, 16, 17, 18
N_TK = 19

# wc[...]: global counters (int64)
WC_FREE_HEAD, WC_FREE_COUNT, WC_N_SENDERS, WC_N_INBOX, WC_POSTED, WC_COMPLETED = 0, 1, 2, 3, 4, 5
WC_FINISHED, WC_END, WC_STAGE, WC_ROW, WC_DRAWN, WC_OUTSTANDING, WC_WAKE = 6, 7, 8, 9, 10, 11, 12
WC_MLAT_SUM, WC_MLAT_MAX, WC_ERROR, WC_TASKS_DONE, WC_LEVEL, WC_REMAIN, WC_REMAIN_MM = 13, 14, 15, 16, 17, 18, 19
WC_QTOT, WC_LOCAL, WC_BFS_DONE, WC_AT_LEVEL_END, WC_NEXT, WC_EMPTIED = 20, 21, 22, 23, 24, 25
N_WC = 26

# gf[...]: global reals (float64)
GF_EXPLORED, GF_EDGES2 = 0, 1  # Graph500: edges explored so far, and the bound 2 * f_e * 2^s
N_GF = 2

# table[row, ...]: one wave (SR, GUPS, collectives) or one BFS level (Graph500) (int64)
TB_START, TB_END, TB_MESSAGES, TB_NET_MESSAGES, TB_QUERIES, TB_SENDERS, TB_MEAN, TB_SIGMA = range(8)
N_TB = 8

# wc[WC_ERROR] codes: a workload that cannot go on stops the run with this reason
ERR_NONE, ERR_MSG_POOL, ERR_INBOX, ERR_SELF = 0, 1, 2, 3
ERRORS = {ERR_MSG_POOL: "the message pool is exhausted", ERR_INBOX: "more messages completed in one cycle than "
          "the inbox holds", ERR_SELF: "a workload sent a message to its own task"}


class Workload(NamedTuple):
    kind: int  # W_*
    n_tasks: int  # T
    packet_phits: int  # largest packet (traffic.packet_phits)
    phit_bytes: int  # bytes per phit (traffic.phit_bytes)
    message_bytes: int  # S
    messages: int  # M
    wave: int  # W
    compute_cycles: int
    root: int  # root task (o2a, a2o; Graph500: host of the root vertex)
    variant: int  # V_* (Graph500)
    scale: int  # s
    edgefactor: int  # f_e
    coalescing: int  # c_s
    root_degree: int  # d_r
    max_levels: int
    backlog_blocks: bool  # Graph500: the receive backlog delays entering the all-reduce
    query_cycles: float  # Graph500: t_q / t_c, cycles of computation per query
    p_gen: float  # Graph500: probability per cycle of producing a full query message (eq 17 / p_s; FOGSim: eq 17)
    msg_headroom: int  # most messages the workload can post in one cycle (the pool grows below this)
    packets_per_message: int  # most packets made at once for one message (messages.packetise's burst)
    task_node: np.ndarray  # int64[T]
    stage: np.ndarray  # int8[T]: the workload's IntEnum stage of each task
    tk: np.ndarray  # int64[T, N_TK]
    msg: np.ndarray  # int64[C, N_MS] message pool
    wc: np.ndarray  # int64[N_WC]
    gf: np.ndarray  # float64[N_GF]
    senders: np.ndarray  # int64[T]: tasks with messages still to packetise (first wc[WC_N_SENDERS])
    inbox: np.ndarray  # int64[I]: messages completed this cycle (first wc[WC_N_INBOX])
    rng: np.ndarray  # uint64[T+1]: one stream per task, and the workload's global stream at [T]
    table: np.ndarray  # int64[K, N_TB]


def _free_list(n: int) -> np.ndarray:
    nxt = np.arange(1, n + 1, dtype=np.int64)
    nxt[-1] = -1
    return nxt


def inbox_size(n_nodes: int, n_ports: int, ejection: str) -> int:
    """The most messages that can complete in one cycle, plus one: a packet per node (one ejection channel), or
    per input port with router.ejection = "multiple"."""
    return (n_ports if ejection == "multiple" else n_nodes) + 1


def new_arrays(n_tasks: int, inbox: int, pool: int, rows: int) -> dict[str, np.ndarray]:
    """Zeroed workload arrays: the message pool as a free list, empty FIFOs, no task finished."""
    msg = np.zeros((max(pool, 1), N_MS), dtype=np.int64)
    msg[:, MS_NEXT] = _free_list(len(msg))
    tk = np.zeros((n_tasks, N_TK), dtype=np.int64)
    tk[:, [TK_QHEAD, TK_QTAIL, TK_SPOS, TK_FINISH, TK_HOLD, TK_LAST_INJ]] = -1
    wc = np.zeros(N_WC, dtype=np.int64)
    wc[WC_FREE_HEAD] = 0
    wc[WC_FREE_COUNT] = len(msg)
    wc[WC_END] = -1
    table = np.zeros((max(rows, 1), N_TB), dtype=np.int64)
    table[:, [TB_START, TB_END]] = -1
    return dict(stage=np.zeros(n_tasks, dtype=np.int8), tk=tk, msg=msg, wc=wc, gf=np.zeros(N_GF),
                senders=np.zeros(n_tasks, dtype=np.int64), inbox=np.zeros(inbox, dtype=np.int64),
                table=table)
