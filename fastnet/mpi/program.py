"""Lower a `Trace` (calls.py) to the op arrays the MPI kernel runs (state.py), in plain Python and numpy.

What each call becomes:
- `isend` / `irecv`: one op with a request slot; `send` / `recv`: the same op and a wait on its slot;
  `sendrecv`: isend, irecv and a wait on both; `wait` / `waitall`: a wait on the slots of the named requests
  (request handles are per rank, reused after their wait; a handle no earlier isend/irecv made is an error).
- collectives: one op naming the algorithm (docs/mpi.md: `choose_algorithm`) and the collective's instance on
  its communicator (the k-th collective every member calls there; members must call the same sequence).
- `compute`, and the gaps of a trace: computation of round(ns x compute_scale / cycle_ns) cycles. A trace's gap
  runs from the end of one lowered call to the start of the next; the time inside `noop` calls (MPI_Init,
  Comm_rank, ...) is part of it. Cycle 0 is when the trace's first call begins (on any rank: a rank that
  starts later computes until its first call), and a rank's run ends when its last call (MPI_Finalize) begins.
- `unknown`: an error naming the call and the file, or skipped and counted (`skip_unknown`).
Peers become world ranks; ranks whose op lists are identical share one copy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np

from ..registry import (
    ALG_BINOMIAL, ALG_DISSEMINATION, ALG_PAIRWISE, ALG_RABENSEIFNER, ALG_RECURSIVE_DOUBLING, ALG_RING,
    COLLECTIVE_ALGORITHMS,
)
from .calls import ANY_SOURCE, ANY_TAG, COLLECTIVES, PROC_NULL, Call, CallTable, Trace
from .slots import (
    HALT_NOT_STARTED, HALT_STILL_ACTIVE, REQ_BLOCKING, REQ_CREATE, REQ_FREE, REQ_NONE, REQ_SENDRECV, REQ_WAIT,
    assign_slots,
)
from .state import (
    ANY, CALL_CODE, N_OP, NULL_PEER, OP_ALG, OP_ARG, OP_BYTES, OP_CALL, OP_CODE, OP_COLL, OP_COMM, OP_COMPUTE, OP_INDEX,
    OP_IRECV, OP_ISEND, OP_LIST, OP_PEER, OP_REQ, OP_ROOT, OP_SEQ, OP_TAG, OP_WAIT,
)


class ProgramError(ValueError):
    """A program that cannot run: the message names the rank, the call and where it came from."""


@dataclass
class Options:
    cycle_ns: float
    compute_scale: float = 1.0
    compute: str = "trace"  # trace: gaps and compute calls become computation; none: no computation at all
    count_init: bool = True  # False: a rank's time before the end of its MPI_Init is dropped
    skip_unknown: bool = False
    allreduce: str = "auto"  # auto | recursive_doubling | rabenseifner | ring
    allreduce_short_bytes: int = 2048  # auto: recursive doubling up to this size (MPICH's short-message size)
    allgather: str = "auto"  # auto | recursive_doubling | ring
    allgather_long_bytes: int = 524288  # auto: recursive doubling below this total when the size is a power of two


@dataclass
class Program:
    ops: np.ndarray
    op_begin: np.ndarray
    op_end: np.ndarray
    req_list: np.ndarray
    counts: np.ndarray
    max_requests: int
    comm_off: np.ndarray
    comm_size: np.ndarray
    comm_members: np.ndarray
    rc_off: np.ndarray
    rc_comm: np.ndarray
    rc_me: np.ndarray
    call_counts: np.ndarray  # int64[N_CALLS]: MPI calls of each kind in the program
    skipped: dict[str, int] = field(default_factory=dict)  # unknown calls skipped, by name
    files: list[str] = field(default_factory=list)  # where each rank's calls came from (error messages)
    task_job: np.ndarray | None = None  # int64[R]: each rank's job (workload.jobs), None for one program
    background: Any = None  # mpi.build.Background: a job of kind open_loop beside the MPI ranks, or None
    not_recorded: dict[str, int] = field(default_factory=dict)  # Trace.not_recorded: calls the tracer left out
    cut_off: list[str] = field(default_factory=list)  # Trace.cut_off: rank files that may have been cut short
    recorded_wait: np.ndarray | None = None  # int64[R]: cycles each rank's trace spent outside computation (in MPI
    # calls, from its clock's start to its last call; 0 for a generator's program)
    expected: int = 0  # cycles the run is expected to take (mpi/build.py expected_cycles): the progress bar's
    # total, 0: unknown


def choose_algorithm(kind: str, nbytes: int, n: int, opt: Options) -> int:
    """MPICH's default algorithm for a collective of `nbytes` (calls.py's convention) on n ranks."""
    if kind == "barrier":
        return ALG_DISSEMINATION
    if kind in ("bcast", "reduce", "gather", "scatter"):
        return ALG_BINOMIAL
    if kind == "allreduce":
        if opt.allreduce != "auto":
            return COLLECTIVE_ALGORITHMS.code(opt.allreduce)
        return ALG_RECURSIVE_DOUBLING if nbytes <= opt.allreduce_short_bytes else ALG_RABENSEIFNER
    if kind == "allgather":
        pow2 = n & (n - 1) == 0
        # recursive doubling pairs me with me xor 2^k: on a communicator whose size is not a power of two, MPICH
        # falls back to its own choice (MPIR_CVAR_COLLECTIVE_FALLBACK, silent by default), as here
        if opt.allgather != "auto" and (pow2 or opt.allgather != "recursive_doubling"):
            return COLLECTIVE_ALGORITHMS.code(opt.allgather)
        return ALG_RECURSIVE_DOUBLING if pow2 and nbytes * n < opt.allgather_long_bytes else ALG_RING
    return ALG_PAIRWISE


def _cycles(ns: float, cycle_ns: float) -> int:
    return max(0, int(round(ns / cycle_ns)))


class _RankLowering:
    """One rank's calls -> op rows, request slots, wait lists and alltoallv counts."""

    def __init__(self, rank: int, trace: Trace, opt: Options, comm_index: dict[int, int], seqs: dict[int, int],
                 member_sets: dict[int, frozenset[int]]):
        self.rank, self.trace, self.opt, self.comm_index, self.seqs = rank, trace, opt, comm_index, seqs
        self.member_sets = member_sets  # each communicator's world ranks, shared by every rank's lowering
        self.rows: list[int] = []  # op rows being made, N_OP values each (lower puts them into ops)
        self.ops = np.zeros((0, N_OP), np.int64)  # the rank's op rows
        self.req_list = np.zeros(0, np.int64)  # the slots of its waits
        self.counts: list[int] = []
        self.live: dict[int, int] = {}  # request handle -> slot, of the requests never waited for (requests)
        self.slots = 0  # slots the requests took
        self.colls: list[tuple[int, str, int]] = []  # (comm, kind, root) in call order: checked across members
        self.used: set[int] = set()  # the communicators the calls name (a rank must be a member of each)
        self.coll_comms: set[int] = set()  # the communicators of its collectives
        self.skipped: dict[str, int] = {}
        self.calls = np.zeros(len(CALL_CODE), np.int64)  # the calls of each kind
        self.table = CallTable()  # the calls lowered
        self.waiting = 0  # cycles of the trace's clock outside the gaps (the rank's time in MPI calls), when the run
        # keeps the trace's computation from its start

    def fail(self, index: int, why: str) -> ProgramError:
        call = self.table[index]
        name = call.name or f"MPI_{call.kind.capitalize()}"
        where = self.trace.where(self.rank)
        who = where if where.endswith(f"rank {self.rank}") else f"{where}: rank {self.rank}"
        return ProgramError(f"{who}, call {index} ({name}): {why}")

    def row(self, code: int, call: str, index: int, **cols: int) -> None:
        r = [0] * N_OP
        r[OP_CODE], r[OP_CALL], r[OP_INDEX], r[OP_REQ] = code, CALL_CODE[call], index, -1
        for k, v in cols.items():
            r[_COLUMN[k]] = v
        self.rows.extend(r)

    def world(self, comm: int, peer: int, index: int, any_ok: bool) -> int:
        if peer == PROC_NULL:
            return NULL_PEER
        if peer == ANY_SOURCE and any_ok:
            return ANY
        members = self.trace.comms[comm]
        if not 0 <= peer < len(members):
            raise self.fail(index, f"peer {peer} is not a rank of communicator {comm} ({len(members)} ranks)")
        return members[peer]

    def comm_problem(self, comm: int) -> str:
        """Why this rank's calls cannot use communicator `comm` ("": they can)."""
        if comm not in self.comm_index:
            return f"unknown communicator {comm}"
        if self.rank not in self.member_sets[comm]:
            return f"rank {self.rank} is not a member of communicator {comm}"
        return ""

    def comm(self, comm: int, index: int) -> int:
        problem = self.comm_problem(comm)
        if problem:
            raise self.fail(index, problem)
        self.used.add(comm)
        return self.comm_index[comm]

    def reuse_for(self, rank: int) -> None:
        """Rank `rank` runs the very same call list: its rows are these (no row depends on the rank), once it is
        a member of every communicator they name."""
        for c in self.used:
            if rank not in self.member_sets[c]:
                raise ProgramError(f"{self.trace.where(rank)}: rank {rank} is not a member of communicator {c}")

    def p2p(self, code: int, kind: str, index: int, comm: int, peer: int, tag: int, nbytes: int, s: int) -> None:
        """A sendrecv's isend or irecv op, on slot s (lower makes the other calls' at once)."""
        c = self.comm(comm, index)
        self.row(code, kind, index, peer=self.world(comm, peer, index, code == OP_IRECV),
                 tag=ANY if (tag == ANY_TAG and code == OP_IRECV) else tag, comm=c, nbytes=nbytes, req=s)

    def lower(self, calls: Sequence[Call], origin: float) -> None:
        """The rank's op rows into self.ops. What depends on no state (the clock and the computation between calls,
        communicators, peers, collectives, where each call's rows go) is computed for all calls at once; the request
        slots in one compiled walk (slots.py), and sendrecvs and compute calls one by one."""
        opt = self.opt
        self.table = table = CallTable.of(calls)  # its columns, without a Call object each (fail makes one)
        cols, n = table.cols, len(table)
        kinds, names = cols["kind"], cols["name"]
        code = np.fromiter(map(_KIND_CODE.get, kinds, repeat(_BAD)), np.int64, n)
        start, end = cols["start_ns"], cols["end_ns"]
        main = code >= 0  # not noop or unknown
        gap, gaprow, last_end, clock, gaps = self.clock(code, names, start, end, main, origin)
        self.calls = np.bincount(code[main], minlength=len(CALL_CODE)).astype(np.int64)
        # Point-to-point ops (isend, irecv, and send, recv with their wait): communicator, world peer, tag
        p2p = (code == _ISEND) | (code == _IRECV) | (code == _SEND) | (code == _RECV)
        receive = (code == _IRECV) | (code == _RECV)
        tag = cols["tag"]
        world, cindex, errors = self.peers(p2p, receive)
        errors += [(int(i), 0, f"unknown call kind {kinds[i]!r}") for i in np.flatnonzero(code == _BAD)[:1]]
        if not opt.skip_unknown:
            errors += [(int(i), 0, "unsupported MPI call (set workload.skip_unknown = true to skip such calls and "
                        "count them)") for i in np.flatnonzero(code == _UNKNOWN)[:1]]
        stop = min(errors, default=(n, 0, ""))
        slot, (list_at, list_len), made, coll, coll_rows = self.requests(code, stop[:2])
        if errors:
            raise self.fail(stop[0], stop[2])
        if opt.skip_unknown:
            for i in np.flatnonzero(code == _UNKNOWN).tolist():
                self.skipped[names[i]] = self.skipped.get(names[i], 0) + 1
        # Each call's rows: its computation (the gap before it), then its ops
        waits = ((code == _WAIT) | (code == _WAITALL)) & (list_len > 0)
        blocking = (code == _SEND) | (code == _RECV)  # an op and its wait
        at = np.concatenate(([0], np.cumsum(gaprow.astype(np.int64) + p2p + blocking + waits + coll + made)))
        ops = np.zeros((at[-1], N_OP), np.int64)
        ops[:, OP_REQ] = -1
        index = np.arange(n)
        r = at[:-1][gaprow]
        ops[r, OP_CODE], ops[r, OP_CALL], ops[r, OP_ARG], ops[r, OP_INDEX] = OP_COMPUTE, CALL_CODE["compute"], \
            gap[gaprow], index[gaprow]
        first = at[:-1] + gaprow
        r = first[p2p]
        ops[r, OP_CODE] = np.where(receive[p2p], OP_IRECV, OP_ISEND)
        ops[r, OP_CALL], ops[r, OP_PEER], ops[r, OP_COMM], ops[r, OP_REQ], ops[r, OP_INDEX] = code[p2p], world[p2p], \
            cindex[p2p], slot[p2p], index[p2p]
        ops[r, OP_TAG] = np.where(receive[p2p] & (tag[p2p] == ANY_TAG), ANY, tag[p2p])
        ops[r, OP_BYTES] = cols["bytes"][p2p]
        for w, r in ((waits, first[waits]), (blocking, first[blocking] + 1)):
            ops[r, OP_CODE], ops[r, OP_CALL], ops[r, OP_ARG], ops[r, OP_LIST], ops[r, OP_INDEX] = OP_WAIT, code[w], \
                list_len[w], list_at[w], index[w]
        ops[first[coll]] = coll_rows
        if self.rows:  # the rows of the calls that made their own, in call order
            m = made[made > 0]
            ops[np.repeat(first[made > 0] - np.cumsum(m) + m, m) + np.arange(m.sum())] = \
                np.array(self.rows, np.int64).reshape(-1, N_OP)
        self.rows = []
        timed = np.flatnonzero(~np.isnan(start))
        last = float(start[timed[-1]]) if len(timed) else math.nan
        if not math.isnan(last) and not math.isnan(last_end):  # computation until the last call (MPI_Finalize)
            gaps += max(0.0, last - last_end)
            d = _cycles((last - last_end) * opt.compute_scale, opt.cycle_ns)
            if d > 0 and opt.compute != "none":
                self.row(OP_COMPUTE, "compute", n - 1, arg=d)
                ops = np.concatenate((ops, np.array(self.rows, np.int64).reshape(1, N_OP)))
            if opt.compute != "none" and opt.count_init:  # else the recorded waits are not this run's
                self.waiting = _cycles(max(last, last_end) - clock - gaps, opt.cycle_ns)
        self.ops = ops
        # each computation counts once, a compute call's or a trace's gap before a call (or MPI_Finalize), as the
        # rows made: none where workload.compute = "none" drops them
        self.calls[CALL_CODE["compute"]] = np.count_nonzero(ops[:, OP_CODE] == OP_COMPUTE)
        if self.live:
            handles = ", ".join(str(h) for h in sorted(self.live))
            raise ProgramError(f"{self.trace.where(self.rank)}: rank {self.rank} ends with requests {handles} "
                               "never waited for")

    def peers(self, p2p: np.ndarray, receive: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, str]]]:
        """The world peer and communicator index of each point-to-point call (`p2p`; `receive`: may name
        ANY_SOURCE), and the first error of each communicator: (call, 0: before its slot, 2: after, why)."""
        cols, n = self.table.cols, len(p2p)
        comm, peer = cols["comm"], cols["peer"]
        world, cindex, errors = np.zeros(n, np.int64), np.zeros(n, np.int64), []
        for c in np.unique(comm[p2p]).tolist():
            on = p2p & (comm == c)
            problem = self.comm_problem(c)
            if problem:
                errors.append((int(np.argmax(on)), 0, problem))
                continue
            self.used.add(c)
            cindex[on] = self.comm_index[c]
            members = np.array(self.trace.comms[c], np.int64)
            p = peer[on]
            ok = (p >= 0) & (p < len(members))
            special = (p == PROC_NULL) | ((p == ANY_SOURCE) & receive[on])
            world[on] = np.where(p == PROC_NULL, NULL_PEER, np.where(special, ANY, members[np.where(ok, p, 0)]))
            bad = np.flatnonzero(on)[~ok & ~special]
            if len(bad):
                i = int(bad[0])
                errors.append((i, 2, f"peer {peer[i]} is not a rank of communicator {c} ({len(members)} ranks)"))
        return world, cindex, errors

    def clock(self, code: np.ndarray, names: np.ndarray, start: np.ndarray, end: np.ndarray, main: np.ndarray,
              origin: float) -> tuple[np.ndarray, np.ndarray, float, float, float]:
        """The computation before each call (the module doc): its cycles, whether it makes a row, and the clock
        after the last call (its last_end, where it started, the ns of computation). The clock's `last_end` is
        the end of the last call that is not a noop or unknown (its start without an end); it starts at
        `origin`, else at the first call with a start, and at MPI_Init's end if the run drops the time before."""
        opt = self.opt
        n = len(code)
        timed = ~np.isnan(start)
        moves = main & timed  # calls that move last_end to their end (start)
        value = np.where(np.isnan(end), start, end)
        resets = np.zeros(n, bool)  # ... and last_end and the clock's start to theirs
        if not opt.count_init:
            resets = ~main & ~np.isnan(end) & np.array([nm in ("MPI_Init", "MPI_Init_thread") for nm in names])
        if math.isnan(origin):  # the first noop with a start, before anything moved the clock, starts it
            moved = moves | resets
            first = np.flatnonzero((timed & ~main)[:int(np.argmax(moved)) if moved.any() else n])
            if len(first):
                resets[first[0]], value[first[0]] = True, start[first[0]]
        moved = moves | resets
        last = np.maximum.accumulate(np.where(moved, np.arange(n), -1)) if n else np.zeros(0, np.int64)
        before = np.concatenate(([-1], last[:-1])) if n else last  # the last call before each that moved it
        last_end = np.where(before >= 0, value[np.maximum(before, 0)], origin)  # before each call
        timed_gap = moves & ~np.isnan(last_end)
        d = np.where(timed_gap, start - last_end, 0.0)
        gap = np.where(timed_gap, np.rint(d * opt.compute_scale / opt.cycle_ns), 0).astype(np.int64)  # (_cycles)
        gaprow = timed_gap & (gap > 0) & (opt.compute != "none")
        gaps = float(np.cumsum(np.maximum(0.0, d[timed_gap]))[-1]) if timed_gap.any() else 0.0  # in call order
        ends = np.flatnonzero(moved)
        starts = np.flatnonzero(resets)
        return (gap, gaprow, float(value[ends[-1]]) if len(ends) else origin,
                float(value[starts[-1]]) if len(starts) else origin, gaps)

    def requests(self, code: np.ndarray, stop: tuple[int, int]) -> tuple[np.ndarray, ...]:
        """The request slots of the calls before `stop` (index, and 2: with that call's own slot), in call order
        (slots.py): each isend / irecv / send / recv's slot, each wait's offset in req_list and length, the op
        rows of sendrecvs and compute calls (general) into self.rows, and the collectives'; returns the first two,
        the rows each call made into self.rows, and the collective calls with their rows."""
        n = len(code)
        action, handle, named_at, named, handles = self.request_actions(code)
        last = stop[0] + (stop[0] < n and stop[1] == 2 and code[stop[0]] in (_ISEND, _IRECV))
        live = np.full(len(handles), -1, np.int64)
        slot, list_at, list_len = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
        takes = np.isin(action, (REQ_CREATE, REQ_BLOCKING)).sum() + 2 * (action == REQ_SENDRECV).sum()
        req_list = np.zeros(takes + len(named), np.int64)
        halt, why, which, used, self.slots = assign_slots(action, handle, named_at, named, last, live,
                                                          np.zeros(takes + 1, np.int64), slot, list_at, list_len,
                                                          req_list)
        self.req_list = req_list[:used]
        self.live = dict(zip(handles[live >= 0].tolist(), live[live >= 0].tolist()))
        coll, coll_rows, (bad, problem) = self.collectives(code, halt)
        made = np.zeros(n, np.int64)
        general = (code == _COMPUTE) | (action == REQ_SENDRECV)
        index = np.flatnonzero(general[:bad])
        for i, call in zip(index.tolist(), self.table.calls(index)):  # in call order: the first error is raised
            a = len(self.rows)
            self.general(i, call, int(list_at[i]))
            made[i] = (len(self.rows) - a) // N_OP
        if bad < halt:
            raise self.fail(bad, problem)
        if why == HALT_STILL_ACTIVE:
            raise self.fail(halt, f"request {self.table.cols['request'][halt]} is still active (not yet waited for)")
        if why == HALT_NOT_STARTED:
            raise self.fail(halt, f"request {self.table[halt].requests[which]} was not started by an isend "
                                  "or irecv")
        return slot, np.array([list_at, list_len]), made, coll, coll_rows

    def request_actions(self, code: np.ndarray) -> tuple[np.ndarray, ...]:
        """What each call does with requests (slots.py REQ_*), the handle each isend / irecv makes and those each
        wait or Request_free names (named[named_at[i]:named_at[i + 1]]), renumbered 0..; and the handles."""
        cols, n = self.table.cols, len(code)
        action = np.select([np.isin(code, (_ISEND, _IRECV)), np.isin(code, (_SEND, _RECV)),
                            np.isin(code, (_WAIT, _WAITALL)), code == _SENDRECV, np.isin(code, (_NOOP, _UNKNOWN))],
                           [REQ_CREATE, REQ_BLOCKING, REQ_WAIT, REQ_SENDRECV, REQ_FREE], REQ_NONE).astype(np.int64)
        named_at, named = cols["requests_at"], cols["requests"]
        creates = action == REQ_CREATE
        handles, renumbered = _renumber(np.concatenate((cols["request"][creates], named)))
        handle = np.zeros(n, np.int64)
        handle[creates] = renumbered[:creates.sum()]
        return action, handle, named_at, renumbered[creates.sum():], handles

    def general(self, index: int, call: Call, slots_at: int) -> None:
        """The rows of call `index`, a sendrecv (its slots at req_list[slots_at:slots_at + 2]) or a compute call."""
        k = call.kind
        if k == "sendrecv":
            a, b = self.req_list[slots_at:slots_at + 2].tolist()
            self.p2p(OP_ISEND, k, index, call.comm, call.peer, call.tag, call.bytes, a)
            self.p2p(OP_IRECV, k, index, call.comm, call.recv_peer, call.recv_tag, call.recv_bytes, b)
            self.row(OP_WAIT, k, index, arg=2, list=slots_at)
        else:  # compute
            d = call.duration_cycles if call.duration_cycles >= 0 else _cycles(call.duration_ns, self.opt.cycle_ns)
            if d > 0 and self.opt.compute != "none":
                self.row(OP_COMPUTE, "compute", index, arg=d)

    def collectives(self, code: np.ndarray, halt: int) -> tuple[np.ndarray, np.ndarray, tuple[int, str]]:
        """The op rows of the collective calls before `halt`, all at once: which calls they are, their rows, and
        the first call that cannot run with why ((halt, ""): none). Each is the k-th collective of its rank on its
        communicator (OP_SEQ), with the algorithm choose_algorithm picks for its size."""
        cols = self.table.cols
        coll = np.isin(code, _COLLECTIVE_CODES)
        coll[halt:] = False
        index = np.flatnonzero(coll)
        comm, root, nbytes = (cols[k][index] for k in ("comm", "root", "bytes"))
        kinds = cols["kind"][index].tolist()
        cindex, size, seq, lst = (np.zeros(len(index), np.int64) for _ in range(4))
        errors = [(halt, 0, "")]  # (call, check, why): a call's communicator is checked before its root
        for c in np.unique(comm).tolist():
            on = comm == c
            problem = self.comm_problem(c)
            if problem:
                errors.append((int(index[np.argmax(on)]), 0, problem))
                continue
            self.used.add(c)
            cindex[on], size[on] = self.comm_index[c], len(self.trace.comms[c])
            seq[on] = self.seqs.get(self.comm_index[c], 0) + np.arange(on.sum())
            self.seqs[self.comm_index[c]] = int(seq[on][-1]) + 1
        rooted = np.isin(code[index], _ROOTED_CODES) & ((root < 0) | (root >= size))
        errors += [(int(index[j]), 1, f"root {root[j]} is not a rank of communicator {comm[j]}")
                   for j in np.flatnonzero(rooted)[:1].tolist()]
        alltoallv = np.flatnonzero(code[index] == _ALLTOALLV)
        for j, call in zip(alltoallv.tolist(), self.table.calls(index[alltoallv])):
            if len(call.send_counts) != size[j] or len(call.recv_counts) != size[j]:
                errors.append((int(index[j]), 2, f"alltoallv needs {size[j]} send and receive counts"))
                break
            lst[j] = len(self.counts)
            self.counts.extend(call.send_counts)
            self.counts.extend(call.recv_counts)
        self.colls.extend(zip(comm.tolist(), kinds, root.tolist()))
        rows = np.zeros((len(index), N_OP), np.int64)
        rows[:, OP_CODE], rows[:, OP_CALL], rows[:, OP_INDEX], rows[:, OP_REQ] = OP_COLL, code[index], index, -1
        rows[:, OP_ARG], rows[:, OP_COMM], rows[:, OP_ROOT], rows[:, OP_BYTES] = code[index], cindex, root, nbytes
        rows[:, OP_SEQ], rows[:, OP_LIST], rows[:, OP_ALG] = seq, lst, self.algorithms(kinds, nbytes, size)
        bad, _, why = min(errors)
        return coll, rows, (bad, why)

    def algorithms(self, kinds: list[str], nbytes: np.ndarray, size: np.ndarray) -> np.ndarray:
        """choose_algorithm of each collective, asked once per distinct kind, bytes and communicator size."""
        chosen: dict[tuple[str, int, int], int] = {}
        return np.array([chosen[key] if key in chosen else chosen.setdefault(key, choose_algorithm(*key, self.opt))
                         for key in zip(kinds, nbytes.tolist(), size.tolist())], np.int64)


_NOOP, _UNKNOWN, _BAD = -1, -2, -3  # lower's codes of the kinds that make no op, and of a kind that is none
_KIND_CODE = {**CALL_CODE, "noop": _NOOP, "unknown": _UNKNOWN}
_ISEND, _IRECV, _SEND, _RECV, _WAIT, _WAITALL, _SENDRECV, _COMPUTE, _ALLTOALLV = (
    CALL_CODE[k] for k in ("isend", "irecv", "send", "recv", "wait", "waitall", "sendrecv", "compute", "alltoallv"))
_COLLECTIVE_CODES = [CALL_CODE[k] for k in COLLECTIVES]
_ROOTED_CODES = [CALL_CODE[k] for k in ("bcast", "reduce", "gather", "scatter")]  # (a root the call must check)
_COLUMN = {"peer": OP_PEER, "tag": OP_TAG, "comm": OP_COMM, "nbytes": OP_BYTES, "req": OP_REQ, "arg": OP_ARG,
           "list": OP_LIST, "alg": OP_ALG, "root": OP_ROOT, "seq": OP_SEQ}


def lower(trace: Trace, opt: Options) -> Program:
    """The program of `trace`: every rank's calls lowered to op rows (ranks with the same rows share them), the
    communicators as arrays, and the calls counted."""
    comm_index, member_sets, comm_arrays = _communicators(trace)
    table = _OpTable(trace.n_ranks)
    lowered, repeats = _lower_ranks(trace, opt, comm_index, member_sets, table)
    call_counts, skipped = _call_totals(lowered, repeats)
    return Program(
        ops=np.concatenate(table.blocks) if table.blocks else np.zeros((0, N_OP), np.int64), op_begin=table.begin,
        op_end=table.end, req_list=np.concatenate(table.req_lists) if table.n_req else np.zeros(1, np.int64),
        counts=np.array(table.counts or [0], np.int64), max_requests=max([1] + [low.slots for low in lowered]),
        call_counts=call_counts, skipped=skipped, not_recorded=dict(trace.not_recorded), cut_off=list(trace.cut_off),
        recorded_wait=table.waiting,
        files=[trace.where(r) for r in range(trace.n_ranks)] if trace.files else [], **comm_arrays,
    )


def _communicators(trace: Trace) -> tuple[dict[int, int], dict[int, frozenset[int]], dict[str, np.ndarray]]:
    """Each communicator's index (world, 0, stays 0) and members as a set, and the arrays the kernel reads: the
    world ranks of each communicator (comm_off, comm_size, comm_members), and each rank's communicators other
    than world with its rank in them (rc_off, rc_comm, rc_me)."""
    R = trace.n_ranks
    comm_ids = sorted(trace.comms)
    comm_index = {cid: i for i, cid in enumerate(comm_ids)}  # world (0) stays 0
    members = [trace.comms[cid] for cid in comm_ids]
    member_sets = {cid: frozenset(m) for cid, m in trace.comms.items()}  # membership in O(1), not O(ranks)
    rc: list[list[tuple[int, int]]] = [[] for _ in range(R)]
    for i, mem in enumerate(members):
        for me, w in enumerate(mem):
            if not 0 <= w < R:
                raise ProgramError(f"communicator {comm_ids[i]} names rank {w}, but the program has {R} ranks")
            if i > 0:
                rc[w].append((i, me))
    comm_size = np.array([len(m) for m in members], np.int64)
    rc_off = np.zeros(R + 1, np.int64)
    rc_off[1:] = np.cumsum([len(x) for x in rc])
    flat = [p for x in rc for p in x]
    arrays = {
        "comm_off": np.concatenate([[0], np.cumsum(comm_size)[:-1]]).astype(np.int64), "comm_size": comm_size,
        "comm_members": np.array([w for m in members for w in m] or [0], np.int64), "rc_off": rc_off,
        "rc_comm": np.array([c for c, _ in flat] or [0], np.int64),
        "rc_me": np.array([m for _, m in flat] or [0], np.int64),
    }
    return comm_index, member_sets, arrays


class _OpTable:
    """The program's op rows, wait lists and alltoallv counts, rank by rank: rank r runs rows begin[r]..end[r]-1.
    Ranks whose rows are the same (and name no wait list or counts) share one copy."""

    def __init__(self, n_ranks: int):
        self.blocks: list[np.ndarray] = []
        self.req_lists: list[np.ndarray] = []  # of the ranks with rows of their own, in order
        self.n_req = 0  # their length in all
        self.counts: list[int] = []
        self.begin = np.zeros(n_ranks, np.int64)
        self.end = np.zeros(n_ranks, np.int64)
        self.n_ops = 0
        self.shared: dict[bytes, tuple[int, int]] = {}
        self.waiting = np.zeros(n_ranks, np.int64)  # _RankLowering.waiting of each rank

    def add(self, r: int, low: _RankLowering) -> None:
        """Rank r's rows, their wait lists and counts appended (offsets into them made the table's)."""
        self.waiting[r] = low.waiting
        rows = low.ops
        if len(rows):  # offsets into the shared wait-list and count arrays
            waits = rows[:, OP_CODE] == OP_WAIT
            rows[waits, OP_LIST] += self.n_req
            v = (rows[:, OP_CODE] == OP_COLL) & (rows[:, OP_ARG] == CALL_CODE["alltoallv"])
            rows[v, OP_LIST] += len(self.counts)
        key = rows.tobytes() if not len(low.req_list) and not low.counts else b""
        if key and key in self.shared:
            self.begin[r], self.end[r] = self.shared[key]
            return
        self.req_lists.append(low.req_list)
        self.n_req += len(low.req_list)
        self.counts.extend(low.counts)
        self.begin[r], self.end[r] = self.n_ops, self.n_ops + len(rows)
        if key:
            self.shared[key] = (self.begin[r], self.end[r])
        self.blocks.append(rows)
        self.n_ops += len(rows)

    def same_as_previous(self, r: int) -> None:
        """Rank r runs the rows of rank r - 1."""
        self.begin[r], self.end[r] = self.begin[r - 1], self.end[r - 1]
        self.waiting[r] = self.waiting[r - 1]


def _lower_ranks(trace: Trace, opt: Options, comm_index: dict[int, int], member_sets: dict[int, frozenset[int]],
                 table: _OpTable) -> tuple[list[_RankLowering], np.ndarray]:
    """Lower every rank's calls into `table` (a list several ranks share, a generator's, once), checking that the
    members of each communicator call the same collectives. Returns the lowerings and, at the rank each was made
    for, how many ranks run it."""
    lists = {id(calls): calls for calls in trace.ranks}  # a list several ranks share is looked at once
    firsts = [_first_start(calls) for calls in lists.values()]
    origin = min((f for f in firsts if not math.isnan(f)), default=math.nan)  # the trace's first call: cycle 0
    sequences: dict[int, list[tuple[int, str, int]]] = {}
    callers: dict[int, set[int]] = {}  # the ranks that call collectives on each communicator
    last: list[Call] | None = None  # the previous rank's call list (lowered[-1] is its lowering)
    repeats = np.zeros(trace.n_ranks, np.int64)  # ranks that run the lowering of rank r's list (r, those after it)
    lowered: list[_RankLowering] = []
    for r, calls in enumerate(trace.ranks):
        if calls is last:  # a generator gives every rank one list (a collective loop): lower it once
            prev = lowered[-1]
            prev.reuse_for(r)
            repeats[prev.rank] += 1
            for comm in prev.coll_comms:
                callers[comm].add(r)
            table.same_as_previous(r)
            continue
        low = _RankLowering(r, trace, opt, comm_index, {}, member_sets)
        low.lower(calls, origin)
        _check_collectives(r, low.colls, sequences, trace)
        lowered.append(low)
        repeats[r] = 1
        low.coll_comms = {comm for comm, _, _ in low.colls}
        for comm in low.coll_comms:
            callers.setdefault(comm, set()).add(r)
        last = calls
        table.add(r, low)
    _check_members_called(sequences, callers, trace)
    return lowered, repeats


def _renumber(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True), without sorting when the values are non-negative and fewer than
    4 x their number (a trace's request ids: 0, 1, 2, ... per rank)."""
    if len(values) and values.min() >= 0 and values.max() < 4 * len(values):
        seen = np.zeros(values.max() + 1, bool)
        seen[values] = True
        return np.flatnonzero(seen), (np.cumsum(seen) - 1)[values]
    return np.unique(values, return_inverse=True)


def _first_start(calls: Sequence[Call]) -> float:
    """The start of the first call that has one (nan: none)."""
    if isinstance(calls, CallTable):
        start = calls.cols["start_ns"]
        timed = np.flatnonzero(~np.isnan(start))
        return float(start[timed[0]]) if len(timed) else math.nan
    return next((c.start_ns for c in calls if not math.isnan(c.start_ns)), math.nan)


def _call_totals(lowered: list[_RankLowering], repeats: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """MPI calls of each kind over all ranks, and the unknown calls skipped, by name."""
    call_counts = np.zeros(len(CALL_CODE), np.int64)
    skipped: dict[str, int] = {}
    for low in lowered:
        call_counts += low.calls * repeats[low.rank]
        for name, n in low.skipped.items():
            skipped[name] = skipped.get(name, 0) + n * int(repeats[low.rank])
    return call_counts, skipped


def _check_collectives(rank: int, colls: list[tuple[int, str, int]],
                       sequences: dict[int, list[tuple[int, str, int]]], trace: Trace) -> None:
    """Every member of a communicator calls the same collectives, with the same roots, in the same order: the
    first member's sequence is the reference."""
    per_comm: dict[int, list[tuple[str, int]]] = {}
    for comm, kind, root in colls:
        per_comm.setdefault(comm, []).append((kind, root))
    for comm, seq in per_comm.items():
        ref = sequences.setdefault(comm, [(rank, kind, root) for kind, root in seq])
        ref_rank = ref[0][0]
        for i, ((kind, root), (_, rkind, rroot)) in enumerate(zip(seq, ref)):
            if kind != rkind or (kind in ("bcast", "reduce", "gather", "scatter") and root != rroot):
                raise ProgramError(f"{trace.where(rank)}: rank {rank}'s collective {i} on communicator {comm} is "
                                   f"{kind} (root {root}), but rank {ref_rank} calls {rkind} (root {rroot})")
        if len(seq) != len(ref):
            raise ProgramError(f"{trace.where(rank)}: rank {rank} calls {len(seq)} collectives on communicator "
                               f"{comm}, rank {ref_rank} calls {len(ref)}")


def _check_members_called(sequences: dict[int, list[tuple[int, str, int]]], callers: dict[int, set[int]],
                          trace: Trace) -> None:
    """A member that calls no collective on a communicator whose other members do would leave them waiting."""
    for comm, ref in sequences.items():
        for rank in trace.comms[comm]:
            if rank not in callers[comm]:
                raise ProgramError(f"{trace.where(rank)}: rank {rank} calls no collective on communicator {comm}, "
                                   f"rank {ref[0][0]} calls {len(ref)}")
