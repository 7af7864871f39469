"""Collectives as rounds of point-to-point messages, expanded lazily: a rank in a collective keeps only its step
number, and `round_plan` says what it sends (peers as comm ranks, bytes) and how many messages it waits for in
that step. Nothing is stored per collective message before it is posted, so a million ranks cost what their
messages in flight cost. The algorithms are MPICH's (docs/mpi.md gives each with its switch-over sizes):

| kind | algorithm | steps | step k of comm rank `me` (rel = (me - root) mod n) |
|---|---|---|---|
| barrier | dissemination | ceil(log2 n) | send to me + 2^k, receive from me - 2^k |
| bcast | binomial | 1 + ceil(log2 n) | step 0: receive from the parent (rel minus its lowest set bit); step j: send to the child rel + 2^(L-j) (L = ceil(log2 n)), largest subtree first, one at a time as MPICH's blocking sends |
| reduce | binomial | ceil(log2 n) | rel with bit k set sends to rel - 2^k and is done; otherwise receives from rel + 2^k |
| gather | binomial | ceil(log2 n) | as reduce, sending its subtree's min(2^k, n - rel) blocks |
| scatter | binomial | 1 + ceil(log2 n) | as bcast, sending each child its subtree's blocks |
| allreduce | recursive_doubling | log2 p + 2 | p = 2^floor(log2 n); the first 2(n - p) ranks pair up first and last |
| allreduce | rabenseifner | 2 log2 p + 2 | as recursive doubling, with a reduce-scatter by recursive halving (step k exchanges half of what is kept) then an allgather by recursive doubling |
| allreduce | ring | 2(n - 1) | reduce-scatter then allgather of n chunks around the ring |
| allgather | recursive_doubling | log2 n (n a power of two) | exchange 2^k blocks with me xor 2^k |
| allgather | ring | n - 1 | send a block to me + 1, receive from me - 1 |
| alltoall(v) | pairwise | n - 1 | exchange with me xor k (n a power of two) or send to me + k and receive from me - k |

A step with nothing to do for a rank is skipped. Reductions cost no computation here.
"""

from __future__ import annotations

import numpy as np

from ..kernels._jit import jit_inline, no_implementation
from ..registry import (
    ALG_BINOMIAL, ALG_DISSEMINATION, ALG_PAIRWISE, ALG_RABENSEIFNER, ALG_RECURSIVE_DOUBLING, ALG_RING,
)
from .state import (
    CO_ALLGATHER, CO_ALLREDUCE, CO_ALLTOALL, CO_ALLTOALLV, CO_BARRIER, CO_BCAST, CO_GATHER, CO_REDUCE, CO_SCATTER,
)


@jit_inline
def ceil_log2(n):
    k = 0
    while (1 << k) < n:
        k += 1
    return k


@jit_inline
def floor_pow2(n):
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


@jit_inline
def lowest_bit(rel, n):
    """rel's lowest set bit (the root, rel = 0: the power of two at or above n)."""
    if rel == 0:
        return 1 << ceil_log2(n)
    return rel & -rel


@jit_inline
def n_steps(kind, alg, n):
    """Steps of collective `kind` by algorithm `alg` on n ranks: one branch per branch of `round_plan`."""
    if n <= 1:
        return 0
    if kind == CO_BARRIER and alg == ALG_DISSEMINATION:
        return ceil_log2(n)
    if (kind == CO_BCAST or kind == CO_SCATTER) and alg == ALG_BINOMIAL:
        return 1 + ceil_log2(n)
    if (kind == CO_REDUCE or kind == CO_GATHER) and alg == ALG_BINOMIAL:
        return ceil_log2(n)
    if kind == CO_ALLREDUCE and alg == ALG_RECURSIVE_DOUBLING:
        return ceil_log2(floor_pow2(n)) + 2
    if kind == CO_ALLREDUCE and alg == ALG_RING:
        return 2 * (n - 1)
    if kind == CO_ALLREDUCE and alg == ALG_RABENSEIFNER:
        return 2 * ceil_log2(floor_pow2(n)) + 2
    if kind == CO_ALLGATHER and alg == ALG_RECURSIVE_DOUBLING:
        return ceil_log2(n)
    if kind == CO_ALLGATHER and alg == ALG_RING:
        return n - 1
    if (kind == CO_ALLTOALL or kind == CO_ALLTOALLV) and alg == ALG_PAIRWISE:
        return n - 1
    no_implementation(alg)  # as round_plan: a new algorithm needs its count of steps here
    raise ValueError("no step count for this collective algorithm")


@jit_inline
def chunk(nbytes, i, n):
    """Bytes of chunk i when nbytes are cut into n nearly equal chunks (ring allreduce)."""
    return nbytes * (i + 1) // n - nbytes * i // n


@jit_inline
def blocks(nbytes, a, b, p):
    """Bytes of blocks a..b-1 when nbytes are cut into p nearly equal blocks."""
    return nbytes * b // p - nbytes * a // p


@jit_inline
def real_rank(newrank, rem):
    """The rank of a participant of the power-of-two phase (MPICH: the first 2 rem ranks pair up, odd ones stay)."""
    return newrank * 2 + 1 if newrank < rem else newrank + rem


@jit_inline
def new_rank(me, rem):
    """me's rank in the power-of-two phase, or -1 for the even rank of one of the first rem pairs (it sits out)."""
    if me < 2 * rem:
        return me // 2 if me % 2 == 1 else -1
    return me - rem


@jit_inline
def kept_start(newrank, halvings, p):
    """First of the p >> halvings blocks a rank keeps after that many halvings (its rank's bits, reversed)."""
    lo = 0
    for j in range(halvings):
        if newrank & (1 << j):
            lo += p >> (j + 1)
    return lo


@jit_inline
def pairing_step(me, rem, step, first, nbytes, peers, sizes):
    """The step before (first) or after the power-of-two phase: in each of the first 2 rem pairs the even rank
    gives its vector to the odd one, and gets the result back at the end."""
    if me >= 2 * rem:
        return 0, 0
    if (me % 2 == 0) == first:
        peers[0] = me + 1 if first else me - 1
        sizes[0] = nbytes
        return 1, 0
    return 0, 1


@jit_inline
def rabenseifner(me, n, step, nbytes, peers, sizes):
    """MPICH's allreduce for long vectors: a reduce-scatter by recursive halving, then an allgather by recursive
    doubling, among p = 2^floor(log2 n) ranks, each exchanging the part of the vector its partner keeps (p
    blocks; after k halvings a rank keeps p / 2^k blocks starting at the bit-reversed prefix of its rank)."""
    p = floor_pow2(n)
    rem = n - p
    L = ceil_log2(p)
    if step == 0 or step == 2 * L + 1:
        return pairing_step(me, rem, step, step == 0, nbytes, peers, sizes)
    newrank = new_rank(me, rem)
    if newrank < 0:
        return 0, 0
    if step <= L:  # halving k: give away the half of the kept p >> k blocks that the partner keeps
        k = step - 1
        half = p >> (k + 1)
        lo = kept_start(newrank, k, p)
        a = lo + half if newrank & (1 << k) == 0 else lo
        peers[0] = real_rank(newrank ^ (1 << k), rem)
        sizes[0] = blocks(nbytes, a, a + half, p)
    else:  # doubling: undo halving h, sending the p >> (h + 1) blocks kept after it
        h = 2 * L - step
        lo = kept_start(newrank, h + 1, p)
        peers[0] = real_rank(newrank ^ (1 << h), rem)
        sizes[0] = blocks(nbytes, lo, lo + (p >> (h + 1)), p)
    return 1, 1


@jit_inline
def round_plan(kind, alg, me, n, root, step, nbytes, counts, coff, peers, sizes):
    """Comm rank `me`'s sends in step `step` (peers[i], sizes[i] for i < the first value returned) and how many
    messages it receives in that step (the second)."""
    rel = (me - root + n) % n
    ns = 0
    nr = 0
    if kind == CO_BARRIER and alg == ALG_DISSEMINATION:
        peers[0] = (me + (1 << step)) % n
        sizes[0] = 0
        ns, nr = 1, 1
    elif (kind == CO_BCAST or kind == CO_SCATTER) and alg == ALG_BINOMIAL:  # one child per step, largest subtree first
        if step == 0:
            nr = 1 if rel != 0 else 0
        else:
            mask = (1 << ceil_log2(n)) >> step
            if mask < lowest_bit(rel, n) and rel + mask < n:
                peers[0] = (rel + mask + root) % n
                sizes[0] = nbytes if kind == CO_BCAST else min(mask, n - rel - mask) * nbytes
                ns = 1
    elif (kind == CO_REDUCE or kind == CO_GATHER) and alg == ALG_BINOMIAL:
        mask = 1 << step
        if rel & (mask - 1) == 0:
            if rel & mask:
                peers[0] = (rel - mask + root) % n
                sizes[0] = nbytes if kind == CO_REDUCE else min(mask, n - rel) * nbytes
                ns = 1
            elif rel + mask < n:
                nr = 1
    elif kind == CO_ALLREDUCE and alg == ALG_RING:
        peers[0] = (me + 1) % n
        if step < n - 1:  # reduce-scatter
            sizes[0] = chunk(nbytes, (me - step + n) % n, n)
        else:  # allgather
            sizes[0] = chunk(nbytes, (me + 1 - (step - n + 1) + n) % n, n)
        ns, nr = 1, 1
    elif kind == CO_ALLREDUCE and alg == ALG_RABENSEIFNER:
        ns, nr = rabenseifner(me, n, step, nbytes, peers, sizes)
    elif kind == CO_ALLREDUCE and alg == ALG_RECURSIVE_DOUBLING:  # MPICH's handling of n not a power of two
        p = floor_pow2(n)
        rem = n - p
        last = ceil_log2(p) + 1
        if step == 0 or step == last:
            ns, nr = pairing_step(me, rem, step, step == 0, nbytes, peers, sizes)
        else:
            newrank = new_rank(me, rem)
            if newrank >= 0:
                peers[0] = real_rank(newrank ^ (1 << (step - 1)), rem)
                sizes[0] = nbytes
                ns, nr = 1, 1
    elif kind == CO_ALLGATHER and alg == ALG_RECURSIVE_DOUBLING:
        peers[0] = me ^ (1 << step)
        sizes[0] = (1 << step) * nbytes
        ns, nr = 1, 1
    elif kind == CO_ALLGATHER and alg == ALG_RING:
        peers[0] = (me + 1) % n
        sizes[0] = nbytes
        ns, nr = 1, 1
    elif (kind == CO_ALLTOALL or kind == CO_ALLTOALLV) and alg == ALG_PAIRWISE:
        i = step + 1
        if n & (n - 1) == 0:
            dst = me ^ i
        else:
            dst = (me + i) % n
        peers[0] = dst
        sizes[0] = counts[coff + dst] if kind == CO_ALLTOALLV else nbytes
        ns, nr = 1, 1
    else:  # a (collective, algorithm) no branch implements: program.py chose what registry.py does not declare
        no_implementation(alg)
        raise ValueError("no implementation of this collective algorithm")
    return ns, nr


def largest_message(kind: np.ndarray, n: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """A bound on the payload of any one message that `round_plan` posts for collectives of these kinds, comm
    sizes and byte counts (alltoallv: its counts are the messages). Only the gathering kinds (gather, scatter,
    allgather) send more than one block in a message, and never more than n blocks; a barrier sends nothing."""
    whole = (kind == CO_GATHER) | (kind == CO_SCATTER) | (kind == CO_ALLGATHER)
    return np.where(kind == CO_BARRIER, 0, np.where(whole, n * nbytes, nbytes))
