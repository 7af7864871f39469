"""The router's timing, which every stage applies: input-queued virtual cut-through routers with credits and VCs.
The stages are one module each (inject.py, allocate.py with vc_alloc.py and ready.py, traverse.py; events.py
for what credits and deliveries do); engine/loop.py runs them once a cycle.

Timing of one hop (virtual cut-through): a link sends a packet of L phits in `serialise` cycles, L at the
reference rate of one phit per cycle, more on a slower link (units.py). A packet granted at cycle t crosses the
crossbar in ceil(L/S) cycles (S = speedup) but never before its own tail has arrived; its head starts on the link
when the link is free, and the link is held until the tail has gone: the link's own time, or longer when the tail
still streams in from a slower link. How the crossbar is shared (`router.crossbar`): "packet" holds the input and
the output until the tail has crossed, into an output queue of one packet, and frees the downstream VC for
another packet once the tail has left on the link; "flit" (BookSim2's router, which moves flits) makes each cycle
of crossbar time a grant of its own, and the head goes on to the next router after the first while its VC
streams the rest behind it (`cross_flits`); the output queue is bounded only by the credits of the VCs
downstream, and the downstream VC is free once the tail has crossed. The tail reaches the next router `latency`
cycles after it left, the head as if the packet had crossed at this link's rate (with a flit crossbar, `latency`
after its own first phits left), and the packet may be granted `delay` cycles after its head arrived. A
downstream VC is reserved only if all L phits fit (VCT). The L credits return to the upstream when the tail has
left the buffer, plus `credit_delay`, plus the link latency. Allocation reads the state the previous cycle left
and `traverse` commits afterwards, so the order in which routers are visited does not matter. A node has one
ejection channel shared by its router's input ports (`router.ejection = "single"`), or takes a packet from each
of them at once ("multiple", FSIN's multiple consumption).

The kernels are compiled without reference counting (`_jit.jit`), so handing the State/Topology tuples to a
stage costs nothing; stages pass plain arrays to the helpers in their loops.
"""

from __future__ import annotations

import numpy as np

from ..build.network import P_LATENCY, P_PERIOD
from ..registry import X_FLIT
from ._jit import jit_callee, jit_inline
from .state import (
    PK_ARRIVE, PK_DVC, PK_OUT, PK_READY, PK_SIZE, VC_HEAD, VS_DVC, VS_END, VS_FEED, VS_NODE_END, VS_NODE_PKT,
    VS_NODE_SENT, VS_OUT, VS_PKT, VS_SENT, VS_TAIL, port_of,
)


@jit_inline
def serialise(port, p, size):
    """Cycles the link of port p takes to send `size` phits: `size` at one phit per cycle (the reference rate),
    more on a slower link (P_PERIOD: cycles per phit in 1/65536ths, units.PERIOD_ONE)."""
    return (np.int64(size) * port[p, P_PERIOD] + 65535) >> 16


@jit_inline
def crossing(prm, size):
    """Cycles of crossbar time a packet of `size` phits takes at speedup S (no division at S = 1, the usual case)."""
    if prm.speedup == 1.0:
        return np.int64(size)
    return np.int64(np.ceil(size / prm.speedup))


@jit_inline
def phits_crossed(prm, size, k):
    """Phits of a packet of `size` phits that k cycles of flit crossbar time have moved."""
    return min(np.int64(size), np.int64(np.ceil(k * prm.speedup)))


@jit_inline
def room_needed(prm, size, k):
    """Free phits the downstream VC must have for cycle k of a packet's crossbar time: the whole packet (virtual
    cut-through), or with a flit crossbar the phits that cycle moves (credit by credit: BookSim2's wormhole flow
    control with VCs)."""
    if prm.crossbar == X_FLIT:
        return phits_crossed(prm, size, k + 1) - phits_crossed(prm, size, k)
    return size


@jit_inline
def streaming(prm, vs, v):
    """VC v is streaming a packet out through a flit crossbar (its first cycle of crossbar time is past)."""
    return prm.crossbar == X_FLIT and vs[v, VS_PKT] >= 0


@jit_inline
def xbar_input(prm, n_ports, v):
    """The pt row holding the input-side switch state (busy time, arbiters, round-robin pointers) of VC v's
    crossbar input: its port p, or with input_speedup S > 1 input v mod S of the port's S, row p + (v mod S) * P
    (BookSim2's expanded input p * S + v mod S)."""
    p = port_of(prm, v)
    if prm.input_speedup == 1:
        return p
    return p + ((v - p * prm.vcs) % prm.input_speedup) * n_ports


@jit_inline
def xbar_local(ps, prm, n_ports, r, x):
    """Crossbar input row x's place among router r's crossbar inputs (port, then input of the port): the order of
    its output arbiters' round robin."""
    if prm.input_speedup == 1:
        return x - ps[r]
    return (x % n_ports - ps[r]) * prm.input_speedup + x // n_ports


@jit_inline
def phits_sent_in(prm, pk, vs, v, h):
    """Phits of packet h sent into VC v so far, whose credits v holds: with a flit crossbar, only those the VC
    upstream or the node has sent while it still sends h in; else (and then) all of them."""
    size = pk[h, PK_SIZE]
    if prm.crossbar != X_FLIT:
        return size
    f = vs[v, VS_FEED]
    if f >= 0 and vs[f, VS_PKT] == h:
        return phits_crossed(prm, size, vs[f, VS_SENT])
    if vs[v, VS_NODE_PKT] == h:
        return vs[v, VS_NODE_SENT]
    return size


@jit_inline
def tail_arrives(pk, vs, w, h, tail, span):
    """Flit crossbar: packet h's tail reaches VC w at `tail`, its phits `span` cycles on the link in. The stream
    out of w notes it; a packet still queued in w has its phits taken to arrive as late as the tail allows."""
    if vs[w, VS_PKT] == h:
        vs[w, VS_TAIL] = tail
    else:
        pk[h, PK_ARRIVE] = tail - span


@jit_callee
def chunk_ready(port, pk, vs, prm, v, h, k):
    """With a flit crossbar: the first cycle at which packet h in VC v may have its cycle k of crossbar time (the
    head's: its router delay over), once the last phit it moves is here; -1 if that phit has not left the
    router upstream (or its node) yet. While the upstream VC or the node still sends h in, a phit is taken to
    arrive as late as the phits sent since allow; after that, as late as the tail does."""
    size = pk[h, PK_SIZE]
    last = phits_crossed(prm, size, k + 1)
    f = vs[v, VS_FEED]
    p = port_of(prm, v)
    if f >= 0 and vs[f, VS_PKT] == h:
        o = vs[f, VS_OUT]
        sent = phits_crossed(prm, size, vs[f, VS_SENT])
        if sent < last:
            return -1
        at = vs[f, VS_END] + port[o, P_LATENCY] - 1 - (serialise(port, o, sent) - serialise(port, o, last))
    elif vs[v, VS_NODE_PKT] == h:  # its node still sends it in
        sent = vs[v, VS_NODE_SENT]
        if sent < last:
            return -1
        at = vs[v, VS_NODE_END] + prm.inject_latency - 1 - (serialise(port, p, sent) - serialise(port, p, last))
    else:
        tail = vs[v, VS_TAIL] if vs[v, VS_PKT] == h else pk[h, PK_ARRIVE] + serialise(port, p, size)
        at = tail - 1 - (serialise(port, p, size) - serialise(port, p, last))
    return max(at, pk[h, PK_READY]) if k == 0 else at


@jit_inline
def head_route(pk, vc, vs, prm, v):
    """(output, downstream VC) of the packet VC v asks the switch for: its head's, or the one it is streaming."""
    if streaming(prm, vs, v):
        return vs[v, VS_OUT], vs[v, VS_DVC]
    h = vc[v, VC_HEAD]
    return pk[h, PK_OUT], pk[h, PK_DVC]
