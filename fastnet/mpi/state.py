"""MPI state: the `Mpi` tuple the cycle loop carries, its record layouts and integer codes.

The cycle loop treats `Mpi` like any closed-loop workload (engine/generate.py): it reads `kind`, `n_tasks`,
`msg`, `wc`, `inbox`, `packets_per_message` and `msg_headroom`, and the message layer (workloads/messages.py)
uses the first columns of `tk` and `msg`. The rest belongs to the MPI kernels (kernel.py, collectives.py).

- `ops[i, OP_*]`: the op list of every program (program.py lowers a Trace to it); rank r runs
  ops[op_begin[r]:op_end[r]] (ranks with the same program share one range).
- `tk[r, RK_*]`: one record per rank: program counter, state, timers, its queues and collective progress.
- `rq[r * max_requests + slot, RQ_*]`: request slots (isend / irecv until their wait).
- `msg[m, MS_*]`, `msg[m, MM_*]`: the message pool: the message layer's columns (workloads/state.py), then
  MPI's envelope.
- communicators: `comm_members[comm_off[c]:comm_off[c] + comm_size[c]]` are the world ranks of comm c in
  comm-rank order; a rank's own rank in comm c is in its `rank_comms` row range (comm 0, the world, is r).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..workloads.state import N_MS, N_WC

# opcodes of the kernel (program.py lowers every MPI call to these)
OP_COMPUTE, OP_ISEND, OP_IRECV, OP_WAIT, OP_COLL = 0, 1, 2, 3, 4
# ops[i, ...]
OP_CODE, OP_CALL, OP_PEER, OP_TAG, OP_COMM, OP_BYTES, OP_REQ, OP_ARG, OP_LIST, OP_ALG, OP_ROOT, OP_SEQ, OP_INDEX = \
    range(13)
N_OP = 13
# OP_ARG: compute cycles (OP_COMPUTE), number of requests (OP_WAIT: their slots are req_list[OP_LIST:...]),
# collective kind (OP_COLL, a CO_* code); OP_LIST: alltoallv's byte counts at counts[OP_LIST:OP_LIST + 2n]
# (n sends, then n receives); OP_INDEX: the call's index in its rank's trace (error messages)

ANY = -1  # OP_PEER / OP_TAG of a receive: MPI_ANY_SOURCE, MPI_ANY_TAG
NULL_PEER = -2

# MPI call kinds (OP_CALL): counts, time and message latency are reported per kind
CALLS = ("send", "recv", "isend", "irecv", "wait", "waitall", "sendrecv", "barrier", "bcast", "reduce",
         "allreduce", "gather", "allgather", "scatter", "alltoall", "alltoallv", "compute")
CALL_CODE = {name: i for i, name in enumerate(CALLS)}
N_CALLS = len(CALLS)
# collective kinds (OP_ARG of OP_COLL) are their call codes
CO_BARRIER, CO_BCAST, CO_REDUCE, CO_ALLREDUCE, CO_GATHER, CO_ALLGATHER, CO_SCATTER, CO_ALLTOALL, CO_ALLTOALLV = \
    range(7, 16)

# collective algorithms (OP_ALG): fastnet/registry.py COLLECTIVE_ALGORITHMS, chosen by program.py (docs/mpi.md)

# tk[r, ...] after the message layer's six columns (workloads/state.py TK_QHEAD .. TK_FINISH)
# RK_SEND_FREE / RK_RECV_FREE: the cycle the rank's host may start its next message's send / receive overhead;
# RK_HQHEAD / RK_HQTAIL: its messages waiting for the host to hand them over (linked through MS_NEXT, in post order)
(RK_PC, RK_STATE, RK_PEND, RK_BLOCK_T, RK_BLOCK_CALL, RK_WAIT_CYC, RK_COMPUTE_CYC, RK_QHEAD, RK_QTAIL,
 RK_RHEAD, RK_RTAIL, RK_EARLY, RK_COP, RK_CME, RK_CN, RK_STEP, RK_CRECV, RK_CSEND, RK_CSTART, RK_SEND_FREE,
 RK_RECV_FREE, RK_HQHEAD, RK_HQTAIL) = range(6, 29)
N_RK = 29
# RK_STATE
RS_READY, RS_RUNNING, RS_COMPUTE, RS_WAIT, RS_COLL, RS_DONE = 0, 1, 2, 3, 4, 5

# rq[slot, ...]
RQ_STATE, RQ_RANK, RQ_PEER, RQ_TAG, RQ_COMM, RQ_NEXT, RQ_WAITED, RQ_CALL = range(8)
N_RQ = 8
Q_FREE, Q_PENDING, Q_DONE = 0, 1, 2

# msg[m, ...] after the message layer's columns; MS_KIND (workloads/state.py) holds the protocol message kind
(MM_COMM, MM_TAG, MM_SEQ, MM_SREQ, MM_RREQ, MM_QNEXT, MM_ARRIVED, MM_CALL, MM_PAYLOAD, MM_SENT,
 MM_RECEIVED, MM_READY) = range(N_MS, N_MS + 12)
N_MSG = N_MS + 12
# MM_SEQ: the collective's instance on its comm (-1: point-to-point); MM_TAG: MPI tag, or the collective step;
# MM_SENT: when the MPI call posted the data (a rendezvous transfer's RTS), for the data-message latency;
# MM_ARRIVED: when an envelope (eager data, RTS) reached its receiver (-1: not yet), for its time unmatched;
# MM_RECEIVED: when the message reached its receiver's node, while the receive overhead runs (-1: not yet);
# MM_READY: when its sender's host hands it over (the host model)
M_EAGER, M_RTS, M_CTS, M_DATA = 0, 1, 2, 3

# wc[...] after the common counters (workloads/state.py); WM_TIMELINE counts the intervals logged, kept or not.
# Latency statistics (docs/mpi.md "Results"), each a sum, a maximum and a count: WM_DLAT_* data messages (eager and
# rendezvous data) from the send's post to their last byte delivered; WM_CLAT_* protocol messages (RTS, CTS) from
# their own post to their arrival; WM_UNM_* envelopes (eager data, RTS) from their arrival to being matched
(WM_READY, WM_HEAP, WM_STAMP, WM_BYTES, WM_TRANSFERS, WM_CONTROL, WM_TIMELINE, WM_DLAT_SUM, WM_DLAT_MAX, WM_DLAT_N,
 WM_CLAT_SUM, WM_CLAT_MAX, WM_CLAT_N, WM_UNM_SUM, WM_UNM_MAX, WM_UNM_N) = range(N_WC, N_WC + 16)
N_WM = N_WC + 16

# timeline[i, TL_*]: an interval in which a rank computed or was blocked in an MPI call
TL_RANK, TL_CALL, TL_START, TL_END = range(4)
N_TL = 4

MAX_FANOUT = 64  # most messages one collective round posts (a binomial root: log2 of the ranks)


class Mpi(NamedTuple):
    kind: int  # workloads.state.W_MPI
    n_tasks: int  # ranks
    packet_phits: int
    phit_bytes: int
    header_bytes: int  # added to every MPI message on the wire (envelope)
    eager_bytes: int  # payloads up to this size go eagerly; larger ones by rendezvous
    msg_headroom: int  # free message rows needed before a rank may post (arrivals of one cycle + a round)
    packets_per_message: int  # packetise's burst
    max_requests: int
    task_node: np.ndarray  # int64[R] node of each rank
    ops: np.ndarray  # int64[n_ops, N_OP]
    op_begin: np.ndarray  # int64[R]
    op_end: np.ndarray  # int64[R]
    req_list: np.ndarray  # int64[*] request slots of the waits
    counts: np.ndarray  # int64[*] alltoallv byte counts
    comm_off: np.ndarray  # int64[C]
    comm_size: np.ndarray  # int64[C]
    comm_members: np.ndarray  # int64[*]
    rc_off: np.ndarray  # int64[R + 1]: rank r's memberships are rc_comm/rc_me[rc_off[r]:rc_off[r + 1]]
    rc_comm: np.ndarray
    rc_me: np.ndarray
    tk: np.ndarray  # int64[R, N_RK]
    rq: np.ndarray  # int64[R * max_requests, N_RQ]
    msg: np.ndarray  # int64[C, N_MSG]
    wc: np.ndarray  # int64[N_WM]
    senders: np.ndarray  # int64[R] (message layer)
    inbox: np.ndarray  # int64[I] (message layer)
    ready: np.ndarray  # int64[R] ranks to run this cycle (first wc[WM_READY])
    heap_t: np.ndarray  # int64[2R + C] wake-up times (a binary heap of wc[WM_HEAP] entries; kernel.schedule):
    heap_r: np.ndarray  # int64[2R + C] computing ranks, messages arriving, hosts handing over messages
    seen: np.ndarray  # int64[R] stamps for ANY_SOURCE matching
    call_time: np.ndarray  # int64[N_CALLS] rank-cycles spent inside each kind of call
    msg_hist: np.ndarray  # int64[N_CALLS, HIST_BINS] data-message latency (WM_DLAT_*) per call kind
    timeline: np.ndarray  # int64[K, N_TL] the first K intervals of computation or blocking ([mpi] timeline_intervals)
    comm_matrix: np.ndarray  # int64[B, B] payload bytes sent from ranks of cell i to ranks of cell j
    comm_cell: int  # ranks per cell of comm_matrix (B = ceil(ranks / comm_cell) <= [mpi] comm_matrix_cells)
    scratch_peer: np.ndarray  # int64[MAX_FANOUT] a collective round's sends
    scratch_bytes: np.ndarray  # int64[MAX_FANOUT]
    mem_latency: int  # cycles of a shared-memory copy between two ranks of one node ([mpi] memory_latency_ns)
    mem_bytes_per_cycle: float  # its bandwidth ([mpi] memory_gbytes)
    compute_model: bool  # some rank's speed is not 1 or compute_noise > 0: computations go through compute_cycles
    rank_time: np.ndarray  # float64[R] 1 / speed of each rank's computation
    compute_noise: float  # relative standard deviation of each computation
    rank_rng: np.ndarray  # uint64[R] each rank's random stream (kernels/rng.py), for the noise
    # the host model (LogGP, [mpi] send_overhead_ns, recv_overhead_ns, gap_ns, byte_ns), in cycles
    o_s: int  # send overhead: a message leaves its host this long after the host starts it
    o_r: int  # receive overhead: a message is handled this long after it reaches the host (one at a time)
    g: int  # gap: consecutive messages of one host start at least this far apart
    G: float  # per payload byte, added to the send overhead (cycles per byte)
