"""Simulation state: a NamedTuple of preallocated arrays, and its Python-side constructors.

Packets, VCs, ports, nodes and events are records, one row each (columns named below). Kernel helpers take the
record arrays they touch: passing a whole NamedTuple into a call inside a loop costs reference counting on each
of its arrays (measured 10x slower), passing an array costs nothing.

Memory grows with packets in flight, not with buffer capacity: a VC buffer is a FIFO of packet ids linked through
the packets' NEXT column, and costs four int32 whatever its size in phits. The packet and event pools are free
lists; when either runs low the kernel returns GROW and `grow()` doubles it between chunks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..registry import VA_GREEDY, X_FLIT
from ._jit import jit_inline
from .rng import seed_streams

# ctr[...]: counters shared by all stages
C_FREE_HEAD, C_FREE_COUNT, C_EV_FREE_HEAD, C_EV_FREE_COUNT = 0, 1, 2, 3
C_N_ACTIVE, C_N_ACTIVE_NODES, C_CREATED, C_DELIVERED = 4, 5, 6, 7  # (C_N_ACTIVE: VCs on the ready list)
C_QUEUED, C_LAST_PROGRESS, C_MEAS_CREATED, C_MEAS_DELIVERED = 8, 9, 10, 11
C_INJECTED, C_STAMP, C_PHIT_HOPS = 12, 13, 14  # phit-hops: phits x switch traversals, whole run
C_EPOCH = 15  # the cycle the VC records' times (VC_ALLOC, VC_WAKE, VC_JOIN, int32) count from: rebase() moves it
C_DROPPED, C_MEAS_DROPPED = 16, 17  # packets dropped by failures (fastnet/faults): all, and measured ones
C_DROP_LINK, C_DROP_ROUTER, C_DROP_UNROUTABLE = 18, 19, 20  # by cause: on a link or in a router as it failed,
# or at a router with no live route to the destination (faults.allow_disconnected, or a detour a VC class lacks)
C_N_ASLEEP = 21  # VCs on the ready list whose head sleeps (VC_WAKE = ASLEEP; kernels/ready.py fall_asleep)
C_EMPTIED = 22  # source queues that emptied, whole run: a closed-loop workload packetises more then (generate.py)
N_CTR = 23
NEVER = 2**62  # a cycle that never comes: a timer not set, a link that frees at no known cycle
DROP_CAUSES = ("link", "router", "unroutable")  # the order of C_DROP_LINK ..

# pk[h, ...]: packet records (int64)
PK_SRC, PK_DST, PK_SIZE, PK_BIRTH, PK_INJECT, PK_ARRIVE, PK_READY = 0, 1, 2, 3, 4, 5, 6
PK_HOPS, PK_GHOPS, PK_PHASE, PK_INTER, PK_OUT, PK_CLS, PK_NEXT = 7, 8, 9, 10, 11, 12, 13
PK_MSG, PK_TAG = 14, 15  # free for workloads (message id, application tag)
PK_VCC = 16  # routing's VC state: torus dimension*4 + direction*2 + dateline partition (ugal_l xy_yx on a
# HyperX: the order), -1 if none
PK_DVC = 17  # the downstream VC this head holds since its VC allocation, -1 if none
PK_LOST = 18  # a failing link or router cut off its tail (fastnet/faults): C_DROP_LINK or C_DROP_ROUTER, the
# cause its destination discards it for; 0 if not
N_PK = 19

# vc[port*V + v, ...]: input VC records (int32)
VC_HEAD, VC_TAIL, VC_FREE, VC_JOIN, VC_CAP = 0, 1, 2, 3, 4  # FIFO ends, credits seen upstream, the cycle it
# joined the ready list (- C_EPOCH; UNLISTED: not on it; kernels/ready.py), capacity in phits (0: a VC this port
# does not have)
UNLISTED = -(1 << 31)
VC_ALLOC = 5  # earliest cycle at which another packet may be allocated this VC (Params.vc_realloc), - C_EPOCH
VC_OWNER = 6  # the upstream head packet this VC is allocated to, -1 if free, DRAINING once its packet's tail has
# gone in and, with Params.wait_tail_credit, the VC waits for the tail's credit (for all its phits to have left)
DRAINING = -2
VC_WAKE = 7  # its head waits for a busy input, output or link, or for a downstream VC to be free: off the ready
# list (parked, with an E_READY) until this cycle, - C_EPOCH; ASLEEP while it waits on the list for credits
ASLEEP = -(1 << 31)  # VC_WAKE of a head whose downstream VC lacks room and that nothing has changed for since
VC_WAITER = 8  # the input VC whose head holds this VC and sleeps for want of room in it (-1: none)
VC_AGE = 9  # how long its head had been ready when it joined the ready list (its place among those joining then)
N_VC = 10

# vc_grant[P*V, ...]: VC allocation by BookSim2's allocators (router.vc_choice "islip", "separable_input_first")
VG_PTR = 0  # as an output VC of the upstream router: round-robin pointer over that router's input VCs (port at
# the router x V + VC)
VG_STAMP, VG_KEY, VG_PICK = 1, 2, 3  # this allocation's grant: the asking input VC nearest the pointer
VG_ASKED = 4  # as an input VC (separable input-first): the output VC its head asked for
N_VG = 5

# vs[P*V, ...]: router.crossbar "flit" (BookSim2's flit-by-flit switch): each cycle of a packet's crossbar time is
# its own switch grant, and its head moves on to the next router after the first while the rest streams behind
VS_PKT, VS_OUT, VS_DVC = 0, 1, 2  # the packet this VC is streaming out (-1: none), its output port and downstream
# VC (-1: its node)
VS_SENT, VS_END = 3, 4  # cycles of crossbar time it has had, and when the phits they moved have left on the link
VS_TAIL = 5  # the cycle its tail has arrived here, once it is not fed (below)
VS_FEED = 6  # the upstream VC still streaming this VC's newest packet in (-1: its tail has arrived)
VS_NODE_PKT, VS_NODE_SENT, VS_NODE_END = 7, 8, 9  # an injection VC's newest packet that its node still sends in
# flit by flit as credits come back, as BookSim2's sources do (-1: none), the phits sent, and when they have left
N_VS = 10

# pt[port, ...]: port records (int64)
PT_IN_BUSY, PT_OUT_BUSY, PT_LINK_BUSY = 0, 1, 2  # crossbar input / crossbar output / link busy until
PT_RR_VC, PT_RR_IN = 3, 4  # round-robin pointers of the input arbiter (VC) and output arbiter (input port)
PT_IN_STAMP, PT_IN_PICK, PT_IN_KEY, PT_IN_DVC, PT_IN_MATCH = 5, 6, 7, 8, 9  # input arbiter's choice
PT_OUT_STAMP, PT_OUT_PICK, PT_OUT_KEY, PT_OUT_MATCH = 10, 11, 12, 13  # output arbiter's choice
PT_PHITS = 14  # phits sent in the measurement window
PT_WAIT = 15  # phits of the head packets at this router routed to this output and not yet granted
PT_HELD = 16  # phits reserved in this input port's VCs (buffered or in flight to it): sum of CAP - FREE
PT_RR_OUT = 17  # iSLIP: round-robin pointer of the input's accept arbiter (output port)
PT_IN_PKT, PT_IN_TAIL = 18, 19  # the packet this input last forwarded, and the cycle its tail arrived or arrives
# here: a link that fails before then cuts it (fastnet/faults)
N_PT = 20

# nd[node, ...]: node records (int64)
ND_HEAD, ND_TAIL, ND_BUSY, ND_POS, ND_NEXT_ARRIVAL = 0, 1, 2, 3, 4
ND_ARRIVAL_LINK = 5  # the next node on the same slot of the open-loop arrival wheel (traffic/openloop.py)
ND_LAST_VC = 6  # router.vc_choice other than "roomiest": the injection VC the node last sent a packet into
STREAMING = 1 << 62  # ND_BUSY of a node sending a packet that waits for credits (VS_NODE_PKT): until its tail goes
N_ND = 7

# ev[e, ...]: events on the timing wheel (int64)
EV_KIND, EV_TARGET, EV_AMOUNT, EV_NEXT = 0, 1, 2, 3
N_EV = 4
E_CREDIT, E_DELIVER, E_READY = 0, 1, 2  # EV_KIND values: credits back to a VC, a packet's tail reaching its
# node, a VC's head packet becoming ready for allocation

# sc[...]: statistics of the measurement window
S_COUNT, S_LAT_SUM, S_LAT_MAX, S_NET_SUM, S_NET_MAX, S_HOPS_SUM = 0, 1, 2, 3, 4, 5
S_OFFERED_PHITS, S_ACCEPTED_PHITS, S_HOPS_LOCAL, S_HOPS_GLOBAL, S_INJECTED_PHITS = 6, 7, 8, 9, 10
S_MEAS_INJECTED_PHITS = 11  # the measured packets' (pool.is_measured), as offered and accepted count them;
# S_INJECTED_PHITS counts every packet (an MPI run's network usage): beside background traffic, the ranks' too
N_SC = 12

# ts[row, ...]: time-series columns
TS_CREATED_PHITS, TS_DELIVERED_PHITS, TS_LAT_SUM, TS_LAT_COUNT, TS_IN_NETWORK, TS_QUEUED = 0, 1, 2, 3, 4, 5
N_TS = 6

HIST_SUB = 64  # sub-buckets per octave of the log-linear latency histogram (<= 1.6 % bin width)
HIST_BINS = 2 * HIST_SUB + 34 * HIST_SUB



class Params(NamedTuple):
    vcs: int  # V: VC slots per input port (the most any port class has; build/vcs.py)
    vc_magic: int  # divisor(vcs): port_of's v // vcs without a division
    vc_shift: int
    delay: int  # router delay D: head arrival -> earliest switch grant
    inject_latency: int  # a node's link to its router, that way (links.latency_injection; the other way, the
    # node port's P_LATENCY)
    head_delay: int  # a packet reaching the head of its VC -> earliest switch grant (routing and VC allocation
    # are done one packet at a time per VC, as in BookSim2's input-queued router)
    vc_realloc: int  # cycles after a packet's tail is granted before its downstream VC can be allocated again
    speedup: float  # crossbar speedup S
    iters: int  # allocator iterations
    allocator: int  # switch allocator (fastnet/registry.py SWITCH_ALLOCATORS): separable input-first or iSLIP
    credit_delay: int
    multi_eject: bool  # every input port may deliver to its node in the same cycle (no ejection link to share)
    routing: int  # fastnet/registry.py ROUTINGS
    vc_policy: int  # build/vcs.py VCP_*: how a hop's VC class follows from the route state
    n_escape: int  # adaptive: escape VC classes (Duato); 0 otherwise
    hop_limit: int  # ksp: longest path
    paths: int  # ksp: k
    adaptive_choice: bool  # ksp: path chosen by occupancy (else at random)
    up_port: int  # updown: how the up port is chosen (fastnet/registry.py UP_PORTS)
    fixed_min: bool  # min: one fixed shortest path per router pair (routing.min_path = "fixed")
    val_any: bool  # val: the intermediate is any router, and a packet reaching its destination's router on the way
    # to it stops there (routing.intermediate = "any": BookSim2's valiant_flatfly)
    inter_router: bool  # val, ugal on a dragonfly: the intermediate is a router drawn among all, one in the source's
    # group meaning the minimal path (routing.intermediate = "router": BookSim2's ugal_dragonflynew)
    indirect: int  # UGAL: Valiant candidates n_I
    penalty: float  # UGAL: weight of the Valiant cost
    threshold: float  # UGAL: added to the Valiant cost
    ugal_hops: bool  # UGAL-L: costs are occupancy x hops (else the occupancy alone)
    ugal_xy_yx: bool  # ugal_l on a HyperX, routing.order = "xy_yx": one of two dimension orders per packet (PK_VCC)
    ugal_vcs: int  # UGAL on a dragonfly: VC classes of minimally routed packets (kernels/routing.py vc_class)
    ugal_queue: int  # UGAL-L: which occupancy of a first port is read (fastnet/registry.py UGAL_QUEUES)
    reroute: bool  # route a waiting head again every cycle (adaptive choices follow the credits)
    max_packet: int  # largest packet in phits (output-queue allowance)
    vc_round_robin: bool  # router.vc_choice other than "roomiest": a head takes the first free VC from its VC's
    # round-robin pointer (vc_ptr), a node the next injection VC with room (BookSim2); else the one with the most room
    vc_alloc: int  # fastnet/registry.py VC_ALLOCATORS: VA_GREEDY (heads take VCs one at a time), or router.vc_choice
    # "islip" and "separable_input_first" (VA_ISLIP, VA_SEPARABLE), which allocate VCs as BookSim2's
    # allocators (kernels/vc_alloc.py allocate_vcs), with vc_round_robin's pointers on the input side
    input_speedup: int  # S: crossbar inputs per input port; VC v of a port uses input v mod S (BookSim2's
    # input_speedup): with S > 1 the input-side switch state of input j > 0 of port p is pt row p + j * P
    wait_tail_credit: bool  # router.wait_for_tail_credit: a downstream VC is allocated again only once the credit of
    # its packet's tail has come back (the VC is empty: BookSim2's wait_for_tail_credit = 1), a node's injection VC
    # likewise; else once the tail has crossed (left on the link, with the packet crossbar)
    crossbar: int  # fastnet/registry.py CROSSBARS: X_FLIT (router.crossbar = "flit"): each cycle of a packet's
    # crossbar time is its own switch grant, into an output queue bounded by credits (BookSim2's flit-by-flit router;
    # State.vs); X_PACKET: a packet holds its input and output until its tail has crossed
    watchdog: int
    skip_idle: bool  # sim.skip_idle (engine/loop.py network_idle)
    background: bool  # an MPI run beside open-loop background traffic (a job of kind open_loop): the open-loop
    # sources run too, and only their packets (PK_MSG < 0) are measured
    w0: int  # measurement window [w0, w1)
    w1: int
    ts_interval: int  # 0: no time series
    occupancy: bool  # integrate per-VC occupancy over the window
    faults: bool  # links or routers may be down (fastnet/faults): routing skips dead ports and may drop a packet
    wheel_mask: int  # event wheel size - 1 (a power of two minus one)


class State(NamedTuple):
    ctr: np.ndarray  # int64[N_CTR]
    pk: np.ndarray  # int64[C, N_PK] packet pool
    vc: np.ndarray  # int32[P*V, N_VC] input VCs
    act: np.ndarray  # int32[P*V] the awake heads' VCs in the order allocation looks at them (kernels/ready.py
    # walk_order, at each allocation)
    awake: np.ndarray  # int64[P*V / 64 + 1] bit v: VC v is on the ready list and its head not asleep
    awake_sum: np.ndarray  # int64[P*V / 4096 + 1] bit w: word w of `awake` is not zero
    pt: np.ndarray  # int64[P*S, N_PT] ports (rows P.. only the input-side switch state of crossbar inputs j > 0:
    # Params.input_speedup)
    nd: np.ndarray  # int64[N, N_ND] nodes
    node_act: np.ndarray  # int32[N] nodes with a non-empty source queue (first ctr[C_N_ACTIVE_NODES])
    blocked: np.ndarray  # int8[N] 1: no injection VC had room for the node's head packet, and no credit has come
    # back to one since (a byte each, apart from the node records: every injection credit clears it)
    touched_in: np.ndarray  # int32[P*S] scratch of one allocation round: crossbar inputs with a request
    touched_out: np.ndarray  # int32[P]: output ports with a request
    grants: np.ndarray  # int32[P*S]: crossbar inputs granted this cycle
    ev: np.ndarray  # int64[E, N_EV] event pool
    wheel: np.ndarray  # int64[W] event list heads, slot = due cycle mod W
    rng_router: np.ndarray  # uint64[R]
    rng_node: np.ndarray  # uint64[N]
    buf: np.ndarray  # int64[radix] scratch for candidate ports
    buf2: np.ndarray  # int64[radix] second scratch (UGAL candidates, ksp paths)
    sc: np.ndarray  # int64[N_SC]
    lat_hist: np.ndarray  # int64[HIST_BINS] packet latency (creation -> tail delivered)
    net_hist: np.ndarray  # int64[HIST_BINS] network latency (head injected -> tail delivered)
    ts: np.ndarray  # int64[T, N_TS]
    vc_area: np.ndarray  # int64[P*V] phit-cycles reserved in the window (only with Params.occupancy)
    vc_since: np.ndarray  # int64[P*V]
    vc_ptr: np.ndarray  # int32[P*V] (only with Params.vc_round_robin, else [1]): the output VC after the one the
    # VC's last head was allocated, numbered output port at its router x V + VC (kernels/vc_alloc.py allocate_vc)
    vc_grant: np.ndarray  # int64[P*V, N_VG] (only with Params.vc_alloc, else [1, N_VG]): VC allocation's arbiters
    vc_asking: np.ndarray  # int32[P*V] (only with Params.vc_alloc, else [1]): scratch: heads that asked for a VC
    vs: np.ndarray  # int64[P*V, N_VS] (only with X_FLIT Params.crossbar, else [1, N_VS]): the VCs' packets streaming
    # through the crossbar (VS_*)
    arrivals: np.ndarray  # int64[A] open-loop arrival wheel: first node whose next arrival is due at slot's cycles


MAX_DIVIDEND = 2**31  # `divide` is exact for dividends below this (VC ids, router ids, ...)


def divisor(n: int) -> tuple[int, int]:
    """(magic, shift) such that divide(x, magic, shift) = x // n for every 0 <= x < MAX_DIVIDEND: with l =
    ceil(log2 n), shift = 31 + l and magic = ceil(2**shift / n) (Granlund and Montgomery, "Division by invariant
    integers using multiplication", PLDI 1994, theorem 4.2: 2**shift <= magic * n <= 2**shift + 2**l), and x * magic
    < 2**63 since magic <= 2**32."""
    shift = 31 + (n - 1).bit_length()
    return -(-(1 << shift) // n), shift


@jit_inline
def divide(x, magic, shift):
    """x // n by a multiply and a shift, as a compiler divides by a constant, for an n known only at run time (a VC
    count, a dragonfly's group size), with (magic, shift) = divisor(n): a 64-bit division costs 10-40 cycles, and
    a packet's hop asks for such quotients a dozen times."""
    return (x * magic) >> shift


@jit_inline
def port_of(prm, v):
    """The port of VC v (row v of the VC records: port * vcs + VC), v // prm.vcs."""
    return divide(v, prm.vc_magic, prm.vc_shift)


def first_pool_rows(n_nodes: int) -> int:
    """Rows of the packet and the event pool a run starts with (grow() doubles them as the kernel asks)."""
    return 2 * n_nodes + 1024


def _free_rows(n: int, start: int = 0) -> np.ndarray:
    """Free-list links for rows start..start+n-1, ending in -1."""
    nxt = np.arange(start + 1, start + n + 1, dtype=np.int64)
    nxt[-1] = -1
    return nxt


def _rows(n: int, row: np.ndarray, col_values: np.ndarray | None = None, cols: tuple[int, ...] = ()) -> np.ndarray:
    """n copies of `row`, with columns `cols` of row i = col_values[i]. Each row is written as one opaque item of
    row.nbytes: one pass, as fast as a jitted loop on a 14-million-port network (numpy's broadcast of a short row
    takes 1.6x as long), without compiling one on a cold start."""
    a = np.empty((n, len(row)), dtype=row.dtype)
    item = np.dtype((np.void, row.nbytes))
    a.view(item)[:, 0] = row.view(item)[0]
    for c in cols:
        a[:, c] = col_values
    return a


def new_state(n_routers: int, n_ports: int, n_nodes: int, max_radix: int, prm: Params, seed: int,
              n_timeseries: int, packets: int, events: int, vc_cap: np.ndarray, arrival_slots: int = 1) -> State:
    """vc_cap: int32[P, V] capacity of each VC in phits (0 for VC slots a port does not have); arrival_slots: size
    of the open-loop arrival wheel (a power of two)."""
    PV = n_ports * prm.vcs
    ctr = np.zeros(N_CTR, dtype=np.int64)
    ctr[C_FREE_COUNT] = packets
    ctr[C_EV_FREE_COUNT] = events
    pk = np.zeros((packets, N_PK), dtype=np.int64)
    pk[:, PK_NEXT] = _free_rows(packets)
    pk[:, [PK_VCC, PK_DVC]] = -1
    vc_row = np.zeros(N_VC, dtype=np.int32)
    vc_row[[VC_HEAD, VC_TAIL, VC_OWNER, VC_WAITER]] = -1
    vc_row[VC_JOIN] = UNLISTED
    vc = _rows(PV, vc_row, vc_cap.reshape(-1), (VC_CAP, VC_FREE))
    pt_row = np.zeros(N_PT, dtype=np.int64)
    pt_row[[PT_IN_STAMP, PT_IN_MATCH, PT_OUT_STAMP, PT_OUT_MATCH, PT_IN_PKT]] = -1
    pt = _rows(n_ports * prm.input_speedup, pt_row)
    nd = np.full((n_nodes, N_ND), -1, dtype=np.int64)
    nd[:, ND_BUSY] = 0
    ev = np.zeros((events, N_EV), dtype=np.int64)
    ev[:, EV_NEXT] = _free_rows(events)
    occ = PV if prm.occupancy else 1
    return State(
        ctr=ctr, pk=pk, vc=vc, act=np.zeros(PV, np.int32), awake=np.zeros(PV // 64 + 1, np.int64),
        awake_sum=np.zeros(PV // 4096 + 1, np.int64), pt=pt, nd=nd, node_act=np.zeros(n_nodes, np.int32),
        blocked=np.zeros(n_nodes, np.int8),
        touched_in=np.zeros(n_ports * prm.input_speedup, np.int32), touched_out=np.zeros(n_ports, np.int32),
        grants=np.zeros(n_ports * prm.input_speedup, np.int32), ev=ev,
        wheel=np.full(prm.wheel_mask + 1, -1, dtype=np.int64),
        rng_router=seed_streams(seed, n_routers, 1), rng_node=seed_streams(seed, n_nodes, 2),
        buf=np.zeros(max(max_radix, 64), np.int64), buf2=np.zeros(max(max_radix, 64), np.int64),
        sc=np.zeros(N_SC, np.int64),
        lat_hist=np.zeros(HIST_BINS, np.int64), net_hist=np.zeros(HIST_BINS, np.int64),
        ts=np.zeros((max(n_timeseries, 1), N_TS), np.int64),
        vc_area=np.zeros(occ, np.int64), vc_since=np.zeros(occ, np.int64),
        vc_ptr=np.zeros(PV if prm.vc_round_robin else 1, np.int32),
        vc_grant=np.zeros((PV if prm.vc_alloc != VA_GREEDY else 1, N_VG), np.int64),
        vc_asking=np.zeros(PV if prm.vc_alloc != VA_GREEDY else 1, np.int32),
        vs=np.full((PV if prm.crossbar == X_FLIT else 1, N_VS), -1, np.int64),
        arrivals=np.full(arrival_slots, -1, np.int64),
    )


EPOCH_SPAN = 1 << 29  # cycles a kernel call may run past C_EPOCH: every stored VC time stays within int32


def rebase(st: State, t: int) -> None:
    """Move C_EPOCH to cycle t (between kernel calls): the VC records' times count from it again. Times long past
    are clamped to EPOCH_SPAN before t, which compares the same (every future one lies within a packet's time or
    the wheel's horizon of t; a VC on the ready list for longer than that ties on its join cycle with any as old,
    then goes by age and VC)."""
    old, vc = int(st.ctr[C_EPOCH]), st.vc
    asleep = vc[:, VC_WAKE] == ASLEEP  # not a time
    unlisted = vc[:, VC_JOIN] == UNLISTED
    for col in (VC_ALLOC, VC_WAKE, VC_JOIN):
        vc[:, col] = np.maximum(vc[:, col].astype(np.int64) + (old - t), -EPOCH_SPAN)
    vc[asleep, VC_WAKE] = ASLEEP
    vc[unlisted, VC_JOIN] = UNLISTED
    st.ctr[C_EPOCH] = t


def grow(st: State, packets: bool, events: bool) -> State:
    """Double the packet pool and/or the event pool; the new rows go to the front of the free list."""
    changes = {}
    if packets:
        n = len(st.pk)
        extra = np.zeros((n, N_PK), dtype=np.int64)
        extra[:, PK_NEXT] = _free_rows(n, n)
        extra[:, [PK_VCC, PK_DVC]] = -1
        extra[-1, PK_NEXT] = st.ctr[C_FREE_HEAD]
        changes["pk"] = np.concatenate([st.pk, extra])
        st.ctr[C_FREE_HEAD] = n
        st.ctr[C_FREE_COUNT] += n
    if events:
        n = len(st.ev)
        extra = np.zeros((n, N_EV), dtype=np.int64)
        extra[:, EV_NEXT] = _free_rows(n, n)
        extra[-1, EV_NEXT] = st.ctr[C_EV_FREE_HEAD]
        changes["ev"] = np.concatenate([st.ev, extra])
        st.ctr[C_EV_FREE_HEAD] = n
        st.ctr[C_EV_FREE_COUNT] += n
    return st._replace(**changes)
