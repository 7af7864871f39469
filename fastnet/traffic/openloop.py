"""Open-loop Bernoulli sources: each node starts a packet in a cycle with probability load / (mean packet size);
its size is drawn from Traffic.sizes when it lists more than one.

The Bernoulli process is sampled as geometric gaps per node (ND_NEXT_ARRIVAL), from the node's own random
stream: the same process for a fraction of the random draws. Destinations come from `Traffic` (patterns.py).
Each node waits on a wheel of arrival slots (State.arrivals, slot = cycle mod its size, linked through
ND_ARRIVAL_LINK), so a cycle costs the nodes due in it, not every node: a million-node network at 10 % load
visits about 9,000 nodes a cycle instead of a million.
"""

from __future__ import annotations

from ..kernels._jit import jit, jit_callee, jit_inline
from ..kernels.pool import new_packet
from ..kernels.rng import below, geometric, uniform
from ..kernels.state import ND_ARRIVAL_LINK, ND_NEXT_ARRIVAL, PK_MSG
from .patterns import INJ_BERNOULLI, PAT_HOTSPOT, PAT_JOB, PAT_TABLE, PAT_UNIFORM


@jit_inline
def arrival_gap(process, rate, alpha, beta, r1, rng, n, on):
    """Cycles to node n's next packet. Bernoulli: geometric. BookSim2's on/off source (src/injection.cpp): every
    cycle the node's state advances (on stays on with probability 1 - beta, off turns on with alpha), then an on
    node starts a packet with probability r1. A node is on when it starts one, so only the first arrival needs
    the state (`on`): no per-node state is kept."""
    if process == INJ_BERNOULLI:
        return geometric(rng, n, rate)
    gap = 0
    while True:
        gap += 1
        on = uniform(rng, n) >= beta if on else uniform(rng, n) < alpha
        if on and uniform(rng, n) < r1:
            return gap


@jit_inline
def pick_destination(pattern, table, hot, hot_frac, group_start, group_nodes, to_self, rng, n, N):
    if pattern == PAT_TABLE:
        return table[n]
    if pattern == PAT_UNIFORM or (pattern == PAT_HOTSPOT and uniform(rng, n) >= hot_frac):
        if to_self:
            return below(rng, n, N)
        d = below(rng, n, N - 1)
        return d + 1 if d >= n else d
    if pattern == PAT_HOTSPOT:
        return hot[below(rng, n, len(hot))]
    if pattern == PAT_JOB:  # another node of n's job, uniformly (group_nodes sorted: skip n's own place)
        lo, hi = group_start[table[n]], group_start[table[n] + 1]
        k = lo + below(rng, n, hi - lo - 1)
        return group_nodes[k + 1] if group_nodes[k] >= n else group_nodes[k]
    # PAT_GROUP: a random node of the target group
    g = table[n]
    lo, hi = group_start[g], group_start[g + 1]
    return group_nodes[lo + below(rng, n, hi - lo)]


@jit_inline
def wait_arrival(nd, arrivals, n):
    """Put node n on the wheel slot of its next arrival (a slot holds every lap of the wheel: due nodes are the
    ones whose ND_NEXT_ARRIVAL is the current cycle)."""
    slot = nd[n, ND_NEXT_ARRIVAL] & (len(arrivals) - 1)
    nd[n, ND_ARRIVAL_LINK] = arrivals[slot]
    arrivals[slot] = n


@jit
def start_open_loop(pattern, table, process, rate, alpha, beta, r1, nd, arrivals, rng):
    """First arrival of every sending node (cycle >= 0); silent nodes keep ND_NEXT_ARRIVAL = -1, off the wheel.
    Called from Python with the few arrays it uses: numba's entry unboxes each array of a NamedTuple argument,
    and the whole State cost a cold start 0.2 s more."""
    for n in range(len(nd)):
        if (pattern == PAT_TABLE or pattern == PAT_JOB) and table[n] < 0:
            continue
        on = process != INJ_BERNOULLI and below(rng, n, 2) == 1  # on/off: BookSim2's RandomInt(1)
        nd[n, ND_NEXT_ARRIVAL] = arrival_gap(process, rate, alpha, beta, r1, rng, n, on) - 1
        wait_arrival(nd, arrivals, n)


@jit_callee
def generate_open_loop(tr, prm, st, t):
    nd, rng, arrivals = st.nd, st.rng_node, st.arrivals
    table, hot, gs, gn = tr.table, tr.hot, tr.group_start, tr.group_nodes
    N = len(nd)
    slot = t & (len(arrivals) - 1)
    n = arrivals[slot]
    arrivals[slot] = -1  # the nodes of this slot wait again below, on later laps or later slots
    while n >= 0:
        later = nd[n, ND_ARRIVAL_LINK]
        if nd[n, ND_NEXT_ARRIVAL] == t:
            dst = pick_destination(tr.pattern, table, hot, tr.hot_frac, gs, gn, tr.to_self, rng, n, N)
            size = tr.sizes[0] if len(tr.sizes) == 1 else tr.sizes[below(rng, n, len(tr.sizes))]
            h = new_packet(st.pk, nd, st.node_act, st.ctr, st.sc, st.ts, prm, n, dst, size, t, True)
            st.pk[h, PK_MSG] = -1  # no workload's message (background traffic beside an MPI run)
            nd[n, ND_NEXT_ARRIVAL] = t + arrival_gap(tr.process, tr.rate, tr.alpha, tr.beta, tr.r1, rng, n, True)
        wait_arrival(nd, arrivals, n)
        n = later
