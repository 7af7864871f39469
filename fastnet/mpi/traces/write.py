"""Write a `Trace` as OTF2, binary DUMPI or DUMPI ASCII, in the forms the readers here read (tests' round trips,
and users who want a generated program in trace tools).

Timestamps: a rank whose calls all have start_ns / end_ns (a trace that was read) keeps them. Otherwise (a
generated program) they are synthesized: the clock starts at 0, a `compute` of d ns moves it by d, and every other
call takes 0 ns, so the gaps a reader sees between calls are the computes (a compute after the last call leaves
no trace). Computes themselves are not written. Compute given in cycles has no time: convert it to ns first.

Names: data-moving calls are written under their canonical MPI name (send -> MPI_Send, wait -> MPI_Wait, ...);
`noop` and `unknown` calls under their `name`.

Communicators: OTF2 defines them (a COMM_GROUP group per Trace.comms entry). DUMPI only has handles, so
each rank calls MPI_Comm_split on MPI_COMM_WORLD once per communicator other than 0, after MPI_Init when the rank
starts with one (else first), at the time of that point: reading the files back gives those splits as extra
`noop` calls named MPI_Comm_split.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

from fastnet.errors import TraceError
from fastnet.mpi.calls import ANY_SOURCE, ANY_TAG, PROC_NULL, Call, Trace
from fastnet.mpi.traces.dumpi import FOOTER_MAGIC, MAGIC, MAGIC_BYTES, THREAD, WALL_TIME
from fastnet.mpi.traces.dumpi_calls import COMM_NULL, COMM_SELF, COMM_WORLD, DUMPI_ANY, DUMPI_BYTE, \
    DUMPI_DATATYPES, DUMPI_FIRST_COMM, DUMPI_FIRST_REQUEST, DUMPI_SUM, DUMPI_VERSION, MPI_UNDEFINED, \
    READS_ARGUMENTS
from fastnet.mpi.traces.dumpi_layout import ALL_FUNCTIONS, END_OF_STREAM, IDS, LAYOUTS, Field

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


# --- DUMPI (binary and ASCII) --------------------------------------------------------------------------------

Args = dict[str, object]  # a DUMPI call's arguments: ints, tuples of ints, None for statuses (not recorded)


def write_dumpi(trace: Trace, directory: str | Path, prefix: str = "trace") -> list[Path]:
    """Write `directory/PREFIX-NNNN.bin`, one per rank, and `directory/PREFIX.meta` as sst-dumpi's tracer does;
    returns the .bin paths. Records carry the thread and the wall clock (no cpu time, statuses or perf counters).
    A noop or unknown call is written under its name with zero arguments, so its name must be a function DUMPI
    records and not one whose arguments the DUMPI readers interpret (a communicator constructor, a send, ...)."""
    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for r, calls in enumerate(_dumpi_calls(trace)):
        path = out_dir / f"{prefix}-{r:04d}.bin"
        path.write_bytes(_dumpi_file(calls, trace.where(r)))
        paths.append(path)
    (out_dir / f"{prefix}.meta").write_text(
        f"hostname=fastnet\nnumprocs={trace.n_ranks}\nusername=fastnet\nstartime=0\nfileprefix={prefix}\n"
        f"version={DUMPI_VERSION[0]}\nsubversion={DUMPI_VERSION[1]}\nsubsubversion={DUMPI_VERSION[2]}\n")
    return paths


def write_dumpi_ascii(trace: Trace, directory: str | Path, prefix: str = "trace") -> list[Path]:
    """Write `directory/PREFIX-NNNN.txt`, one per rank, as `dumpi2ascii -a` prints them; returns the paths."""
    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for r, calls in enumerate(_dumpi_calls(trace)):
        lines = ["version=1.1.0", "starttime=Thu Jan  1 00:00:00 1970", "hostname=fastnet", "username=fastnet",
                 "meshdim=0", "meshsize=[]", "meshcrd=[]"]
        called: dict[str, int] = {}
        for name, start, end, args in calls:
            called[name] = called.get(name, 0) + 1
            lines.append(f"{name} entering at walltime {_walltime(start)}, cputime 0.000000000 seconds in thread 0.")
            lines += [_ascii_arg(key, value, args) for key, value in args.items()]
            lines.append(f"{name} returning at walltime {_walltime(end)}, cputime 0.000000000 seconds in thread 0.")
        lines.append("Total keyvals: 0")
        lines += [f"{name} called {n} times and ignored 0 times" for name, n in sorted(called.items())]
        lines.append(f"MPI_ALL_FUNCTIONS called {sum(called.values())} times and ignored 0 times")
        lines.append("Performance counters: 0")
        lines += [f"Datatype {i} ({name}) has size {size}" for i, (name, size) in enumerate(DUMPI_DATATYPES)]
        path = out_dir / f"{prefix}-{r:04d}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def _dumpi_calls(trace: Trace) -> list[list[tuple[str, int, int, Args]]]:
    """Per rank, the DUMPI calls to write: (name, start ns, end ns, arguments). DUMPI has only handles, so each
    rank calls MPI_Comm_split on MPI_COMM_WORLD once per communicator other than 0, after MPI_Init when the rank
    starts with one (else first), for the reader to rebuild them."""
    extra = sorted(c for c in trace.comms if c != 0)
    handle = {0: COMM_WORLD} | {c: DUMPI_FIRST_COMM + i for i, c in enumerate(extra)}
    out = []
    for r, rows in enumerate(timeline(trace)):
        w = _DumpiRank(trace, r, handle)
        at = 1 if rows and rows[0][0].kind == "noop" and rows[0][0].name in ("MPI_Init", "MPI_Init_thread") else 0
        split_t = rows[at - 1][2] if at else (rows[0][1] if rows else 0)
        calls = [(_name(call, trace, r), start, end, w.args(call)) for call, start, end in rows]
        splits = [("MPI_Comm_split", split_t, split_t, w.split(color, c)) for color, c in enumerate(extra)]
        out.append(calls[:at] + splits + calls[at:])
    return out


class _DumpiRank:
    """One rank's calls as DUMPI's arguments: handle numbers for communicators and requests."""

    def __init__(self, trace: Trace, rank: int, handle: dict[int, int]):
        self.trace = trace
        self.rank = rank
        self.handle = handle
        self.requests: dict[int, int] = {}  # Trace request id -> DUMPI handle
        self.next_handle = DUMPI_FIRST_REQUEST

    def split(self, color: int, c: int) -> Args:
        members = self.trace.comms[c]
        member = self.rank in members
        return {"oldcomm": COMM_WORLD, "color": color if member else MPI_UNDEFINED,
                "key": members.index(self.rank) if member else 0, "newcomm": self.handle[c] if member else COMM_NULL}

    def comm(self, c: int) -> int:
        if c not in self.handle:
            raise TraceError(self.trace.where(self.rank), f"communicator {c} is not in Trace.comms")
        return self.handle[c]

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

    def args(self, c: Call) -> Args:
        kind = c.kind
        if kind in ("send", "isend"):
            args: Args = {"count": c.bytes, "datatype": DUMPI_BYTE, "dest": _peer(c.peer), "tag": c.tag,
                          "comm": self.comm(c.comm)}
            if kind == "isend":
                args["request"] = self.request(c.request)
        elif kind in ("recv", "irecv"):
            args = {"count": c.bytes, "datatype": DUMPI_BYTE, "source": _peer(c.peer), "tag": _tag(c.tag),
                    "comm": self.comm(c.comm)}
            if kind == "irecv":
                args["request"] = self.request(c.request)
            else:
                args["status"] = None
        elif kind == "wait":
            if len(c.requests) != 1:
                raise TraceError(self.trace.where(self.rank), f"a wait names {len(c.requests)} requests; MPI_Wait "
                                                              "completes one (use waitall)")
            args = {"request": self.done(c.requests[0]), "status": None}
        elif kind == "waitall":
            args = {"count": len(c.requests), "requests": tuple(self.done(rid) for rid in c.requests),
                    "statuses": None}
        elif kind == "sendrecv":
            args = {"sendcount": c.bytes, "sendtype": DUMPI_BYTE, "dest": _peer(c.peer), "sendtag": c.tag,
                    "recvcount": c.recv_bytes, "recvtype": DUMPI_BYTE, "source": _peer(c.recv_peer),
                    "recvtag": _tag(c.recv_tag), "comm": self.comm(c.comm), "status": None}
        elif kind == "barrier":
            args = {"comm": self.comm(c.comm)}
        elif kind in ("bcast", "reduce", "allreduce"):
            args = {"count": c.bytes, "datatype": DUMPI_BYTE}
            if kind != "bcast":
                args["op"] = DUMPI_SUM
            if kind != "allreduce":
                args["root"] = c.root
            args["comm"] = self.comm(c.comm)
        elif kind in ("gather", "scatter", "allgather", "alltoall"):
            args = {"commrank": self.trace.comms[c.comm].index(self.rank)} if kind in ROOTED else {}
            args |= {"sendcount": c.bytes, "sendtype": DUMPI_BYTE, "recvcount": c.bytes, "recvtype": DUMPI_BYTE}
            if kind in ROOTED:
                args["root"] = c.root
            args["comm"] = self.comm(c.comm)
        elif kind == "alltoallv":
            n = len(self.trace.comms[c.comm])
            send, recv = list(c.send_counts) or [0] * n, list(c.recv_counts) or [0] * n
            args = {"commsize": n, "sendcounts": tuple(send), "senddispls": _displs(send), "sendtype": DUMPI_BYTE,
                    "recvcounts": tuple(recv), "recvdispls": _displs(recv), "recvtype": DUMPI_BYTE,
                    "comm": self.comm(c.comm)}
        else:  # noop, unknown: the name is all a reader needs
            args = {}
        return args


def _peer(peer: int) -> int:
    # DUMPI records ranks raw: MPI_PROC_NULL as Open MPI's -2, MPI_ANY_SOURCE as -1.
    return -2 if peer == PROC_NULL else DUMPI_ANY if peer == ANY_SOURCE else peer


def _tag(tag: int) -> int:
    return DUMPI_ANY if tag == ANY_TAG else tag


def _displs(counts: list[int]) -> tuple[int, ...]:
    out, at = [], 0
    for c in counts:
        out.append(at)
        at += c
    return tuple(out)


def _walltime(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


_ASCII_TYPES = {"datatype": "MPI_Datatype", "sendtype": "MPI_Datatype", "recvtype": "MPI_Datatype",
                "comm": "MPI_Comm", "oldcomm": "MPI_Comm", "newcomm": "MPI_Comm", "op": "MPI_Op",
                "request": "MPI_Request", "requests": "MPI_Request", "status": "MPI_Status", "statuses": "MPI_Status"}
_COMM_NAMES = {COMM_NULL: "MPI_COMM_NULL", COMM_WORLD: "MPI_COMM_WORLD", COMM_SELF: "MPI_COMM_SELF"}


def _ascii_arg(key: str, value: object, args: Args) -> str:
    """One argument line as dumpi2ascii prints it: `int count=8`, `MPI_Comm comm=2 (MPI_COMM_WORLD)`, ..."""
    ctype = _ASCII_TYPES.get(key, "int")
    if value is None:  # a status DUMPI did not record
        return f"{ctype} {key}=<IGNORED>" if key == "status" else f"{ctype} {key}[{args['count']}]=<IGNORED>"
    if key == "request":
        return f"{ctype} {key}=[{value}]"
    if isinstance(value, tuple):
        return f"{ctype} {key}[{len(value)}]=[{', '.join(str(v) for v in value)}]"
    label = ""
    if ctype == "MPI_Datatype":
        label = DUMPI_DATATYPES[value][0]
    elif ctype == "MPI_Comm":
        label = _COMM_NAMES.get(value, "user-defined-comm")
    elif key == "op":
        label = "MPI_SUM"
    elif key in ("dest", "source") and value == -2:
        label = "MPI_ROOT"
    elif key == "source" and value == DUMPI_ANY:
        label = "MPI_ANY_SOURCE"
    elif key in ("tag", "recvtag") and value == DUMPI_ANY:
        label = "MPI_ANY_TAG"
    return f"{ctype} {key}={value}" + (f" ({label})" if label else "")


def _dumpi_file(calls: list[tuple[str, int, int, Args]], where: str) -> bytes:
    """One rank's .bin (dumpi.py's docstring has the layout)."""
    seconds = [t // 1_000_000_000 for _, start, end, _ in calls for t in (start, end)]
    bias = min(seconds, default=0)  # the records keep 16-bit seconds past this
    if seconds and max(seconds) - bias > 0xFFFF:
        raise TraceError(where, f"spans {max(seconds) - bias} s; a binary DUMPI trace holds at most 65535 s")
    out = bytearray(MAGIC_BYTES)
    body = len(out)
    out += struct.pack(">ii", 0, bias)
    called = [0] * (ALL_FUNCTIONS + 1)
    for name, start, end, args in calls:
        if IDS.get(name) not in LAYOUTS:
            raise TraceError(where, f"{name} is not a call binary DUMPI records")
        if not args and name in READS_ARGUMENTS:
            raise TraceError(where, f"{name} is a noop here, but the DUMPI readers read its arguments, which the "
                                    "Trace does not have: binary DUMPI cannot carry it")
        called[IDS[name]] += 1
        out += struct.pack(">HBH", IDS[name], WALL_TIME | THREAD, 0)
        out += struct.pack(">HIHI", start // 1_000_000_000 - bias, start % 1_000_000_000,
                           end // 1_000_000_000 - bias, end % 1_000_000_000)
        out += _dumpi_arguments(LAYOUTS[IDS[name]], args)
    out += struct.pack(">H", END_OF_STREAM)
    header = len(out)
    out += struct.pack(">BBBQ", *DUMPI_VERSION, 0) + _string("fastnet") + _string("fastnet")
    out += struct.pack(">ii", 0, 0)  # mesh coordinates, mesh size: none
    footer = len(out)
    called[ALL_FUNCTIONS] = sum(called)
    out += struct.pack(f">Q{2 * len(called)}I", FOOTER_MAGIC, *called, *[0] * len(called))
    perf_labels = len(out)
    out += struct.pack(">i", 0)
    sizes = len(out)
    out += struct.pack(f">i{len(DUMPI_DATATYPES)}i", len(DUMPI_DATATYPES), *(s for _, s in DUMPI_DATATYPES))
    addresses = len(out)
    out += struct.pack(">i", 0)
    out += struct.pack(">8Q", MAGIC, sizes, addresses, perf_labels, header, body, footer, 0)
    return bytes(out)


def _dumpi_arguments(layout: tuple[Field, ...], args: Args) -> bytes:
    """A record's arguments in its layout's order; those the call does not give are zero (empty arrays)."""
    full = {f.name: args.get(f.name, 0 if f.code in "iqhb" else ()) for f in layout if f.present(DUMPI_VERSION)}
    at_root = full.get("commrank", full.get("oldcommrank")) == full.get("root")
    out = bytearray()
    for f in layout:
        if not f.present(DUMPI_VERSION) or (f.at_root and not at_root) or f.code in "sV":
            continue  # statuses are not recorded (the mask says so); argv: argc is 0
        value = full[f.name]
        if f.code in "iqhb":
            out += struct.pack(">" + {"i": "i", "q": "q", "h": "H", "b": "B"}[f.code], value)
        elif f.code in "IHB" or not value:  # arrays; strings and nested arrays only empty
            element = {"I": "i", "H": "H", "B": "B"}.get(f.code, "i")
            out += struct.pack(f">i{len(value)}{element}", len(value), *value)
        else:
            raise ValueError(f"{f.name}: the DUMPI writer writes no {f.code!r} values")
    return bytes(out)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


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
