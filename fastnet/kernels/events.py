"""What the engine's events do to the routers (engine/loop.py fire_events): credits coming back upstream
(credits_back) and a packet's tail reaching its node (record_delivery)."""

from __future__ import annotations

from ._jit import jit_inline
from .pool import hist_bin, is_measured, vc_reserve
from .ready import wake
from .state import (
    C_DELIVERED, C_EPOCH, C_MEAS_DELIVERED, DRAINING, PK_BIRTH, PK_GHOPS, PK_HOPS, PK_INJECT, PK_SIZE,
    S_ACCEPTED_PHITS, S_COUNT, S_HOPS_GLOBAL, S_HOPS_LOCAL, S_HOPS_SUM, S_LAT_MAX, S_LAT_SUM, S_NET_MAX, S_NET_SUM,
    TS_DELIVERED_PHITS, TS_LAT_COUNT, TS_LAT_SUM, VC_CAP, VC_FREE, VC_OWNER, VC_WAITER,
)
from .vc_alloc import free_vc


@jit_inline
def record_delivery(pk, sc, lat_hist, net_hist, ts, ctr, prm, h, t):
    """Statistics of packet h whose tail reached its destination node at cycle t."""
    size = pk[h, PK_SIZE]
    birth = pk[h, PK_BIRTH]
    measured = is_measured(pk, prm, h)
    if measured and prm.w0 <= t < prm.w1:
        sc[S_ACCEPTED_PHITS] += size
    if measured and prm.w0 <= birth < prm.w1:
        lat = t - birth
        net = t - pk[h, PK_INJECT]
        sc[S_COUNT] += 1
        sc[S_LAT_SUM] += lat
        sc[S_NET_SUM] += net
        sc[S_LAT_MAX] = max(sc[S_LAT_MAX], lat)
        sc[S_NET_MAX] = max(sc[S_NET_MAX], net)
        sc[S_HOPS_SUM] += pk[h, PK_HOPS]
        sc[S_HOPS_GLOBAL] += pk[h, PK_GHOPS]
        sc[S_HOPS_LOCAL] += pk[h, PK_HOPS] - pk[h, PK_GHOPS]
        lat_hist[hist_bin(lat)] += 1
        net_hist[hist_bin(net)] += 1
        ctr[C_MEAS_DELIVERED] += 1
    if prm.ts_interval > 0:
        row = t // prm.ts_interval
        ts[row, TS_DELIVERED_PHITS] += size
        ts[row, TS_LAT_SUM] += t - birth
        ts[row, TS_LAT_COUNT] += 1
    ctr[C_DELIVERED] += 1


@jit_inline
def credits_back(st, prm, v, amount, t):
    """`amount` phits of VC v's buffer are free again (their credits are back upstream). With wait_tail_credit a VC
    whose last packet's tail has gone in is free once it is empty: from the next cycle, when BookSim2's VC
    allocator would see it (its credit reaches the router a cycle after fastnet's: docs/booksim.md)."""
    vc = st.vc
    vc_reserve(vc, st.pt, st.vc_area, st.vc_since, prm, v, -amount, t)
    wake(st, vc[v, VC_WAITER], t - st.ctr[C_EPOCH])
    if prm.wait_tail_credit and vc[v, VC_OWNER] == DRAINING and vc[v, VC_FREE] == vc[v, VC_CAP]:
        free_vc(vc, st.ctr, prm, v, t + 1)
