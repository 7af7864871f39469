"""Write a `Trace` as OTF2 or as DUMPI ASCII, in the forms the readers here read (tests' round trips, and users
who want a generated program in trace tools).

Timestamps: a rank whose calls all have start_ns / end_ns (a trace that was read) keeps them. Otherwise (a
generated program) they are synthesized: the clock starts at 0, a `compute` of d ns moves it by d, and every other
call takes 0 ns, so the gaps a reader sees between calls are the computes (a compute after the last call leaves
no trace). Computes themselves are not written. Compute given in cycles has no time: convert it to ns first.

Names: data-moving calls are written under their canonical MPI name (send -> MPI_Send, wait -> MPI_Wait, ...);
`noop` and `unknown` calls under their `name`.

Communicators: OTF2 defines them (a COMM_GROUP group per Trace.comms entry). DUMPI ASCII only has handles, so
each rank calls MPI_Comm_split on MPI_COMM_WORLD once per communicator other than 0, after MPI_Init when the rank
starts with one (else first), at the time of that point: reading the files back gives those splits as extra
`noop` calls named MPI_Comm_split.
"""

from __future__ import annotations

import math
from pathlib import Path

from fastnet.mpi.calls import ANY_SOURCE, ANY_TAG, PROC_NULL, Call, Trace
from fastnet.mpi.traces import TraceError
from fastnet.mpi.traces.dumpi_calls import DUMPI_DATATYPES, MPI_UNDEFINED

CANONICAL = {"send": "MPI_Send", "recv": "MPI_Recv", "isend": "MPI_Isend", "irecv": "MPI_Irecv", "wait": "MPI_Wait",
             "waitall": "MPI_Waitall", "sendrecv": "MPI_Sendrecv", "barrier": "MPI_Barrier", "bcast": "MPI_Bcast",
             "reduce": "MPI_Reduce", "allreduce": "MPI_Allreduce", "gather": "MPI_Gather",
             "allgather": "MPI_Allgather", "scatter": "MPI_Scatter", "alltoall": "MPI_Alltoall",
             "alltoallv": "MPI_Alltoallv"}
ROOTED = ("bcast", "reduce", "gather", "scatter")
UINT32_UNDEFINED = 0xFFFFFFFF  # OTF2's undefined rank / tag: carries ANY_SOURCE / ANY_TAG


def timeline(trace: Trace) -> list[list[tuple[Call, int, int]]]:
    """Per rank, the calls to write (computes dropped) with their start and end in integer ns."""
    out = []
    for r, calls in enumerate(trace.ranks):
        shown = [c for c in calls if c.kind != "compute"]
        rows: list[tuple[Call, int, int]] = []
        if shown and all(math.isfinite(c.start_ns) and math.isfinite(c.end_ns) for c in shown):
            for c in shown:
                start = round(c.start_ns)
                rows.append((c, start, max(start, round(c.end_ns))))
        else:
            t = 0.0
            for c in calls:
                if c.kind == "compute":
                    if c.duration_cycles >= 0:
                        raise TraceError(trace.where(r), "a compute is given in cycles, which have no time in a "
                                                         "trace file: give duration_ns instead")
                    t += c.duration_ns
                else:
                    rows.append((c, round(t), round(t)))
        for c, start, _ in rows:
            if start < 0:
                raise TraceError(trace.where(r), f"{_name(c, trace, r)} starts at {start} ns; trace times are >= 0")
            _name(c, trace, r)  # checks noop / unknown have a name
        out.append(rows)
    return out


def _name(call: Call, trace: Trace, rank: int) -> str:
    if call.kind in CANONICAL:
        return CANONICAL[call.kind]
    if not call.name:
        raise TraceError(trace.where(rank), f"a {call.kind} call has no name to write")
    return call.name


# --- DUMPI ASCII ---------------------------------------------------------------------------------------------

DUMPI_BYTE = 5  # MPI_BYTE in DUMPI's numbering: every count is written in bytes
DUMPI_COMM_NULL, DUMPI_COMM_WORLD, DUMPI_COMM_SELF, DUMPI_FIRST_COMM = 1, 2, 3, 4
DUMPI_FIRST_REQUEST = 2


def write_dumpi_ascii(trace: Trace, directory: str | Path, prefix: str = "trace") -> list[Path]:
    """Write `directory/PREFIX-NNNN.txt`, one per rank, as `dumpi2ascii -a` prints them; returns the paths."""
    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    extra = sorted(c for c in trace.comms if c != 0)
    handle = {0: DUMPI_COMM_WORLD} | {c: DUMPI_FIRST_COMM + i for i, c in enumerate(extra)}
    paths = []
    for r, rows in enumerate(timeline(trace)):
        w = _DumpiRank(trace, r, handle)
        lines = ["version=1.1.0", "starttime=Thu Jan  1 00:00:00 1970", "hostname=fastnet", "username=fastnet",
                 "meshdim=0", "meshsize=[]", "meshcrd=[]"]
        # Every rank splits MPI_COMM_WORLD once per communicator, so that the reader can rebuild them.
        at = 1 if rows and rows[0][0].kind == "noop" and rows[0][0].name in ("MPI_Init", "MPI_Init_thread") else 0
        split_t = rows[at - 1][2] if at else (rows[0][1] if rows else 0)
        for i, (call, start, end) in enumerate(rows):
            if i == at:
                lines += w.splits(extra, split_t)
            lines += w.call(call, start, end)
        if len(rows) == at:
            lines += w.splits(extra, split_t)
        lines.append("Total keyvals: 0")
        lines += [f"{name} called {n} times and ignored 0 times" for name, n in sorted(w.called.items())]
        lines.append(f"MPI_ALL_FUNCTIONS called {sum(w.called.values())} times and ignored 0 times")
        lines.append("Performance counters: 0")
        lines += [f"Datatype {i} ({name}) has size {size}" for i, (name, size) in enumerate(DUMPI_DATATYPES)]
        path = out_dir / f"{prefix}-{r:04d}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def _walltime(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


class _DumpiRank:
    def __init__(self, trace: Trace, rank: int, handle: dict[int, int]):
        self.trace = trace
        self.rank = rank
        self.handle = handle
        self.requests: dict[int, int] = {}  # Trace request id -> DUMPI handle
        self.next_handle = DUMPI_FIRST_REQUEST
        self.called: dict[str, int] = {}

    def block(self, name: str, start: int, end: int, args: list[str]) -> list[str]:
        self.called[name] = self.called.get(name, 0) + 1
        return ([f"{name} entering at walltime {_walltime(start)}, cputime 0.000000000 seconds in thread 0."] + args
                + [f"{name} returning at walltime {_walltime(end)}, cputime 0.000000000 seconds in thread 0."])

    def splits(self, extra: list[int], t: int) -> list[str]:
        lines = []
        for color, c in enumerate(extra):
            members = self.trace.comms[c]
            member = self.rank in members
            lines += self.block("MPI_Comm_split", t, t, [
                f"MPI_Comm oldcomm={DUMPI_COMM_WORLD} (MPI_COMM_WORLD)",
                f"int color={color if member else MPI_UNDEFINED}",
                f"int key={members.index(self.rank) if member else 0}",
                f"MPI_Comm newcomm={self.handle[c]} (user-defined-comm)" if member
                else f"MPI_Comm newcomm={DUMPI_COMM_NULL} (MPI_COMM_NULL)"])
        return lines

    def comm(self, c: int, name: str = "comm") -> str:
        if c not in self.handle:
            raise TraceError(self.trace.where(self.rank), f"communicator {c} is not in Trace.comms")
        h = self.handle[c]
        return f"MPI_Comm {name}={h} ({'MPI_COMM_WORLD' if h == DUMPI_COMM_WORLD else 'user-defined-comm'})"

    def request(self, rid: int) -> int:
        h = self.next_handle
        self.next_handle += 1
        self.requests[rid] = h
        return h

    def done(self, rid: int) -> int:
        if rid not in self.requests:
            raise TraceError(self.trace.where(self.rank), f"a wait names request {rid}, which no isend / irecv "
                                                          "before it started")
        return self.requests.pop(rid)

    def call(self, c: Call, start: int, end: int) -> list[str]:
        kind = c.kind
        name = _name(c, self.trace, self.rank)
        byte = f"({DUMPI_DATATYPES[DUMPI_BYTE][0]})"
        dtype = f"MPI_Datatype datatype={DUMPI_BYTE} {byte}"
        if kind in ("send", "isend"):
            args = [f"int count={c.bytes}", dtype, _dest("dest", c.peer), f"int tag={c.tag}", self.comm(c.comm)]
            if kind == "isend":
                args.append(f"MPI_Request request=[{self.request(c.request)}]")
        elif kind in ("recv", "irecv"):
            args = [f"int count={c.bytes}", dtype, _source("source", c.peer), _tag("tag", c.tag), self.comm(c.comm)]
            args.append(f"MPI_Request request=[{self.request(c.request)}]" if kind == "irecv"
                        else "MPI_Status status=<IGNORED>")
        elif kind == "wait":
            if len(c.requests) != 1:
                raise TraceError(self.trace.where(self.rank), f"a wait names {len(c.requests)} requests; MPI_Wait "
                                                              "completes one (use waitall)")
            args = [f"MPI_Request request=[{self.done(c.requests[0])}]", "MPI_Status status=<IGNORED>"]
        elif kind == "waitall":
            handles = ", ".join(str(self.done(rid)) for rid in c.requests)
            n = len(c.requests)
            args = [f"int count={n}", f"MPI_Request requests[{n}]=[{handles}]", f"MPI_Status statuses[{n}]=<IGNORED>"]
        elif kind == "sendrecv":
            args = [f"int sendcount={c.bytes}", f"MPI_Datatype sendtype={DUMPI_BYTE} {byte}", _dest("dest", c.peer),
                    f"int sendtag={c.tag}", f"int recvcount={c.recv_bytes}",
                    f"MPI_Datatype recvtype={DUMPI_BYTE} {byte}", _source("source", c.recv_peer),
                    _tag("recvtag", c.recv_tag), self.comm(c.comm), "MPI_Status status=<IGNORED>"]
        elif kind == "barrier":
            args = [self.comm(c.comm)]
        elif kind in ("bcast", "reduce", "allreduce"):
            args = [f"int count={c.bytes}", dtype]
            if kind != "bcast":
                args.append("MPI_Op op=3 (MPI_SUM)")
            if kind != "allreduce":
                args.append(f"int root={c.root}")
            args.append(self.comm(c.comm))
        elif kind in ("gather", "scatter", "allgather", "alltoall"):
            args = [f"int commrank={self.trace.comms[c.comm].index(self.rank)}"] if kind in ROOTED else []
            args += [f"int sendcount={c.bytes}", f"MPI_Datatype sendtype={DUMPI_BYTE} {byte}",
                     f"int recvcount={c.bytes}", f"MPI_Datatype recvtype={DUMPI_BYTE} {byte}"]
            if kind in ROOTED:
                args.append(f"int root={c.root}")
            args.append(self.comm(c.comm))
        elif kind == "alltoallv":
            n = len(self.trace.comms[c.comm])
            send, recv = list(c.send_counts) or [0] * n, list(c.recv_counts) or [0] * n
            args = [f"int commsize={n}", _array("sendcounts", send), _array("senddispls", _displs(send)),
                    f"MPI_Datatype sendtype={DUMPI_BYTE} {byte}", _array("recvcounts", recv),
                    _array("recvdispls", _displs(recv)), f"MPI_Datatype recvtype={DUMPI_BYTE} {byte}",
                    self.comm(c.comm)]
        else:  # noop, unknown: the name is all a reader needs
            args = []
        return self.block(name, start, end, args)


def _dest(field: str, peer: int) -> str:
    # dumpi2ascii prints a negative destination as MPI_ROOT: Open MPI's MPI_PROC_NULL is -2.
    return f"int {field}=-2 (MPI_ROOT)" if peer == PROC_NULL else f"int {field}={peer}"


def _source(field: str, peer: int) -> str:
    if peer == ANY_SOURCE:
        return f"int {field}=-1 (MPI_ANY_SOURCE)"
    return _dest(field, peer)


def _tag(field: str, tag: int) -> str:
    return f"int {field}=-1 (MPI_ANY_TAG)" if tag == ANY_TAG else f"int {field}={tag}"


def _array(field: str, values: list[int]) -> str:
    return f"int {field}[{len(values)}]=[{', '.join(str(v) for v in values)}]"


def _displs(counts: list[int]) -> list[int]:
    out, at = [], 0
    for c in counts:
        out.append(at)
        at += c
    return out


# --- OTF2 ----------------------------------------------------------------------------------------------------

def write_otf2(trace: Trace, path: str | Path) -> Path:
    """Write an OTF2 archive as Score-P would record the trace's calls; `path` is the anchor file to create
    (`DIR/NAME.otf2`, next to `DIR/NAME/` and `DIR/NAME.def`) or a directory (then NAME is "traces").
    Returns the anchor file's path. Timer resolution is 1 ns."""
    import otf2  # lazy: importing fastnet must not load the OTF2 library
    from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole

    p = Path(path)
    directory, name = (p.parent, p.stem) if p.suffix == ".otf2" else (p, "traces")
    anchor = directory / f"{name}.otf2"
    for existing in (anchor, directory / name, directory / f"{name}.def"):
        if existing.exists():
            raise TraceError(existing, "already exists; OTF2 writes a new archive: remove it or pick another path")
    rows_per_rank = timeline(trace)
    ops = {"barrier": CollectiveOp.BARRIER, "bcast": CollectiveOp.BCAST, "reduce": CollectiveOp.REDUCE,
           "allreduce": CollectiveOp.ALLREDUCE, "gather": CollectiveOp.GATHER, "allgather": CollectiveOp.ALLGATHER,
           "scatter": CollectiveOp.SCATTER, "alltoall": CollectiveOp.ALLTOALL, "alltoallv": CollectiveOp.ALLTOALLV}
    roles = {"barrier": RegionRole.BARRIER, "bcast": RegionRole.COLL_ONE2ALL, "scatter": RegionRole.COLL_ONE2ALL,
             "reduce": RegionRole.COLL_ALL2ONE, "gather": RegionRole.COLL_ALL2ONE}
    directory.mkdir(parents=True, exist_ok=True)
    with otf2.writer.open(str(directory), archive_name=name, timer_resolution=1_000_000_000) as w:
        defs = w.definitions
        node = defs.system_tree_node("fastnet", class_name="machine")
        locations = [defs.location("Master thread", group=defs.location_group(f"MPI Rank {r}", system_tree_parent=node))
                     for r in range(trace.n_ranks)]
        defs.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locations)
        comms = {}
        for cid, members in sorted(trace.comms.items()):
            group = defs.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                               members=[locations[m] for m in members])
            comms[cid] = defs.comm("MPI_COMM_WORLD" if cid == 0 else f"comm {cid}", group=group)
        regions: dict[str, object] = {}

        def region(call: Call, r: int):
            rname = _name(call, trace, r)
            if rname not in regions:
                role = roles.get(call.kind, RegionRole.COLL_ALL2ALL if call.kind in ops else
                                 RegionRole.POINT2POINT if call.kind in CANONICAL else RegionRole.FUNCTION)
                regions[rname] = defs.region(rname, paradigm=Paradigm.MPI, region_role=role)
            return regions[rname]

        for r, rows in enumerate(rows_per_rank):
            ew = w.event_writer_from_location(locations[r])
            ew.program_begin(0, "fastnet", [])  # at 0 on every rank: the archive's clock offset is 0
            rank = _Otf2Rank(ew, trace, r, comms, ops)
            for call, start, end in rows:
                reg = region(call, r)
                ew.enter(start, reg)
                rank.records(call, start, end)
                ew.leave(end, reg)
            ew.program_end(max([0] + [end for _, _, end in rows]), 0)
    return anchor


class _Otf2Rank:
    """Writes the MPI records inside one rank's call regions, where Score-P puts them."""

    def __init__(self, ew, trace: Trace, rank: int, comms: dict, ops: dict):
        self.ew = ew
        self.trace = trace
        self.rank = rank
        self.comms = comms
        self.ops = ops
        self.requests: dict[int, tuple[int, Call]] = {}  # Trace request id -> (OTF2 request id, isend / irecv)
        self.next_id = 1

    def comm(self, c: int):
        if c not in self.comms:
            raise TraceError(self.trace.where(self.rank), f"communicator {c} is not in Trace.comms")
        return self.comms[c]

    def records(self, c: Call, start: int, end: int) -> None:
        ew, kind = self.ew, c.kind
        if kind == "send" and c.peer != PROC_NULL:
            ew.mpi_send(start, c.peer, self.comm(c.comm), c.tag, c.bytes)
        elif kind == "recv" and c.peer != PROC_NULL:
            ew.mpi_recv(end, _u32(c.peer), self.comm(c.comm), _u32(c.tag), c.bytes)
        elif kind == "sendrecv":
            if c.peer != PROC_NULL:
                ew.mpi_send(start, c.peer, self.comm(c.comm), c.tag, c.bytes)
            if c.recv_peer != PROC_NULL:
                ew.mpi_recv(end, _u32(c.recv_peer), self.comm(c.comm), _u32(c.recv_tag), c.recv_bytes)
        elif kind in ("isend", "irecv") and c.peer != PROC_NULL:
            # Score-P records nothing for MPI_PROC_NULL requests; their waits then complete nothing for them.
            oid = self.next_id
            self.next_id += 1
            self.requests[c.request] = (oid, c)
            if kind == "isend":
                ew.mpi_isend(start, c.peer, self.comm(c.comm), c.tag, c.bytes, oid)
            else:
                ew.mpi_irecv_request(start, oid)
        elif kind in ("wait", "waitall"):
            for rid in c.requests:
                if rid not in self.requests:
                    continue  # an MPI_PROC_NULL request, or one never issued
                oid, issued = self.requests.pop(rid)
                if issued.kind == "isend":
                    ew.mpi_isend_complete(end, oid)
                else:
                    ew.mpi_irecv(end, _u32(issued.peer), self.comm(issued.comm), _u32(issued.tag), issued.bytes, oid)
        elif kind in self.ops:
            comm = self.comm(c.comm)
            members = self.trace.comms[c.comm]
            at_root = self.rank in members and members.index(self.rank) == c.root
            sent, received = _score_p_sizes(c, len(members), at_root)
            ew.mpi_collective_begin(start)
            ew.mpi_collective_end(end, self.ops[kind], comm, c.root if kind in ROOTED else UINT32_UNDEFINED, sent,
                                  received)


def _u32(value: int) -> int:
    """OTF2 ranks and tags are unsigned: ANY_SOURCE / ANY_TAG become OTF2's undefined value."""
    return UINT32_UNDEFINED if value < 0 else value


def _score_p_sizes(c: Call, n: int, at_root: bool) -> tuple[int, int]:
    """(sizeSent, sizeReceived) of one rank as Score-P records them (no MPI_IN_PLACE); read_otf2 inverts it."""
    b = c.bytes
    if c.kind == "barrier":
        return 0, 0
    if c.kind in ("bcast", "scatter"):
        return (n * b, b) if at_root else (0, b)
    if c.kind in ("reduce", "gather"):
        return (b, n * b) if at_root else (b, 0)
    if c.kind == "alltoallv":
        return sum(c.send_counts), sum(c.recv_counts)
    return n * b, n * b
