"""The crew: the threads of a run (sim.threads). The cycle loop runs on the main thread; each other thread runs a
crew member (engine/loop.py crew_member) that waits, spinning, for an allocation round to walk its part of the
ready list (allocate.py ask_part): the heads of a contiguous range of routers. A part's walk reads and writes
only its own routers' records (the heads' routes, their random streams, the downstream VCs they take, their
ports' arbiters), so parts run side by side; what it would write into shared records (a head leaving the ready
list until a known cycle, falling asleep, dropped) it lists instead, and the main thread does it after the walk,
part after part, in the order of the list: what one thread walking the whole list does, in the same order. So a
run's results are the same for every thread count.

The main thread and the members meet through `ctl` (a line of 8 int64s for the main thread's word and one for
each member's answer): the main thread writes a round's cycle and stamp, then its sequence number (a release
store); a member that sees the new number walks its part and answers with the same number."""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from ..build.network import P_ROUTER
from ._jit import jit, jit_inline, load_acquire, sched_yield, store_release
from .state import port_of

LINE = 8  # int64s a cache line: each thread's word in a line of its own
SEQ, CMD, CYCLE, STAMP, ERROR, SPLIT = 0, 1, 2, 3, 4, 5  # the main thread's line (SPLIT: rounds the crew
# walked in parts since the run began)
ASK, STOP = 1, 2  # commands
LO, HI, BASE_IN, BASE_OUT, LIVELY, N_DEFER, N_FIRST, N_SECOND = range(8)  # a part's row
SPINS = 2000  # loads of a flag before a waiting thread yields the CPU (more threads than cores)
MIN_SPLIT = 16  # heads per thread below which the main thread walks a round alone (a part costs a round trip
# between threads, 0.1-1 us, a head a few hundred ns)
THREADS_FROM_PORTS = 1 << 17  # sim.threads = "auto" runs networks of fewer ports on one thread: their records stay
# in cache, a second core's writes cost the main thread about what its walk saves, and a replay's rounds are too
# small to split (perf/README.md, "Threads")


class Crew(NamedTuple):
    threads: int  # the run's threads: parts of an allocation round
    ctl: np.ndarray  # int64[(threads + 1) * LINE] the main thread's word, then each member's answer
    part: np.ndarray  # int64[threads, LINE] each part's range of the ready list, its places in the scratch
    # lists and what its walk found (LO..N_DEFER)
    defer: np.ndarray  # int64[P*V] (threads > 1, else [1]): a part's heads to park, drop or put to sleep, by
    # place in the ready list: VC << 2 | what (allocate.py DEFER_*)
    buf: np.ndarray  # int64[threads, radix] each member's routing scratch (the State's buf, buf2 are the main's)
    buf2: np.ndarray


def usable_cores() -> int:
    """The cores this process may run on, at most NUMBA_NUM_THREADS when that is set."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    cap = os.environ.get("NUMBA_NUM_THREADS", "")
    return max(1, min(n, int(cap)) if cap.isdigit() and int(cap) > 0 else n)


def run_threads(cfg: dict[str, Any], n_ports: int) -> int:
    """The threads a run of `cfg` on a network of n_ports ports uses (sim.threads)."""
    threads = cfg["sim"].get("threads", "auto")
    if threads != "auto":
        return int(threads)
    return usable_cores() if n_ports >= THREADS_FROM_PORTS else 1


def new_crew(threads: int, n_vcs: int, radix: int) -> Crew:
    """The crew of a run of `threads` threads over n_vcs input VCs."""
    width = max(radix, 64)
    return Crew(threads=int(threads), ctl=np.zeros((threads + 1) * LINE, np.int64),
                part=np.zeros((threads, LINE), np.int64),
                defer=np.zeros(n_vcs if threads > 1 else 1, np.int64),
                buf=np.zeros((threads, width), np.int64), buf2=np.zeros((threads, width), np.int64))


def crew_bytes(threads: int, n_vcs: int) -> int:
    """What new_crew allocates beyond a few kilobytes: the deferred heads' list (fastnet/memory.py)."""
    return 8 * n_vcs if threads > 1 else 0


def reset_crew(crew: Crew) -> None:
    """Before the members start on a loop's call: no round asked or answered yet (the count of split rounds kept)."""
    split = crew.ctl[SPLIT]
    crew.ctl[:] = 0
    crew.ctl[SPLIT] = split


@jit_inline
def spin(spins):
    """One more turn of a waiting loop that has turned `spins` times: the CPU is given up every SPINS turns (more
    threads than cores). Returns the new count."""
    spins += 1
    if spins < SPINS:
        return spins
    sched_yield()
    return 0


@jit_inline
def wait_change(ctl, i, seen):
    """Spin until ctl[i] differs from `seen`; return it."""
    spins = 0
    value = load_acquire(ctl, i)
    while value == seen:
        spins = spin(spins)
        value = load_acquire(ctl, i)
    return value


@jit_inline
def split_round(ps, port, prm, crew, act, n_heads, S):
    """Cut the ready list's n_heads places into crew.threads parts of about as many heads, each a whole number of
    routers (a router's heads are in consecutive places), and give each part its places in the scratch lists
    of crossbar inputs and outputs with a request (st.touched_in, touched_out): from its first router's first
    port (times the input speedup S) on, which no part before it reaches. Returns how many parts there are (1:
    the main thread walks alone)."""
    parts = crew.threads if n_heads >= MIN_SPLIT * crew.threads else 1
    lo = 0
    for p in range(parts):
        hi = n_heads if p == parts - 1 else max(lo, n_heads * (p + 1) // parts)
        if 0 < hi < n_heads:  # on to the end of the router of place hi - 1
            r = port[port_of(prm, act[hi - 1]), P_ROUTER]
            while hi < n_heads and port[port_of(prm, act[hi]), P_ROUTER] == r:
                hi += 1
        crew.part[p, LO] = lo
        crew.part[p, HI] = hi
        first = ps[port[port_of(prm, act[lo]), P_ROUTER]] if 0 < lo < n_heads else 0
        crew.part[p, BASE_IN] = first * S
        crew.part[p, BASE_OUT] = first
        lo = hi
    return parts


@jit_inline
def call_crew(crew, t, stamp):
    """Start the members on a round's parts; returns its sequence number."""
    ctl = crew.ctl
    seq = ctl[SEQ] + 1
    ctl[CMD] = ASK
    ctl[CYCLE] = t
    ctl[STAMP] = stamp
    ctl[SPLIT] += 1
    store_release(ctl, SEQ, seq)
    return seq


@jit_inline
def wait_crew(crew, parts, seq):
    """Wait until the members of parts 1..parts-1 have answered round `seq`. False if one failed (its thread
    raised: sim.py stops the others)."""
    for p in range(1, parts):
        spins = 0
        while load_acquire(crew.ctl, (1 + p) * LINE) != seq:
            if load_acquire(crew.ctl, ERROR) != 0:
                return False
            spins = spin(spins)
    return True


@jit
def stop_crew(crew, failed):
    """Tell the members to return (sim.py, after the loop's call; `failed`: a member raised)."""
    ctl = crew.ctl
    if failed:
        store_release(ctl, ERROR, 1)
    ctl[CMD] = STOP
    store_release(ctl, SEQ, ctl[SEQ] + 1)
