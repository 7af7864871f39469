"""The request slots of one rank's calls (program.py `_RankLowering.requests`), compiled: a trace of a million
calls takes a slot per point-to-point call, and the Python loop with a heap of free slots cost 2 of a 256-rank
replay's 6 s of preparation.

A slot is taken by each isend / irecv / send / recv and sendrecv's two ops, the smallest free one first (the
numbers are results: the kernel indexes its request table by them), and freed by the wait that completes it.
Request handles come in renumbered 0..H-1 (np.unique), so that `live[h]`, the slot of handle h (-1: not active),
is an array.
"""

from __future__ import annotations

import numpy as np

from ..kernels._jit import jit, jit_inline

# What each call does with requests (program.py makes the codes from the call kinds).
REQ_NONE, REQ_CREATE, REQ_BLOCKING, REQ_WAIT, REQ_FREE, REQ_SENDRECV = range(6)
# Why the walk stopped before its end.
HALT_OK, HALT_STILL_ACTIVE, HALT_NOT_STARTED = range(3)


@jit_inline
def _push(heap: np.ndarray, n: int, s: int) -> int:
    """Put slot s on the min-heap heap[:n]; returns its new size."""
    i = n
    while i > 0 and heap[(i - 1) // 2] > s:
        heap[i] = heap[(i - 1) // 2]
        i = (i - 1) // 2
    heap[i] = s
    return n + 1


@jit_inline
def _pop(heap: np.ndarray, n: int) -> int:
    """Remove the smallest slot from the min-heap heap[:n] (n > 0) and return it."""
    top, last, i = heap[0], heap[n - 1], 0
    n -= 1
    while 2 * i + 1 < n:
        c = 2 * i + 1
        if c + 1 < n and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] >= last:
            break
        heap[i] = heap[c]
        i = c
    heap[i] = last
    return top


@jit
def assign_slots(action: np.ndarray, handle: np.ndarray, named_at: np.ndarray, named: np.ndarray, last: int,
                 live: np.ndarray, heap: np.ndarray, slot: np.ndarray, list_at: np.ndarray, list_len: np.ndarray,
                 req_list: np.ndarray) -> tuple[int, int, int, int, int]:
    """Walk calls 0..last-1 in order. `action` (int64[n]): REQ_* per call; `handle` (int64[n]): the renumbered
    request an isend / irecv makes; the handles a wait completes or a Request_free releases are
    named[named_at[i]:named_at[i + 1]]. Writes each op's `slot` (sendrecv: none, its two are its wait list), each
    wait's offset into `req_list` and length, and leaves `live` as the walk ends. `heap` has room for every slot.
    Returns (stop, why, which, used, slots): the call it stopped at (`last` unless why is HALT_STILL_ACTIVE or
    HALT_NOT_STARTED, with `which` the place of the handle in named), the length of req_list used, the slots
    taken."""
    free, slots, used = 0, 0, 0
    for i in range(last):
        a = action[i]
        if a == REQ_CREATE or a == REQ_BLOCKING or a == REQ_SENDRECV:
            for _ in range(2 if a == REQ_SENDRECV else 1):
                if free:
                    s = _pop(heap, free)
                    free -= 1
                else:
                    s = slots
                    slots += 1
                if a == REQ_CREATE:
                    if live[handle[i]] >= 0:
                        return i, HALT_STILL_ACTIVE, 0, used, slots
                    live[handle[i]] = s
                    slot[i] = s
                else:  # its wait
                    if a == REQ_BLOCKING:
                        slot[i] = s
                    req_list[used] = s
                    used += 1
            if a != REQ_CREATE:
                list_len[i] = 2 if a == REQ_SENDRECV else 1
                list_at[i] = used - list_len[i]
                for k in range(used - list_len[i], used):
                    free = _push(heap, free, req_list[k])
        elif a == REQ_WAIT:
            for k in range(named_at[i], named_at[i + 1]):
                s = live[named[k]]
                if s < 0:  # (a handle named twice is not live the second time)
                    return i, HALT_NOT_STARTED, k - named_at[i], used, slots
                live[named[k]] = -1
                req_list[used + k - named_at[i]] = s
            n = named_at[i + 1] - named_at[i]
            if n:
                list_at[i], list_len[i] = used, n
                for k in range(used, used + n):
                    free = _push(heap, free, req_list[k])
                used += n
        elif a == REQ_FREE:  # MPI_Request_free of an active request: it completes unobserved, and its slot is
            for k in range(named_at[i], named_at[i + 1]):  # never reused
                live[named[k]] = -1
    return last, HALT_OK, 0, used, slots
