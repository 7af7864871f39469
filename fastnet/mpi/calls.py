"""The MPI program every source produces: one list of `Call`s per rank, and the communicators they use.

A built-in generator (generators.py) and a trace reader (traces/) both give a `Trace`; program.py lowers it to
the op arrays the kernels run. This module has no numba; CallTable keeps its columns as numpy arrays.

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
from itertools import chain
from typing import Any

import numpy as np

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
_DTYPES = {"kind": object, "name": object, "start_ns": np.float64, "end_ns": np.float64}  # the others int64


class CallTable(Sequence):
    """A rank's calls as columns of Call's first fields (COLUMNS) instead of one Call object each: what a reader
    of a large trace builds (dumpi_calls.py), whole runs of calls at a time, and what lowering reads (program.py).
    `cols` gives them as numpy arrays: kind and name of str objects, start_ns and end_ns float64, the others
    int64, except `requests`, which holds every call's handles one after the other (call i's are
    requests[requests_at[i]:requests_at[i + 1]], requests_at int64[n + 1]). A call with other fields (sendrecv's
    receive, alltoallv's counts, compute's duration) keeps them in `rest`. Indexing and iterating give Calls, so
    a table is read like the list of Calls it stands for."""

    def __init__(self) -> None:
        self.runs: list[dict[str, np.ndarray]] = []  # the calls as runs of columns (cols joins them)
        self.single: list[Call] = []  # calls appended one at a time after the last run
        self.n = 0
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
            self.rest[self.n] = rest
        self.single.append(c)
        self.n += 1

    def extend(self, **columns: np.ndarray) -> None:
        """Calls given as columns, as `cols` has them (arrays of one length, and requests_at with requests)."""
        self._close_single()
        self.runs.append(columns)
        self.n += len(columns["kind"])

    def _close_single(self) -> None:
        """The calls appended one at a time made a run."""
        if self.single:
            calls, self.single = self.single, []
            run = {name: np.array([getattr(c, name) for c in calls], _DTYPES.get(name, np.int64))
                   for name in COLUMNS if name != "requests"}
            run["requests_at"] = np.zeros(len(calls) + 1, np.int64)
            np.cumsum([len(c.requests) for c in calls], out=run["requests_at"][1:])
            run["requests"] = np.fromiter(chain.from_iterable(c.requests for c in calls), np.int64,
                                          run["requests_at"][-1])
            self.runs.append(run)

    @property
    def cols(self) -> dict[str, np.ndarray]:
        """The columns (the class doc), the runs joined into one."""
        self._close_single()
        if len(self.runs) != 1:
            runs = self.runs
            if not runs:
                runs = [{name: np.zeros(0, _DTYPES.get(name, np.int64)) for name in COLUMNS}]
                runs[0]["requests_at"] = np.zeros(1, np.int64)
            cols = {name: np.concatenate([run[name] for run in runs]) for name in runs[0] if name != "requests_at"}
            cols["requests_at"] = np.zeros(self.n + 1, np.int64)
            np.cumsum(np.concatenate([np.diff(run["requests_at"]) for run in runs]), out=cols["requests_at"][1:])
            self.runs = [cols]
        return self.runs[0]

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.calls(np.arange(len(self))[i])
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.calls(np.array([i]))[0]

    def __iter__(self):
        return iter(self.calls(np.arange(len(self))))

    def calls(self, index: np.ndarray) -> list[Call]:
        """The Calls at `index` (int array), made column by column (a float column's nan is math.nan, as in a
        Call made without it)."""
        cols = self.cols
        values = [cols[name][index].tolist() for name in COLUMNS if name != "requests"]
        values[2:4] = ([math.nan if t != t else t for t in times] for times in values[2:4])  # start_ns, end_ns
        at, requests = cols["requests_at"], cols["requests"]
        values.insert(9, [tuple(requests[x:y].tolist()) if y > x else () for x, y in
                          zip(at[index].tolist(), at[index + 1].tolist())])
        return [Call(*v, **self.rest[i]) if i in self.rest else Call(*v) for i, v in zip(index.tolist(), zip(*values))]

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
    cut_off: list[str] = field(default_factory=list)  # rank files that end without their tracer's closing footer

    def __post_init__(self) -> None:
        self.comms.setdefault(0, tuple(range(len(self.ranks))))

    @property
    def n_ranks(self) -> int:
        return len(self.ranks)

    def where(self, rank: int) -> str:
        return self.files[rank] if rank < len(self.files) else f"rank {rank}"
