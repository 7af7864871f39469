"""Open-loop Bernoulli sources: each node starts a packet in a cycle with probability load / packet_phits.

The Bernoulli process is sampled as geometric gaps per node (`next_arrival`), from the node's own random stream,
which is the same process at a fraction of the random draws. Destinations come from `Traffic` (patterns.py).
"""

from __future__ import annotations

from ..kernels._jit import jit
from ..kernels.pool import new_packet
from ..kernels.rng import below, geometric, uniform
from .patterns import P_GROUP, P_HOTSPOT, P_TABLE, P_UNIFORM


@jit
def pick_destination(tr, st, n, N):
    if tr.pattern == P_TABLE:
        return tr.table[n]
    if tr.pattern == P_UNIFORM or (tr.pattern == P_HOTSPOT and uniform(st.rng_node, n) >= tr.hot_frac):
        d = below(st.rng_node, n, N - 1)
        return d + 1 if d >= n else d
    if tr.pattern == P_HOTSPOT:
        return tr.hot[below(st.rng_node, n, len(tr.hot))]
    # P_GROUP: a random node of the target group
    g = tr.table[n]
    lo, hi = tr.group_start[g], tr.group_start[g + 1]
    return tr.group_nodes[lo + below(st.rng_node, n, hi - lo)]


@jit
def start_open_loop(tr, st):
    """First arrival of every sending node (cycle >= 0); silent nodes keep next_arrival = -1."""
    for n in range(len(st.next_arrival)):
        if tr.pattern == P_TABLE and tr.table[n] < 0:
            continue
        st.next_arrival[n] = geometric(st.rng_node, n, tr.rate) - 1


@jit
def generate_open_loop(tr, st, prm, t):
    N = len(st.next_arrival)
    for n in range(N):
        if st.next_arrival[n] == t:
            new_packet(st, prm, n, pick_destination(tr, st, n, N), tr.packet_phits, t)
            st.next_arrival[n] = t + geometric(st.rng_node, n, tr.rate)
