"""Simulation state as NamedTuples of preallocated arrays, and their Python-side constructors.

Memory grows with packets in flight, not with buffer capacity: a buffer is a FIFO of packet ids linked through
`pk_next`, and a VC costs a handful of integers whatever its size in phits. The packet pool and the event pool
are free lists; when either runs low the kernel returns GROW and `grow()` doubles it between chunks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .rng import seed_streams

# ctr[...] indices (int64 counters shared by all stages)
C_FREE_HEAD, C_FREE_COUNT, C_EV_FREE_HEAD, C_EV_FREE_COUNT = 0, 1, 2, 3
C_N_ACTIVE, C_N_ACTIVE_NODES, C_CREATED, C_DELIVERED = 4, 5, 6, 7
C_QUEUED, C_LAST_PROGRESS, C_MEAS_CREATED, C_MEAS_DELIVERED = 8, 9, 10, 11
C_INJECTED, C_STAMP = 12, 13
N_CTR = 16

# sc[...] indices (statistics of the measurement window)
S_COUNT, S_LAT_SUM, S_LAT_MAX, S_NET_SUM, S_NET_MAX, S_HOPS_SUM = 0, 1, 2, 3, 4, 5
S_OFFERED_PHITS, S_ACCEPTED_PHITS, S_HOPS_LOCAL, S_HOPS_GLOBAL, S_INJECTED_PHITS = 6, 7, 8, 9, 10
N_SC = 12

# time-series columns
TS_CREATED_PHITS, TS_DELIVERED_PHITS, TS_LAT_SUM, TS_LAT_COUNT, TS_IN_NETWORK, TS_QUEUED = 0, 1, 2, 3, 4, 5
N_TS = 6

EV_CREDIT, EV_DELIVER = 0, 1
HIST_SUB = 64  # sub-buckets per octave of the log-linear latency histogram (<= 1.6 % bin width)
HIST_BINS = 2 * HIST_SUB + 34 * HIST_SUB

# vc policies: how a packet's VC class follows from its route state
VCP_HOP, VCP_DRAGONFLY, VCP_NONE = 0, 1, 2


class Params(NamedTuple):
    vcs: int  # V virtual channels per input port
    buffer: int  # phits per VC
    delay: int  # router delay D: head arrival -> earliest switch grant
    speedup: float  # crossbar speedup S
    iters: int  # allocator iterations
    credit_delay: int
    vc_policy: int  # VCP_*
    vcs_per_class: int  # VCs of each class; class c uses [c*k, (c+1)*k)
    max_packet: int  # largest packet in phits (output-queue allowance)
    watchdog: int
    w0: int  # measurement window [w0, w1)
    w1: int
    ts_interval: int  # 0: no time series
    occupancy: bool  # integrate per-VC occupancy over the window
    wheel_mask: int  # event wheel size - 1 (a power of two minus one)


class State(NamedTuple):
    ctr: np.ndarray  # int64[N_CTR]
    # packet pool (capacity C)
    pk_src: np.ndarray  # int32[C]
    pk_dst: np.ndarray  # int32[C]
    pk_size: np.ndarray  # int16[C] phits
    pk_birth: np.ndarray  # int64[C] creation cycle
    pk_inject: np.ndarray  # int64[C] head entered the network
    pk_arrive: np.ndarray  # int64[C] head arrival at the current buffer
    pk_ready: np.ndarray  # int64[C] earliest switch grant at the current router
    pk_hops: np.ndarray  # int16[C] router-to-router hops taken
    pk_ghops: np.ndarray  # int8[C] global hops taken
    pk_phase: np.ndarray  # int8[C] route phase (Valiant: 0 to intermediate, 1 to destination)
    pk_inter: np.ndarray  # int32[C] intermediate router, -1 if none
    pk_out: np.ndarray  # int32[C] routed output port at the current router, -1 if not routed
    pk_cls: np.ndarray  # int16[C] VC class of the next hop
    pk_next: np.ndarray  # int32[C] FIFO / free-list link
    # input VCs (P*V), indexed port*V + vc
    vc_head: np.ndarray  # int32
    vc_tail: np.ndarray  # int32
    vc_free: np.ndarray  # int32: free phits as the upstream sees them (its credits)
    act_list: np.ndarray  # int32: non-empty VCs
    act_pos: np.ndarray  # int32: position in act_list, -1 if empty
    # ports (P)
    in_busy: np.ndarray  # int64: crossbar input busy until
    out_busy: np.ndarray  # int64: crossbar output busy until
    link_busy: np.ndarray  # int64: output link busy until
    rr_vc: np.ndarray  # int16: input arbiter pointer (VC)
    rr_in: np.ndarray  # int16: output arbiter pointer (local input port)
    in_stamp: np.ndarray  # int64: allocation round in which in_pick was set
    in_pick: np.ndarray  # int32: VC chosen by the input arbiter
    in_key: np.ndarray  # int32: its round-robin distance
    in_dvc: np.ndarray  # int32: downstream VC for that request (-1: ejection)
    in_match: np.ndarray  # int64: cycle in which the input was matched
    out_stamp: np.ndarray  # int64
    out_pick: np.ndarray  # int32: input port chosen by the output arbiter
    out_key: np.ndarray  # int32
    out_match: np.ndarray  # int64
    touched_in: np.ndarray  # int32 scratch lists of one allocation round
    touched_out: np.ndarray  # int32
    grants: np.ndarray  # int32: input ports granted this cycle
    port_phits: np.ndarray  # int64: phits sent per output port in the window
    # nodes (N)
    src_head: np.ndarray  # int32 source queue
    src_tail: np.ndarray  # int32
    node_busy: np.ndarray  # int64 injection link busy until
    node_act: np.ndarray  # int32 nodes with a non-empty source queue
    node_pos: np.ndarray  # int32
    next_arrival: np.ndarray  # int64 next Bernoulli arrival
    # events (E): credits and tail deliveries on a timing wheel
    ev_kind: np.ndarray  # int8
    ev_target: np.ndarray  # int32 VC index or packet id
    ev_amount: np.ndarray  # int32
    ev_next: np.ndarray  # int32
    wheel: np.ndarray  # int32[W] list heads
    # randomness
    rng_router: np.ndarray  # uint64[R]
    rng_node: np.ndarray  # uint64[N]
    buf: np.ndarray  # int32 scratch for candidate ports
    # statistics
    sc: np.ndarray  # int64[N_SC]
    lat_hist: np.ndarray  # int64[HIST_BINS] packet latency (creation -> tail delivered)
    net_hist: np.ndarray  # int64[HIST_BINS] network latency (head injected -> tail delivered)
    ts: np.ndarray  # int64[T, N_TS]
    vc_area: np.ndarray  # int64[P*V] phit-cycles reserved in the window (if Params.occupancy)
    vc_since: np.ndarray  # int64[P*V]


def _linked_free_list(n: int, start: int = 0) -> np.ndarray:
    nxt = np.arange(start + 1, start + n + 1, dtype=np.int32)
    nxt[-1] = -1
    return nxt


def new_state(n_routers: int, n_ports: int, n_nodes: int, max_radix: int, prm: Params, seed: int,
              n_timeseries: int, packets: int, events: int) -> State:
    V = prm.vcs
    PV = n_ports * V
    i32 = lambda n, v=0: np.full(n, v, dtype=np.int32)  # noqa: E731
    i64 = lambda n, v=0: np.full(n, v, dtype=np.int64)  # noqa: E731
    ctr = np.zeros(N_CTR, dtype=np.int64)
    ctr[C_FREE_HEAD], ctr[C_FREE_COUNT] = 0, packets
    ctr[C_EV_FREE_HEAD], ctr[C_EV_FREE_COUNT] = 0, events
    occ = PV if prm.occupancy else 1
    return State(
        ctr=ctr,
        pk_src=i32(packets), pk_dst=i32(packets), pk_size=np.zeros(packets, np.int16), pk_birth=i64(packets),
        pk_inject=i64(packets), pk_arrive=i64(packets), pk_ready=i64(packets), pk_hops=np.zeros(packets, np.int16),
        pk_ghops=np.zeros(packets, np.int8), pk_phase=np.zeros(packets, np.int8), pk_inter=i32(packets, -1),
        pk_out=i32(packets, -1), pk_cls=np.zeros(packets, np.int16), pk_next=_linked_free_list(packets),
        vc_head=i32(PV, -1), vc_tail=i32(PV, -1), vc_free=i32(PV, prm.buffer), act_list=i32(PV), act_pos=i32(PV, -1),
        in_busy=i64(n_ports), out_busy=i64(n_ports), link_busy=i64(n_ports),
        rr_vc=np.zeros(n_ports, np.int16), rr_in=np.zeros(n_ports, np.int16),
        in_stamp=i64(n_ports, -1), in_pick=i32(n_ports), in_key=i32(n_ports), in_dvc=i32(n_ports),
        in_match=i64(n_ports, -1), out_stamp=i64(n_ports, -1), out_pick=i32(n_ports), out_key=i32(n_ports),
        out_match=i64(n_ports, -1), touched_in=i32(n_ports), touched_out=i32(n_ports), grants=i32(n_ports),
        port_phits=i64(n_ports),
        src_head=i32(n_nodes, -1), src_tail=i32(n_nodes, -1), node_busy=i64(n_nodes), node_act=i32(n_nodes),
        node_pos=i32(n_nodes, -1), next_arrival=i64(n_nodes, -1),
        ev_kind=np.zeros(events, np.int8), ev_target=i32(events), ev_amount=i32(events),
        ev_next=_linked_free_list(events), wheel=i32(prm.wheel_mask + 1, -1),
        rng_router=seed_streams(seed, n_routers, 1), rng_node=seed_streams(seed, n_nodes, 2),
        buf=i32(max(max_radix, 1)),
        sc=np.zeros(N_SC, dtype=np.int64), lat_hist=i64(HIST_BINS), net_hist=i64(HIST_BINS),
        ts=np.zeros((max(n_timeseries, 1), N_TS), dtype=np.int64), vc_area=i64(occ), vc_since=i64(occ),
    )


def grow(st: State, packets: bool, events: bool) -> State:
    """Double the packet pool and/or the event pool; the new slots go to the front of the free list."""
    changes = {}
    if packets:
        n = len(st.pk_src)
        for name in ("pk_src", "pk_dst", "pk_size", "pk_birth", "pk_inject", "pk_arrive", "pk_ready", "pk_hops",
                     "pk_ghops", "pk_phase", "pk_cls"):
            old = getattr(st, name)
            changes[name] = np.concatenate([old, np.zeros(n, dtype=old.dtype)])
        changes["pk_inter"] = np.concatenate([st.pk_inter, np.full(n, -1, np.int32)])
        changes["pk_out"] = np.concatenate([st.pk_out, np.full(n, -1, np.int32)])
        nxt = _linked_free_list(n, n)
        nxt[-1] = st.ctr[C_FREE_HEAD]
        changes["pk_next"] = np.concatenate([st.pk_next, nxt])
        st.ctr[C_FREE_HEAD] = n
        st.ctr[C_FREE_COUNT] += n
    if events:
        n = len(st.ev_kind)
        changes["ev_kind"] = np.concatenate([st.ev_kind, np.zeros(n, np.int8)])
        changes["ev_target"] = np.concatenate([st.ev_target, np.zeros(n, np.int32)])
        changes["ev_amount"] = np.concatenate([st.ev_amount, np.zeros(n, np.int32)])
        nxt = _linked_free_list(n, n)
        nxt[-1] = st.ctr[C_EV_FREE_HEAD]
        changes["ev_next"] = np.concatenate([st.ev_next, nxt])
        st.ctr[C_EV_FREE_HEAD] = n
        st.ctr[C_EV_FREE_COUNT] += n
    return st._replace(**changes)
