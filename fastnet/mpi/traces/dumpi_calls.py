"""DUMPI's calls as `Call`s: what the binary reader (dumpi.py) and the ASCII reader (dumpi_ascii.py) share once
each has turned its file into `DumpiCall`s (a function name, its times and its arguments by DUMPI's names).

Arguments are ints, tuples of ints (arrays; () where DUMPI recorded none) or strings. Datatypes are DUMPI's
numbers; a size comes from the trace's own table (a Blue Gene/P trace has 4-byte MPI_LONG), else from the
predefined type's usual LP64 size below.

DUMPI records handles as each rank numbered them. Requests are renumbered 0, 1, 2, ... per rank, one per
isend/irecv, so that a handle DUMPI reuses after a wait never names two requests. Communicators are rebuilt by
replaying the constructors in call order: the k-th constructor a rank calls on a parent communicator is the same
collective call on every member, so (parent, k) names the new communicator across ranks; its members come from
the group (Comm_create), the colour and key (Comm_split, Cart_sub), or the parent (Comm_dup, Cart_create).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, NamedTuple, Union

import numpy as np

from fastnet.errors import TraceError
from fastnet.mpi.calls import ANY_SOURCE, ANY_TAG, PROC_NULL, Call, CallTable, Trace
from fastnet.mpi.traces.dumpi_layout import IDS, NAMES
from fastnet.mpi.traces.names import is_noop

# DUMPI's numbering of the predefined datatypes (dumpi/common/constants.h) and their usual LP64 sizes.
DUMPI_DATATYPES: tuple[tuple[str, int], ...] = (
    ("MPI_DATATYPE_ERROR", 0), ("MPI_DATATYPE_NULL", 0), ("MPI_CHAR", 1), ("MPI_SIGNED_CHAR", 1),
    ("MPI_UNSIGNED_CHAR", 1), ("MPI_BYTE", 1), ("MPI_WCHAR", 4), ("MPI_SHORT", 2), ("MPI_UNSIGNED_SHORT", 2),
    ("MPI_INT", 4), ("MPI_UNSIGNED", 4), ("MPI_LONG", 8), ("MPI_UNSIGNED_LONG", 8), ("MPI_FLOAT", 4),
    ("MPI_DOUBLE", 8), ("MPI_LONG_DOUBLE", 16), ("MPI_LONG_LONG_INT", 8), ("MPI_UNSIGNED_LONG_LONG", 8),
    ("MPI_LONG_LONG", 8), ("MPI_PACKED", 1), ("MPI_LB", 0), ("MPI_UB", 0), ("MPI_FLOAT_INT", 8),
    ("MPI_DOUBLE_INT", 12), ("MPI_LONG_INT", 12), ("MPI_SHORT_INT", 6), ("MPI_2INT", 8),
    ("MPI_LONG_DOUBLE_INT", 20),
)

# DUMPI's predefined handles (dumpi/common/constants.h).
COMM_NULL, COMM_WORLD, COMM_SELF = 1, 2, 3
GROUP_NULL, GROUP_EMPTY = 1, 2
DUMPI_ANY = -1  # MPI_ANY_SOURCE and MPI_ANY_TAG as DUMPI records them
MPI_UNDEFINED = -32766  # what MPICH and Open MPI use; DUMPI records Comm_split's colour raw
DUMPI_BYTE = 5  # MPI_BYTE in DUMPI's numbering: write.py writes every count in bytes
DUMPI_SUM = 3  # MPI_SUM in DUMPI's numbering of ops
DUMPI_FIRST_COMM, DUMPI_FIRST_REQUEST = 4, 2  # the first handles after the predefined ones (write.py)
DUMPI_VERSION = (13, 0, 0)  # sst-dumpi's version at the commit dumpi_layout.py follows

SENDS = {"MPI_Send": "send", "MPI_Bsend": "send", "MPI_Ssend": "send", "MPI_Rsend": "send",
         "MPI_Isend": "isend", "MPI_Ibsend": "isend", "MPI_Issend": "isend", "MPI_Irsend": "isend"}
RECVS = ("MPI_Recv", "MPI_Irecv")
SENDRECVS = ("MPI_Sendrecv", "MPI_Sendrecv_replace")
SEND_INITS = ("MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init")
STARTS = ("MPI_Start", "MPI_Startall")
WAITS = ("MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany",
         "MPI_Testsome")
MPI_COLLECTIVES = ("MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Allgather",
                   "MPI_Scatter", "MPI_Alltoall", "MPI_Alltoallv")
# Collectives replayed as one of the above with the same bytes on the wire (docs/mpi.md "Coverage"): the
# v-variants with their mean block, reduce_scatter as MPICH's pairwise exchange (an alltoall of each rank's
# block), scans as an allreduce of their buffer.
AS_COLLECTIVES = ("MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
                  "MPI_Scan", "MPI_Exscan")
COMM_CONSTRUCTORS = ("MPI_Comm_create", "MPI_Comm_split", "MPI_Comm_dup", "MPI_Cart_create", "MPI_Cart_sub")
GROUP_OPS = ("MPI_Comm_group", "MPI_Group_incl", "MPI_Group_excl", "MPI_Group_range_incl", "MPI_Group_range_excl",
             "MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference", "MPI_Group_free", "MPI_Comm_free")
# The calls whose arguments the walker reads (the rest are noop or unknown by their name alone).
READS_ARGUMENTS = frozenset(SENDS).union(RECVS, SENDRECVS, SEND_INITS, ("MPI_Recv_init",), STARTS, WAITS,
                                         MPI_COLLECTIVES, AS_COLLECTIVES, COMM_CONSTRUCTORS, GROUP_OPS,
                                         ("MPI_Cancel",))

# The calls whose records the binary reader reads in bulk (dumpi.py _bulk_plan) and _Rank.read converts in one
# step, by the Call kind each becomes (NAME_ONLY: noop or unknown by its name, which is all `add` reads of it):
# most of a large trace's calls are these.
NAME_ONLY = "name"
BULK_KINDS = {name: NAME_ONLY for name in NAMES if name not in READS_ARGUMENTS and name != "MPI_Request_free"} | \
    SENDS | {"MPI_Recv": "recv", "MPI_Irecv": "irecv", "MPI_Wait": "wait", "MPI_Waitall": "waitall",
             "MPI_Allreduce": "allreduce"}
BULK_COLUMNS = {"count": "count", "datatype": "datatype", "dest": "peer", "source": "peer", "tag": "tag",
                "comm": "comm", "request": "request"}  # argument -> Bulk column
# By function id: the kind of Call its bulk-read records become (noop or unknown for NAME_ONLY), its name, and
# whether it receives (its source and tag may be DUMPI's ANY).
_ROW_KIND = np.array([("noop" if is_noop(n) else "unknown") if BULK_KINDS.get(n) == NAME_ONLY else BULK_KINDS.get(n)
                      for n in NAMES], object)
_NAMES = np.array(NAMES, object)
_RECEIVES = np.array([n in RECVS for n in NAMES])
_USES_COMM = np.array([BULK_KINDS.get(n) not in (None, NAME_ONLY, "wait", "waitall") for n in NAMES])
_CREATES = np.array([BULK_KINDS.get(n) in ("isend", "irecv") for n in NAMES])
_WAITS = np.array([BULK_KINDS.get(n) in ("wait", "waitall") for n in NAMES])


class _Columns(NamedTuple):
    """A rank's records read in bulk, converted as far as needs no state (_Rank.read), as arrays by record."""
    kind: np.ndarray  # the Call's (a wait that completes nothing becomes a noop), str objects
    name: np.ndarray  # str objects
    start: np.ndarray  # float64: ns since the trace's origin
    end: np.ndarray
    peer: np.ndarray
    tag: np.ndarray
    comm: np.ndarray  # DUMPI's handle, -1: the call names none
    nbytes: np.ndarray
    handle: np.ndarray  # the request handle of isend, irecv
    pos: np.ndarray
    creates: np.ndarray  # bool: the isends and irecvs
    waits: np.ndarray  # bool: the waits and waitalls
    named_at: np.ndarray  # the request handles each names: named[named_at[i]:named_at[i + 1]] (int64[n + 1])
    named: np.ndarray


Value = Union[int, str, tuple]  # an argument: int, array of ints (or of strings), string

# Provisional communicator ids while the ranks are walked; resolved to Trace.comms keys afterwards.
_WORLD, _SELF = 0, 1


@dataclass
class DumpiCall:
    """One MPI call as a DUMPI file holds it; `pos` locates it in the file (a line, a byte offset)."""
    name: str
    pos: int
    start_ns: int  # wall clock in ns, as recorded
    end_ns: int
    args: dict[str, Value] = field(default_factory=dict)


@dataclass
class Bulk:
    """A binary file's records, located in one pass and the arguments of the common ones read in bulk (dumpi.py
    _bulk): per record in file order its function id (-1: the next of RankCalls.calls, read field by field), byte
    offset, wall clock (ns) and arguments by BULK_COLUMNS (0 where it has none), all int64[n], and Waitall's
    requests."""
    fid: np.ndarray
    pos: np.ndarray
    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    datatype: np.ndarray
    peer: np.ndarray  # dest or source
    tag: np.ndarray
    comm: np.ndarray
    request: np.ndarray
    requests_at: np.ndarray  # record i's requests array (Waitall's) is requests[requests_at[i]:requests_at[i + 1]]
    requests: np.ndarray
    reread: Callable[[int], DumpiCall]  # the record at a byte offset, read field by field


@dataclass
class RankCalls:
    """One rank's file, parsed: its calls, its datatype table (number -> size) and how to name a position."""
    path: Path
    calls: list[DumpiCall]  # with `bulk`, only the records it does not hold
    datatype_sizes: dict[int, int]
    locate: Callable[[int], str]  # DumpiCall.pos -> "file:line" / "file:byte N", for error messages
    bulk: Bulk | None = None

    def first_start(self) -> int | None:
        """The wall clock of the first record (None: no records)."""
        if self.bulk is not None and len(self.bulk.fid):
            return self.calls[0].start_ns if self.bulk.fid[0] < 0 else int(self.bulk.start[0])
        return self.calls[0].start_ns if self.calls and self.bulk is None else None


def build_trace(ranks: list[RankCalls], source: str) -> Trace:
    """The Trace of a DUMPI trace whose rank r is `ranks[r]`."""
    # Walltimes are since the epoch: ~1e18 ns, beyond float64's exact integers. Counting from the whole second
    # of the earliest call keeps every time exact (and a trace written from 0 s reads back unchanged).
    first = [t for rank in ranks if (t := rank.first_start()) is not None]
    origin = min(first) // 1_000_000_000 * 1_000_000_000 if first else 0
    comms = _Comms(len(ranks))
    walkers = []
    for r, rank in enumerate(ranks):
        walker = _Rank(r, rank, comms, origin)
        walker.read(rank)
        walkers.append(walker)
    comms.resolve()
    return Trace(ranks=[w.finish() for w in walkers], comms=comms.table(), files=[str(rank.path) for rank in ranks],
                 source=source)


def spans(first: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The integers first[k], first[k] + 1, ..., first[k] + length[k] - 1 of every k, one span after the other."""
    ends = np.cumsum(length)
    return np.arange(ends[-1] if len(ends) else 0) + np.repeat(first - ends + length, length)


def _ints(value: Value) -> list[int]:
    """An array argument's values (a scalar is an array of one: the ASCII form prints `request=[2]`)."""
    if isinstance(value, int):
        return [value]
    return [v for v in value if isinstance(v, int)] if isinstance(value, tuple) else []


@dataclass
class _Record:
    """One rank's part in a communicator constructor."""
    op: tuple  # ("split", color, key) | ("create", group) | ("dup",) | ("cart", dims) | ("cartsub", remain)
    member: bool  # the rank got a communicator (not MPI_COMM_NULL)
    where: str


class _Comms:
    """Communicators across ranks: provisional ids while walking, then Trace.comms ids (see the module doc)."""

    def __init__(self, n_ranks: int):
        self.n = n_ranks
        self.next_prov = 2
        self.parent: dict[int, int] = {}
        self.child: dict[tuple[int, int], int] = {}
        self.records: dict[int, dict[int, _Record]] = {}
        self.final: dict[tuple[int, int], int] = {(_WORLD, r): 0 for r in range(n_ranks)}
        self.members: dict[int, tuple[int, ...]] = {0: tuple(range(n_ranks))}
        self.dims: dict[int, tuple[int, ...]] = {}
        self.self_ids: dict[int, int] = {}

    def created(self, parent: int, k: int, rank: int, record: _Record) -> int:
        if (parent, k) not in self.child:
            self.child[(parent, k)] = self.next_prov
            self.parent[self.next_prov] = parent
            self.records[self.next_prov] = {}
            self.next_prov += 1
        prov = self.child[(parent, k)]
        self.records[prov][rank] = record
        return prov

    def final_id(self, prov: int, rank: int) -> int:
        """The Trace.comms id of provisional communicator `prov` as `rank` sees it (KeyError: not a member)."""
        if prov == _SELF:
            if rank not in self.self_ids:
                self.self_ids[rank] = self._new((rank,))
            return self.self_ids[rank]
        return self.final[(prov, rank)]

    def _new(self, members: tuple[int, ...]) -> int:
        cid = len(self.members)
        self.members[cid] = members
        return cid

    def group(self, expr: tuple, rank: int) -> tuple[int, ...]:
        """World ranks of a group expression built by the Comm_group / Group_* calls of `rank`."""
        op = expr[0]
        if op == "empty":
            return ()
        if op == "comm":
            return self.members[self.final_id(expr[1], rank)]
        if op in ("union", "inter", "diff"):
            a, b = self.group(expr[1], rank), self.group(expr[2], rank)
            if op == "union":
                return a + tuple(x for x in b if x not in a)
            return tuple(x for x in a if (x in b) == (op == "inter"))
        base = self.group(expr[1], rank)
        picked = expr[2]
        if op in ("range_incl", "range_excl"):
            picked = [r for first, last, stride in expr[2] for r in range(first, last + (1 if stride > 0 else -1),
                                                                          stride)]
        if op in ("incl", "range_incl"):
            return tuple(base[i] for i in picked)
        dropped = set(picked)
        return tuple(x for i, x in enumerate(base) if i not in dropped)

    def resolve(self) -> None:
        # Parents get smaller provisional ids than their children, so ascending order meets parents first.
        for prov in sorted(self.records):
            by_parent: dict[int, list[tuple[int, _Record]]] = {}
            for rank, rec in sorted(self.records[prov].items()):
                try:
                    parent = self.final_id(self.parent[prov], rank)
                except KeyError:
                    raise TraceError(rec.where, "builds a communicator from one this rank is not a member of") from None
                by_parent.setdefault(parent, []).append((rank, rec))
            for parent, entries in by_parent.items():
                self._resolve_one(prov, parent, entries)

    def _resolve_one(self, prov: int, parent: int, entries: list[tuple[int, _Record]]) -> None:
        kinds = sorted({rec.op[0] for _, rec in entries})
        if len(kinds) > 1:
            raise TraceError(entries[0][1].where, f"the members of communicator {parent} call different "
                                                  f"constructors at the same point ({', '.join(kinds)})")
        kind = kinds[0]
        pm = self.members[parent]
        pos = {r: i for i, r in enumerate(pm)}
        members = [(rank, rec) for rank, rec in entries if rec.member]
        groups: dict[object, list[int]] = {}  # one new communicator per distinct key, members in order
        new_dims: dict[object, tuple[int, ...]] = {}
        if kind == "dup":
            groups[0] = list(pm)
        elif kind == "cart":
            dims = tuple(members[0][1].op[1]) if members else ()
            groups[0] = list(pm[:math.prod(dims)])
            new_dims[0] = dims
        elif kind == "split":
            colors: dict[int, list[tuple[int, int, int]]] = {}
            for rank, rec in members:
                colors.setdefault(rec.op[1], []).append((rec.op[2], pos[rank], rank))
            for color in sorted(colors):
                groups[color] = [rank for _, _, rank in sorted(colors[color])]
        elif kind == "create":
            for rank, rec in members:
                groups.setdefault(self.group(rec.op[1], rank), list(self.group(rec.op[1], rank)))
        elif kind == "cartsub":
            dims = self.dims.get(parent)
            if dims is None:
                raise TraceError(entries[0][1].where, f"MPI_Cart_sub on communicator {parent}, which has no "
                                                      "Cartesian topology from MPI_Cart_create")
            for rank, rec in members:
                remain = rec.op[1]
                coords, rest = [], pos[rank]
                for d in reversed(dims):  # row-major, as MPI_Cart_coords
                    coords.insert(0, rest % d)
                    rest //= d
                color = tuple(c for c, keep in zip(coords, remain) if not keep)
                key = tuple(c for c, keep in zip(coords, remain) if keep)
                groups.setdefault(color, []).append((key, rank))
                new_dims[color] = tuple(d for d, keep in zip(dims, remain) if keep)
            groups = {color: [rank for _, rank in sorted(v)] for color, v in sorted(groups.items())}
        ids = {key: self._new(tuple(ranks)) for key, ranks in groups.items()}
        for key, dims in new_dims.items():
            self.dims[ids[key]] = dims
        for rank, rec in members:
            owner = [key for key, ranks in groups.items() if rank in ranks]
            if not owner:
                raise TraceError(rec.where, f"rank {rank} got a new communicator it is not a member of")
            self.final[(prov, rank)] = ids[owner[0]]

    def table(self) -> dict[int, tuple[int, ...]]:
        return dict(self.members)


class _Rank:
    """One rank's DUMPI calls turned into Calls, with the handle tables DUMPI's numbering needs."""

    def __init__(self, rank: int, parsed: RankCalls, comms: _Comms, origin: int):
        self.rank = rank
        self.origin = origin
        self.locate = parsed.locate
        self.table = parsed.datatype_sizes
        self.comms = comms
        self.out = CallTable()  # the Calls
        self.pos: list[np.ndarray] = []  # the DumpiCall.pos of each, for error messages, run by run ...
        self.single_pos: list[int] = []  # ... and of those emitted one at a time after the last run
        self.cancelled: list[int] = []  # the request ids of cancelled receives (finish makes them receive nothing)
        self.comm_handles: dict[int, int] = {COMM_WORLD: _WORLD, COMM_SELF: _SELF}
        self.groups: dict[int, tuple] = {GROUP_EMPTY: ("empty",)}
        self.constructed: dict[int, int] = {}  # provisional parent -> constructors called on it so far
        self.active: dict[int, int] = {}  # DUMPI request handle -> our request id
        self.persistent: dict[int, Call] = {}  # Send_init / Recv_init handle -> the call a Start issues
        self.next_request = 0

    # --- arguments -------------------------------------------------------------------------------------------

    def where(self, b: DumpiCall) -> str:
        return self.locate(b.pos)

    def arg(self, b: DumpiCall, name: str) -> Value:
        if name not in b.args:
            raise TraceError(self.where(b), f"{b.name} has no argument {name!r}")
        return b.args[name]

    def int_arg(self, b: DumpiCall, name: str) -> int:
        value = self.arg(b, name)
        if not isinstance(value, int):
            raise TraceError(self.where(b), f"{b.name}: {name}={value!r} is not an integer")
        return value

    def ints(self, b: DumpiCall, name: str) -> list[int]:
        return _ints(self.arg(b, name))

    def type_size(self, b: DumpiCall, name: str) -> int:
        n = self.int_arg(b, name)
        size = self.table.get(n, 0)
        if size > 0:
            return size
        if 0 <= n < len(DUMPI_DATATYPES) and DUMPI_DATATYPES[n][1] > 0:
            return DUMPI_DATATYPES[n][1]
        label = DUMPI_DATATYPES[n][0] if 0 <= n < len(DUMPI_DATATYPES) else "user-defined-datatype"
        raise TraceError(self.where(b), f"{b.name}: datatype {n} ({label}) has no known size (not in the trace's "
                                        "datatype table nor a predefined MPI type)")

    def nbytes(self, b: DumpiCall, count: str, datatype: str) -> int:
        n = self.int_arg(b, count)
        return 0 if n <= 0 else n * self.type_size(b, datatype)

    def counts(self, b: DumpiCall, counts: str, datatype: str) -> tuple[int, ...]:
        values = self.ints(b, counts)
        size = self.type_size(b, datatype) if any(values) else 0
        return tuple(c * size for c in values)

    def request_handle(self, b: DumpiCall) -> int:
        handles = self.ints(b, "request")
        return handles[0] if handles else -1  # <IGNORED>: no wait can name it

    def comm(self, b: DumpiCall, name: str = "comm") -> int:
        handle = self.int_arg(b, name)
        if handle not in self.comm_handles:
            raise TraceError(self.where(b), f"{b.name}: {name}={handle} is not a communicator this rank has "
                                            "(MPI_COMM_NULL, freed, or made by an unsupported constructor)")
        return self.comm_handles[handle]

    def source(self, b: DumpiCall, name: str = "source") -> int:
        n = self.int_arg(b, name)
        if n == DUMPI_ANY:
            return ANY_SOURCE
        # DUMPI stores MPI_PROC_NULL raw: Open MPI's -2 (dumpi2ascii prints it as "-2 (MPI_ROOT)").
        return PROC_NULL if n < 0 else n

    def dest(self, b: DumpiCall, name: str = "dest") -> int:
        n = self.int_arg(b, name)
        return PROC_NULL if n < 0 else n

    def recv_tag(self, b: DumpiCall, name: str = "tag") -> int:
        n = self.int_arg(b, name)
        return ANY_TAG if n == DUMPI_ANY else n

    # --- calls -----------------------------------------------------------------------------------------------

    def emit(self, b: DumpiCall, kind: str, **fields) -> Call:
        self.out.append(Call(kind=kind, name=b.name, start_ns=float(b.start_ns - self.origin),
                             end_ns=float(b.end_ns - self.origin), **fields))
        self.single_pos.append(b.pos)

    def new_request(self, handle: int) -> int:
        rid = self.next_request
        self.next_request += 1
        self.active[handle] = rid
        return rid

    def complete(self, handles: list[int]) -> tuple[int, ...]:
        return tuple(self.active.pop(h) for h in handles if h in self.active)

    def read(self, rank: RankCalls) -> None:
        """Convert the rank's calls in order: the records read in bulk a run at a time, each as `add` would (one
        whose datatype or communicator needs add's checks is read again for add), the others by `add`."""
        b = rank.bulk
        if b is None:
            for call in rank.calls:
                self.add(call)
            return
        # What needs no state, for every record at once: kind, name, times, bytes, peer and tag as `add` makes them
        known = np.where(b.fid < 0, 0, b.fid)
        uses_comm, receives, creates, waits = (x[known] & (b.fid >= 0) for x in (_USES_COMM, _RECEIVES, _CREATES,
                                                                                 _WAITS))
        types, of = np.unique(b.datatype, return_inverse=True)
        size = np.array([self.table.get(t, 0) for t in types.tolist()], np.int64)[of]
        peer = np.where(b.peer < 0, np.where(receives & (b.peer == DUMPI_ANY), ANY_SOURCE, PROC_NULL), b.peer)
        # The request handles each wait names: a wait's one, a waitall's array
        waitall = waits & (known == IDS["MPI_Waitall"])
        n_named = np.where(waitall, np.diff(b.requests_at), waits)
        named_at = np.zeros(len(known) + 1, np.int64)
        np.cumsum(n_named, out=named_at[1:])
        named = np.zeros(named_at[-1], np.int64)
        named[named_at[:-1][waits & ~waitall]] = b.request[waits & ~waitall]
        named[spans(named_at[:-1][waitall], n_named[waitall])] = b.requests[spans(b.requests_at[:-1][waitall],
                                                                                  n_named[waitall])]
        c = _Columns(
            kind=_ROW_KIND[known], name=_NAMES[known], start=(b.start - self.origin).astype(np.float64),
            end=(b.end - self.origin).astype(np.float64),
            peer=np.where(uses_comm & (known != IDS["MPI_Allreduce"]), peer, PROC_NULL),
            tag=np.where(receives & (b.tag == DUMPI_ANY), ANY_TAG, b.tag),
            comm=np.where(uses_comm, b.comm, -1),  # (-1: none, _run maps it to 0)
            nbytes=np.where(uses_comm & (b.count > 0), b.count * size, 0),
            handle=b.request, pos=b.pos, creates=creates, waits=waits, named_at=named_at, named=named)
        # `add` converts the records not read in bulk, and those whose datatype the trace's table does not size
        general = iter(rank.calls)
        i = 0
        for j in np.flatnonzero((b.fid < 0) | (uses_comm & (size <= 0))).tolist() + [len(b.fid)]:
            i = self._run(c, i, j)
            while i < j:  # a communicator this rank does not have (now): add says so
                self.add(b.reread(int(c.pos[i])))
                i = self._run(c, i + 1, j)
            if j < len(b.fid):
                self.add(next(general) if b.fid[j] < 0 else b.reread(int(c.pos[j])))
            i = j + 1

    def _run(self, c: _Columns, i: int, j: int) -> int:
        """Records i..j-1 (read in bulk, sized) converted up to the first whose communicator this rank does not
        have; returns where it stopped."""
        lut = {**self.comm_handles, -1: 0}
        handles, which = np.unique(c.comm[i:j], return_inverse=True)
        prov = np.array([lut.get(h, -1) for h in handles.tolist()], np.int64)[which]
        unknown = np.flatnonzero(prov < 0)
        if len(unknown):
            j = i + int(unknown[0])
            prov = prov[:j - i]
        # Requests: a new id per isend / irecv in call order
        creates = np.flatnonzero(c.creates[i:j])
        request = np.full(j - i, -1, np.int64)
        request[creates] = self.next_request + np.arange(len(creates))
        self.next_request += len(creates)
        requests_at, requests = self.complete_run(c, i, j, request)
        kind = c.kind[i:j].copy()
        kind[c.waits[i:j] & (requests_at[1:] == requests_at[:-1])] = "noop"  # a wait that completes nothing
        if self.single_pos:
            self.pos.append(np.array(self.single_pos, np.int64))
            self.single_pos = []
        self.pos.append(c.pos[i:j])
        self.out.extend(kind=kind, name=c.name[i:j], start_ns=c.start[i:j], end_ns=c.end[i:j], peer=c.peer[i:j],
                        tag=c.tag[i:j], comm=prov, bytes=c.nbytes[i:j], request=request, requests_at=requests_at,
                        requests=requests, root=np.zeros(j - i, np.int64))
        return j

    def complete_run(self, c: _Columns, i: int, j: int, request: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The requests each wait of records i..j-1 completes (requests[requests_at[k]:requests_at[k + 1]] of
        record i + k, int64[j - i + 1]), given the request ids the run's isends and irecvs make (-1: none), and
        self.active updated. A handle is active from its isend / irecv until a wait names it: each handle a wait
        names takes the request of the handle's event before it (in call order) when that is an isend / irecv,
        nothing when it is a wait (a handle named twice, or not active), and self.active's when the run has
        none."""
        named_at = c.named_at[i:j + 1]
        creates = request >= 0
        # the events in call order (an isend / irecv's handle, the handles a wait names), then by handle
        at = np.zeros(j - i + 1, np.int64)
        np.cumsum(creates + np.diff(named_at), out=at[1:])
        handle, rid, named = np.empty(at[-1], np.int64), np.full(at[-1], -1, np.int64), np.ones(at[-1], bool)
        handle[at[:-1][creates]], rid[at[:-1][creates]], named[at[:-1][creates]] = c.handle[i:j][creates], \
            request[creates], False
        handle[named] = c.named[named_at[0]:named_at[-1]]
        order = np.argsort(handle, kind="stable")
        handle, rid = handle[order], rid[order]
        first = np.ones(len(order), bool)  # the handle's first event in the run
        first[1:] = handle[1:] != handle[:-1]
        took = np.where(first, -1, np.concatenate(([-1], rid[:-1])))  # the request each handle named takes
        # the handles active before the run: those named before the run's isend / irecv take theirs, and the run
        # decides whether each stays active
        before = first & np.isin(handle, np.fromiter(self.active, np.int64, len(self.active)))
        took[before & (rid < 0)] = [self.active[h] for h in handle[before & (rid < 0)].tolist()]
        for h in handle[before].tolist():
            del self.active[h]
        last = np.append(first[1:], True)
        self.active.update(zip(handle[last & (rid >= 0)].tolist(), rid[last & (rid >= 0)].tolist()))
        took[order] = took.copy()  # back in call order
        done = named & (took >= 0)  # (handles not active, or named twice, are skipped)
        return np.concatenate(([0], np.cumsum(done)))[at], took[done]  # (done events before each call's first)

    def add(self, b: DumpiCall) -> None:
        name = b.name
        if name in SENDS:
            fields = dict(peer=self.dest(b), tag=self.int_arg(b, "tag"), comm=self.comm(b),
                          bytes=self.nbytes(b, "count", "datatype"))
            if SENDS[name] == "isend":
                fields["request"] = self.new_request(self.request_handle(b))
            self.emit(b, SENDS[name], **fields)
        elif name in RECVS:
            fields = dict(peer=self.source(b), tag=self.recv_tag(b), comm=self.comm(b),
                          bytes=self.nbytes(b, "count", "datatype"))
            if name == "MPI_Irecv":
                fields["request"] = self.new_request(self.request_handle(b))
            self.emit(b, "recv" if name == "MPI_Recv" else "irecv", **fields)
        elif name in WAITS:
            self.wait(b)
        elif name in SENDRECVS:
            replace_ = name == "MPI_Sendrecv_replace"
            sent = self.nbytes(b, "count", "datatype") if replace_ else self.nbytes(b, "sendcount", "sendtype")
            received = sent if replace_ else self.nbytes(b, "recvcount", "recvtype")
            self.emit(b, "sendrecv", peer=self.dest(b), tag=self.int_arg(b, "sendtag"), comm=self.comm(b),
                      bytes=sent, recv_peer=self.source(b), recv_tag=self.recv_tag(b, "recvtag"), recv_bytes=received)
        elif name in SEND_INITS or name == "MPI_Recv_init":
            self.persistent_init(b)
        elif name in STARTS:
            handles = self.ints(b, "request" if name == "MPI_Start" else "requests")
            started = [h for h in handles if h in self.persistent]
            for h in started:
                template = self.persistent[h]
                self.out.append(replace(template, name=name, start_ns=float(b.start_ns - self.origin),
                                        end_ns=float(b.end_ns - self.origin), request=self.new_request(h)))
                self.single_pos.append(b.pos)
            if not started:
                self.emit(b, "noop")
        elif name == "MPI_Cancel":
            rid = self.active.get(self.request_handle(b))
            # a cancelled receive never matches: it becomes a receive from PROC_NULL, which its wait completes at
            # once (finish; a cancelled send, deprecated and rare, is replayed as sent)
            if rid is not None:
                self.cancelled.append(rid)
            self.emit(b, "noop")
        elif name == "MPI_Request_free":
            handles = _ints(b.args.get("request", ()))
            for h in handles:
                self.persistent.pop(h, None)
            # an active request that is freed completes unobserved: the noop names it, and lowering detaches it
            self.emit(b, "noop", requests=self.complete(handles))
        elif name in MPI_COLLECTIVES or name in AS_COLLECTIVES:
            self.collective(b)
        elif name in COMM_CONSTRUCTORS or name in GROUP_OPS:
            if b.args:  # an ASCII writer that knew only the name wrote none: nothing to replay
                self.communicators(b)
            self.emit(b, "noop")
        elif is_noop(name):
            self.emit(b, "noop")
        else:
            self.emit(b, "unknown")

    def wait(self, b: DumpiCall) -> None:
        name = b.name
        handles = self.ints(b, "request" if name in ("MPI_Wait", "MPI_Test") else "requests")
        if name.startswith("MPI_Test") and self.int_arg(b, "outcount" if name == "MPI_Testsome" else "flag") <= 0:
            self.emit(b, "noop")  # nothing completed: a poll
            return
        if name in ("MPI_Waitany", "MPI_Testany"):
            index = self.int_arg(b, "index")
            handles = [handles[index]] if 0 <= index < len(handles) else []
        elif name in ("MPI_Waitsome", "MPI_Testsome"):
            handles = [handles[i] for i in self.ints(b, "indices") if 0 <= i < len(handles)]
        done = self.complete(handles)
        if not done:
            self.emit(b, "noop")  # only null or persistent-inactive requests
        elif name in ("MPI_Wait", "MPI_Waitany", "MPI_Test", "MPI_Testany"):
            self.emit(b, "wait", requests=done)
        else:
            self.emit(b, "waitall", requests=done)

    def persistent_init(self, b: DumpiCall) -> None:
        handle = self.request_handle(b)
        if b.name == "MPI_Recv_init":
            template = Call(kind="irecv", peer=self.source(b), tag=self.recv_tag(b), comm=self.comm(b),
                            bytes=self.nbytes(b, "count", "datatype"))
        else:
            template = Call(kind="isend", peer=self.dest(b), tag=self.int_arg(b, "tag"), comm=self.comm(b),
                            bytes=self.nbytes(b, "count", "datatype"))
        self.persistent[handle] = template
        self.emit(b, "noop")

    def collective(self, b: DumpiCall) -> None:
        name = b.name
        comm = self.comm(b)
        if name == "MPI_Barrier":
            self.emit(b, "barrier", comm=comm)
        elif name in ("MPI_Bcast", "MPI_Reduce", "MPI_Allreduce"):
            root = self.int_arg(b, "root") if name != "MPI_Allreduce" else 0
            self.emit(b, name[4:].lower(), comm=comm, root=root, bytes=self.nbytes(b, "count", "datatype"))
        elif name in ("MPI_Gather", "MPI_Scatter"):
            root = self.int_arg(b, "root")
            at_root = "commrank" in b.args and self.int_arg(b, "commrank") == root
            # The root's block size is in its receive (gather) / send (scatter) arguments, the others' in the
            # opposite ones (the root's may be MPI_IN_PLACE).
            use_recv = at_root == (name == "MPI_Gather")
            nbytes = self.nbytes(b, "recvcount", "recvtype") if use_recv else self.nbytes(b, "sendcount", "sendtype")
            self.emit(b, name[4:].lower(), comm=comm, root=root, bytes=nbytes)
        elif name in ("MPI_Allgather", "MPI_Alltoall"):
            # The receive arguments are significant even with MPI_IN_PLACE.
            self.emit(b, name[4:].lower(), comm=comm, bytes=self.nbytes(b, "recvcount", "recvtype"))
        elif name == "MPI_Alltoallv":
            self.emit(b, "alltoallv", comm=comm, send_counts=self.counts(b, "sendcounts", "sendtype"),
                      recv_counts=self.counts(b, "recvcounts", "recvtype"))
        elif name in ("MPI_Gatherv", "MPI_Scatterv"):
            root = self.int_arg(b, "root")
            at_root = "commrank" in b.args and self.int_arg(b, "commrank") == root
            gather = name == "MPI_Gatherv"
            if at_root:  # the mean of the blocks it gathers / scatters (their counts are significant there only)
                blocks = self.counts(b, "recvcounts", "recvtype") if gather else self.counts(b, "sendcounts", "sendtype")
                nbytes = sum(blocks) // max(len(blocks), 1)
            else:
                nbytes = self.nbytes(b, "sendcount", "sendtype") if gather else self.nbytes(b, "recvcount", "recvtype")
            self.emit(b, "gather" if gather else "scatter", comm=comm, root=root, bytes=nbytes)
        elif name in ("MPI_Allgatherv", "MPI_Reduce_scatter"):
            blocks = self.counts(b, "recvcounts", "recvtype" if name == "MPI_Allgatherv" else "datatype")
            self.emit(b, "allgather" if name == "MPI_Allgatherv" else "alltoall", comm=comm,
                      bytes=sum(blocks) // max(len(blocks), 1))
        elif name == "MPI_Reduce_scatter_block":
            self.emit(b, "alltoall", comm=comm, bytes=self.nbytes(b, "recvcount", "datatype"))
        else:  # MPI_Scan, MPI_Exscan
            self.emit(b, "allreduce", comm=comm, bytes=self.nbytes(b, "count", "datatype"))

    def communicators(self, b: DumpiCall) -> None:
        name = b.name
        if name == "MPI_Comm_free":
            self.comm_handles.pop(self.int_arg(b, "comm"), None)
        elif name == "MPI_Group_free":
            self.groups.pop(self.int_arg(b, "group"), None)
        elif name == "MPI_Comm_group":
            self.groups[self.int_arg(b, "group")] = ("comm", self.comm(b))
        elif name in ("MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference"):
            op = {"MPI_Group_union": "union", "MPI_Group_intersection": "inter", "MPI_Group_difference": "diff"}
            self.groups[self.int_arg(b, "newgroup")] = (op[name], self.group(b, "group1"), self.group(b, "group2"))
        elif name.startswith("MPI_Group_"):
            ranks = self.ints(b, "ranges" if "range" in name else "ranks")
            if "range" in name:
                ranks = [tuple(ranks[i:i + 3]) for i in range(0, len(ranks) - 2, 3)]
            self.groups[self.int_arg(b, "newgroup")] = (name[len("MPI_Group_"):], self.group(b, "group"), ranks)
        else:
            parent = self.comm(b, "oldcomm")
            if name == "MPI_Comm_create":
                op: tuple = ("create", self.group(b, "group"))
            elif name == "MPI_Comm_split":
                op = ("split", self.int_arg(b, "color"), self.int_arg(b, "key"))
            elif name == "MPI_Comm_dup":
                op = ("dup",)
            elif name == "MPI_Cart_create":
                op = ("cart", tuple(self.ints(b, "dims")))
            else:
                op = ("cartsub", tuple(bool(x) for x in self.ints(b, "remain_dims")))
            newcomm = self.int_arg(b, "newcomm")
            member = newcomm != COMM_NULL
            k = self.constructed.get(parent, 0)
            self.constructed[parent] = k + 1
            prov = self.comms.created(parent, k, self.rank, _Record(op, member, self.where(b)))
            if member:
                self.comm_handles[newcomm] = prov

    def group(self, b: DumpiCall, name: str) -> tuple:
        handle = self.int_arg(b, name)
        if handle not in self.groups:
            raise TraceError(self.where(b), f"{b.name}: {name}={handle} is not a group this rank made")
        return self.groups[handle]

    def finish(self) -> CallTable:
        """The rank's calls with provisional communicators replaced by Trace.comms ids (after resolve)."""
        cols = self.out.cols
        if self.cancelled:
            cancelled = np.isin(cols["request"], self.cancelled) & (cols["kind"] == "irecv")
            cols["peer"][cancelled], cols["bytes"][cancelled] = PROC_NULL, 0
        provisional, which = np.unique(cols["comm"], return_inverse=True)
        final = np.zeros(len(provisional), np.int64)
        for k, prov in enumerate(provisional.tolist()):
            try:
                final[k] = self.comms.final_id(prov, self.rank)
            except KeyError:  # not a member
                final[k] = -1
        if (final < 0).any():
            i = int(np.flatnonzero(final[which] < 0)[0])
            pos = np.concatenate(self.pos + [np.array(self.single_pos, np.int64)])
            raise TraceError(self.locate(int(pos[i])), f"{cols['name'][i]} uses a communicator rank {self.rank} is "
                             "not a member of")
        cols["comm"] = final[which]
        return self.out
