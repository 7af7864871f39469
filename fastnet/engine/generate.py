"""The generate stage of the cycle loop (engine/loop.py) for a closed-loop workload, and its verdict.

- `advance_workload` is the stage: the workload reads the messages completed this cycle (its inbox,
  filled by `packet_arrived` in fire_events), advances its stage machines, and the message layer turns posted
  messages into packets for the nodes whose injection queue is empty. `workload_due` tells whether it has
  anything to do this cycle: a completed message, a timer the workload set (wc[WC_NEXT]), or a source queue
  that emptied since its last call; most cycles of a replay have none.
- `workload_status` ends the run when the workload has finished, failed, or stalled (nothing in flight, no
  timer pending, for `sim.watchdog` cycles).
"""

from __future__ import annotations

from numba import typeof, types

from ..kernels._jit import jit_inline, no_implementation
from ..kernels.state import C_CREATED, C_DELIVERED, C_DROPPED, C_EMPTIED, C_LAST_PROGRESS
from ..mpi.kernel import advance_mpi, mpi_kernels
from ..registry import (
    GEN_COLLECTIVE, GEN_GRAPH500, GEN_GRAPH500_FOGSIM, GEN_MPI, GEN_OPEN_LOOP, GEN_SR, W_A2A, W_A2O, W_GRAPH500,
    W_MPI, W_O2A, W_OPEN_LOOP, W_SR, WORKLOADS,
)
from ..workloads.graph500 import advance_graph500
from ..workloads.graph500_fogsim import advance_graph500_fogsim
from ..workloads.messages import packetise
from ..workloads.micro import advance_collective, advance_sr
from ..workloads.state import V_PAPER, WC_EMPTIED, WC_ERROR, WC_FINISHED, WC_N_INBOX, WC_NEXT, WC_WAKE

WS_RUNNING, WS_FINISHED, WS_FAILED, WS_STALLED = 0, 1, 2, 3


def generator_of(wl) -> int:
    """The generate stage (fastnet/registry.py GENERATORS) of a compiled Workload."""
    kind = int(wl.kind)
    if kind == W_OPEN_LOOP:
        return GEN_OPEN_LOOP
    if kind == W_SR:
        return GEN_SR
    if kind == W_GRAPH500:
        return GEN_GRAPH500 if int(wl.variant) == V_PAPER else GEN_GRAPH500_FOGSIM
    if kind == W_MPI:
        return GEN_MPI
    if kind in (W_A2A, W_O2A, W_A2O):
        return GEN_COLLECTIVE
    raise NotImplementedError(f"workload {WORKLOADS.entry_of(kind).name} has no generate stage")


@jit_inline
def advance_workload(wl, prm, st, t, generator):
    """The generate stage of a closed-loop run; `generator` (GEN_*) is a constant of the cycle loop, so only its
    workload's kernel is compiled."""
    packet_bytes = wl.packet_phits * wl.phit_bytes
    if generator == GEN_SR:  # each workload is a kernel of its own, compiled (and cached) on its own
        advance_sr(wl, packet_bytes, t)
    elif generator == GEN_GRAPH500:
        advance_graph500(wl, st.nd, packet_bytes, t)
    elif generator == GEN_GRAPH500_FOGSIM:
        advance_graph500_fogsim(wl, st.nd, packet_bytes, t)
    elif generator == GEN_COLLECTIVE:
        advance_collective(wl, packet_bytes, t)
    elif generator == GEN_MPI:
        advance_mpi(wl, t)
    else:
        no_implementation(generator)
        raise ValueError("no generate stage for this code")
    packetise(wl.msg, wl.tk, wl.wc, wl.senders, wl.task_node, st.pk, st.nd, st.node_act, st.ctr, st.sc, st.ts, prm,
              wl.packet_phits, wl.phit_bytes, wl.packets_per_message, t)
    wl.wc[WC_EMPTIED] = st.ctr[C_EMPTIED]


def workload_kernels(generator: int, wl, st) -> list[tuple[object, tuple]]:
    """advance_workload's kernel for `generator` (with those it calls compiled apart) and the argument types it is
    called with (engine/coldstart.py)."""
    t, wl_ = types.int64, typeof(wl)
    if generator == GEN_SR:
        return [(advance_sr, (wl_, t, t))]
    if generator == GEN_GRAPH500:
        return [(advance_graph500, (wl_, typeof(st.nd), t, t))]
    if generator == GEN_GRAPH500_FOGSIM:
        return [(advance_graph500_fogsim, (wl_, typeof(st.nd), t, t))]
    if generator == GEN_COLLECTIVE:
        return [(advance_collective, (wl_, t, t))]
    if generator == GEN_MPI:
        return mpi_kernels(wl)
    raise NotImplementedError(f"generator {generator} has no kernel")


@jit_inline
def workload_due(wc, ctr, t):
    return wc[WC_N_INBOX] > 0 or t >= wc[WC_NEXT] or ctr[C_EMPTIED] != wc[WC_EMPTIED]


@jit_inline
def workload_status(wc, ctr, watchdog, t):
    if wc[WC_ERROR] != 0:
        return WS_FAILED
    if wc[WC_FINISHED] != 0:
        return WS_FINISHED
    idle = ctr[C_CREATED] == ctr[C_DELIVERED] + ctr[C_DROPPED]
    if idle and t - max(ctr[C_LAST_PROGRESS], wc[WC_WAKE]) > watchdog:
        return WS_STALLED
    return WS_RUNNING
