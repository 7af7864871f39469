"""The MPI program every source produces: one list of `Call`s per rank, and the communicators they use.

A built-in generator (generators.py) and a trace reader (traces/) both give a `Trace`; program.py lowers it to
the op arrays the kernels run. This module is plain Python: no numba, no numpy.

Conventions shared by every source:
- `peer` and `root` are ranks *in the call's communicator*; `comm` is a key of `Trace.comms`, whose value lists
  the world ranks of its members in communicator-rank order. Communicator 0 is MPI_COMM_WORLD.
- `bytes` is count x datatype size. For collectives it is what MPI's own arguments give one rank: bcast, reduce
  and allreduce the whole buffer; gather, allgather, scatter and alltoall the block exchanged with one rank;
  alltoallv gives `send_counts` / `recv_counts` (bytes to / from each communicator rank) instead.
- `start_ns` / `end_ns` are the trace's clock when the call began and returned (nan for generated programs);
  the gaps between calls become computation when the program is lowered.
- Calls that move no data (MPI_Init, Comm_rank, Comm_split, Wtime, ...) are `noop` with their `name`; calls the
  reader does not know are `unknown` with their `name`, so that lowering can refuse them or skip and count them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

ANY_SOURCE = -1  # recv's peer
ANY_TAG = -1  # recv's tag
PROC_NULL = -2  # a send or receive to it completes at once and moves nothing

POINT_TO_POINT = ("send", "recv", "isend", "irecv", "wait", "waitall", "sendrecv")
COLLECTIVES = ("barrier", "bcast", "reduce", "allreduce", "gather", "allgather", "scatter", "alltoall",
               "alltoallv")
KINDS = POINT_TO_POINT + COLLECTIVES + ("compute", "noop", "unknown")


@dataclass(slots=True)
class Call:
    kind: str  # one of KINDS
    name: str = ""  # the call as the trace names it (MPI_Isend); required for noop and unknown
    start_ns: float = math.nan
    end_ns: float = math.nan
    peer: int = PROC_NULL  # send/isend: destination; recv/irecv: source (ANY_SOURCE allowed); sendrecv: dest
    tag: int = 0  # ANY_TAG allowed on receives
    comm: int = 0
    bytes: int = 0
    request: int = -1  # isend / irecv: the request handle a later wait names
    requests: tuple[int, ...] = ()  # wait / waitall: the handles completed
    root: int = 0  # bcast, reduce, gather, scatter
    recv_peer: int = PROC_NULL  # sendrecv's receive half
    recv_tag: int = 0
    recv_bytes: int = 0
    send_counts: tuple[int, ...] = ()  # alltoallv: bytes to each communicator rank
    recv_counts: tuple[int, ...] = ()  # alltoallv: bytes from each communicator rank
    duration_ns: float = 0.0  # compute given in ns
    duration_cycles: int = -1  # compute given in cycles (generators); wins over duration_ns when >= 0


COLUMNS = tuple(f.name for f in fields(Call))[:11]  # a CallTable's columns: Call's first fields, kind .. root
_DEFAULTS = {f.name: f.default for f in fields(Call)[11:]}


class CallTable(Sequence):
    """A rank's calls as columns of Call's first fields (COLUMNS, one list each) instead of one Call object each:
    what a reader of a large trace builds (dumpi_calls.py), whole runs of calls at a time, and what lowering reads
    (program.py). A call with other fields (sendrecv's receive, alltoallv's counts, compute's duration) keeps them
    in `rest`. Indexing and iterating give Calls, so a table is read like the list of Calls it stands for."""

    def __init__(self) -> None:
        self.cols: dict[str, list] = {name: [] for name in COLUMNS}
        self.rest: dict[int, dict[str, Any]] = {}  # call index -> its other fields that are not their default

    @classmethod
    def of(cls, calls: Sequence[Call]) -> CallTable:
        if isinstance(calls, CallTable):
            return calls
        table = cls()
        for c in calls:
            table.append(c)
        return table

    def append(self, c: Call) -> None:
        rest = {k: getattr(c, k) for k, v in _DEFAULTS.items() if getattr(c, k) != v}
        if rest:
            self.rest[len(self)] = rest
        for name, col in self.cols.items():
            col.append(getattr(c, name))

    def extend(self, **columns: list) -> None:
        """Calls given as columns, every one of COLUMNS with the same length."""
        for name, col in self.cols.items():
            col.extend(columns[name])

    def __len__(self) -> int:
        return len(self.cols["kind"])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return Call(**{name: col[i] for name, col in self.cols.items()}, **self.rest.get(i, {}))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(a == b for a, b in zip(self, other))


@dataclass
class Trace:
    ranks: list[Sequence[Call]]  # ranks[r]: rank r's calls in program order (a list, or a CallTable)
    comms: dict[int, tuple[int, ...]] = field(default_factory=dict)  # id -> world ranks; 0 is filled in
    files: list[str] = field(default_factory=list)  # where rank r's calls came from (error messages)
    source: str = "generator"  # "generator", "otf2", "dumpi_ascii", ...
    not_recorded: dict[str, int] = field(default_factory=dict)  # calls the program made that the tracer did not
    # record, by name, over all ranks (DUMPI's footer): the trace is a fragment of the run

    def __post_init__(self) -> None:
        self.comms.setdefault(0, tuple(range(len(self.ranks))))

    @property
    def n_ranks(self) -> int:
        return len(self.ranks)

    def where(self, rank: int) -> str:
        return self.files[rank] if rank < len(self.files) else f"rank {rank}"
