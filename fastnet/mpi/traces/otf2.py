"""Read an OTF2 archive (as Score-P writes it) into a `Trace`, through the `otf2` package.

Each rank is the location listed at its rank in the MPI paradigm's COMM_LOCATIONS group. An MPI region
(Enter .. Leave of a region whose paradigm is MPI, or named MPI_*) becomes the rank's calls, timed by that Enter
and Leave; the MPI records inside it say what the call did:

- MpiSend / MpiRecv: send / recv (both in an MPI_Sendrecv region: sendrecv);
- MpiIsend: isend; MpiIrecvRequest: irecv, whose source, tag, size and communicator are only known from the
  MpiIrecv record of its completion (inside the wait), so they are filled in then;
- MpiIsendComplete / MpiIrecv: the requests a wait (MPI_Wait, MPI_Waitany, a successful MPI_Test) or waitall
  (the others) completes; requests are renumbered 0, 1, 2, ... per rank;
- MpiCollectiveEnd: the collective, with `bytes` recovered from Score-P's totals (see `_collective_bytes`).

An MPI region with no such record is a send / recv to MPI_PROC_NULL for MPI_Send / MPI_Recv (Score-P records
nothing for those), a `noop` if its name moves no data (names.py), holds only communicator bookkeeping, or is
another point-to-point call (MPI_PROC_NULL requests, null requests, a test that found nothing), and `unknown`
otherwise. Regions of other paradigms are user code: the time they take is part of the gaps between calls. Only
the location MPI names per rank is read (other threads' records are ignored). Times are ns since the archive's
global offset.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from fastnet.errors import TraceError
from fastnet.mpi.calls import ANY_SOURCE, ANY_TAG, PROC_NULL, Call, Trace
from fastnet.mpi.traces.names import is_noop

UNDEFINED = 0xFFFFFFFF  # OTF2_UNDEFINED_UINT32: no root; as a source or tag, ANY_SOURCE / ANY_TAG
COLLECTIVE_KINDS = {"BARRIER": "barrier", "BCAST": "bcast", "REDUCE": "reduce", "ALLREDUCE": "allreduce",
                    "GATHER": "gather", "ALLGATHER": "allgather", "SCATTER": "scatter", "ALLTOALL": "alltoall",
                    "ALLTOALLV": "alltoallv",
                    # replayed as one of the above with the same bytes (docs/mpi.md "Coverage"): v-variants with
                    # their mean block, reduce_scatter as MPICH's pairwise exchange, scans as an allreduce
                    "GATHERV": "gather", "SCATTERV": "scatter", "ALLGATHERV": "allgather", "ALLTOALLW": "alltoallv",
                    "REDUCE_SCATTER": "alltoall", "REDUCE_SCATTER_BLOCK": "alltoall", "SCAN": "allreduce",
                    "EXSCAN": "allreduce"}
# Communicator and window bookkeeping Score-P records as collectives: no payload.
HANDLE_OPS = {"CREATE_HANDLE", "DESTROY_HANDLE", "ALLOCATE", "DEALLOCATE", "CREATE_HANDLE_AND_ALLOCATE",
              "DESTROY_HANDLE_AND_DEALLOCATE"}
# Point-to-point regions that may legitimately hold no record (MPI_PROC_NULL peer, null requests, a failed test).
# Score-P 2.x writes non-blocking collectives as regions alone, with no communicator and no sizes: such a region
# is a noop (its time stays in the trace as computation), counted in Trace.not_recorded
NB_COLLECTIVES = frozenset(f"MPI_I{c}" for c in (
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block", "scan", "exscan"))
QUIET_P2P = ("MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend",
             "MPI_Recv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Wait", "MPI_Waitall",
             "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Start",
             "MPI_Startall")
BLOCKING = {"MPI_Send": "send", "MPI_Bsend": "send", "MPI_Ssend": "send", "MPI_Rsend": "send", "MPI_Recv": "recv"}
SINGLE_WAITS = ("MPI_Wait", "MPI_Waitany", "MPI_Test", "MPI_Testany")


def read_otf2(path: str | Path) -> Trace:
    """Read the OTF2 archive whose anchor file is `path` (or the one anchor file in directory `path`)."""
    anchor = _anchor(Path(path))
    with _library_stderr() as said:
        return _read(anchor, said)


@contextlib.contextmanager
def _library_stderr() -> Iterator[Callable[[], str]]:
    """The OTF2 library prints each error to the C stderr, a dozen lines for one missing file, before the Python
    error: capture file descriptor 2 while reading, pass it on if the read succeeds, and let a failed read name
    the first thing the library said (`said()`), which is the file, in its one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        failed = False

        def said() -> str:
            caught.seek(0)
            lines = caught.read().decode(errors="replace").splitlines()
            return next((line.split("error: ", 1)[-1] for line in lines if "error: " in line), "")

        try:
            yield said
        except BaseException:
            failed = True
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if not failed:  # warnings of a read that worked: as the library printed them
                caught.seek(0)
                sys.stderr.write(caught.read().decode(errors="replace"))


def _read(anchor: Path, said: Callable[[], str]) -> Trace:
    # lazy: importing fastnet must not load the OTF2 library; LibraryError: its own errors, raised through the package
    import otf2
    from _otf2.ErrorCodes import Error as LibraryError

    try:
        opened = otf2.reader.open(str(anchor))
    except Exception as e:  # the otf2 package raises its own error types from C
        first = said()
        raise TraceError(anchor, f"cannot be opened as an OTF2 archive: {e}" + (f" ({first})" if first else "")) \
            from None
    try:
        with opened as archive:
            defs = archive.definitions
            rank_of = _ranks(defs, anchor)
            n = len(rank_of)
            clock = defs.clock_properties
            comms = _CommMap(defs, rank_of, anchor)
            ranks = [_Rank(r, f"{anchor}#rank {r}", comms) for r in range(n)]
            resolution, offset = clock.timer_resolution, clock.global_offset
            for location, event in archive.events:
                r = rank_of.get(location)
                if r is None:
                    continue  # a thread other than the one MPI names: not part of the MPI program
                t = event.time - offset
                ns = float(t) if resolution == 1_000_000_000 else t * 1e9 / resolution
                ranks[r].event(event, ns)
    except (LibraryError, otf2.error.Error) as e:  # a definition or event file missing, cut short or damaged
        raise _damaged(anchor, said() or str(e)) from None
    except TraceError as e:  # the records read wrong because the library skipped a file it could not open
        first = said()
        if not first:
            raise
        raise TraceError(anchor, f"cannot be read: {first} (a file of the archive is missing or damaged; what was "
                         f"read says: {e})") from None
    if first := said():  # the library may print an error for a damaged file and read on without its records
        raise _damaged(anchor, first)
    for rk in ranks:  # a file cut short that the library read to its end (its bytes past the cut are not defined)
        if rk.open is not None:
            raise _damaged(anchor, f"rank {rk.rank}'s records end inside {rk.open.name}")
    return Trace(ranks=[rk.calls for rk in ranks], comms=comms.table, files=[rk.where for rk in ranks],
                 source="otf2", not_recorded=dict(sum((rk.unrecorded for rk in ranks), Counter())))


def _damaged(anchor: Path, what: str) -> TraceError:
    return TraceError(anchor, f"cannot be read: {what} (a file of the archive, {anchor.stem}/*.def or *.evt, is "
                      "missing or damaged)")


def _anchor(p: Path) -> Path:
    if not p.exists():
        raise TraceError(p, "no such file or directory")
    if p.is_dir():
        anchors = sorted(p.glob("*.otf2"))
        if len(anchors) != 1:
            raise TraceError(p, f"holds {len(anchors)} OTF2 anchor files (*.otf2); name the one to read")
        return anchors[0]
    return p


def _ranks(defs, anchor: Path) -> dict:
    """Location definition -> MPI rank."""
    import otf2

    for group in defs.groups:
        if group.group_type == otf2.GroupType.COMM_LOCATIONS and group.paradigm == otf2.Paradigm.MPI:
            return {loc: r for r, loc in enumerate(group.members)}
    raise TraceError(anchor, "has no MPI locations (no COMM_LOCATIONS group of paradigm MPI): not an MPI trace")


class _CommMap:
    """OTF2 communicator definitions -> Trace.comms ids: MPI_COMM_WORLD is 0, the other MPI communicators follow
    in definition order, and a COMM_SELF communicator gets one id per rank that uses it."""

    def __init__(self, defs, rank_of: dict, anchor: Path):
        import otf2

        self.anchor = anchor
        n = len(rank_of)
        self.table: dict[int, tuple[int, ...]] = {0: tuple(range(n))}
        self.ids: dict = {}
        self.selfs: set = set()
        self.self_ids: dict[int, int] = {}
        candidates = []
        for comm in defs.comms:
            group = getattr(comm, "group", None)  # inter-communicators have groupA / groupB
            if isinstance(comm, otf2.definitions.InterComm) or group is None or group.paradigm != otf2.Paradigm.MPI:
                continue
            if group.group_type == otf2.GroupType.COMM_SELF:
                self.selfs.add(comm)
            elif group.group_type == otf2.GroupType.COMM_GROUP:
                if any(loc not in rank_of for loc in group.members):
                    raise TraceError(anchor, f"communicator {comm.name!r} has a member that is no MPI location")
                candidates.append((comm, tuple(rank_of[loc] for loc in group.members)))
        world = next((c for c, m in candidates if c.name == "MPI_COMM_WORLD"), None)
        if world is None:
            world = next((c for c, m in candidates if m == tuple(range(n))), None)
        for comm, members in candidates:
            if comm is world:
                self.ids[comm] = 0
            else:
                self.ids[comm] = len(self.table)
                self.table[self.ids[comm]] = members

    def id(self, comm, rank: int, where: str) -> int:
        if comm in self.selfs:
            if rank not in self.self_ids:
                self.self_ids[rank] = len(self.table)
                self.table[self.self_ids[rank]] = (rank,)
            return self.self_ids[rank]
        if comm not in self.ids:
            raise TraceError(where, f"communicator {getattr(comm, 'name', comm)!r} is not an MPI intra-communicator")
        return self.ids[comm]


class _Open:
    """An MPI region entered and not yet left, and the MPI records inside it."""

    def __init__(self, name: str, start_ns: float, depth: int):
        self.name = name
        self.start_ns = start_ns
        self.depth = depth
        self.events: list = []


class _Rank:
    def __init__(self, rank: int, where: str, comms: _CommMap):
        self.rank = rank
        self.where = where
        self.comms = comms
        self.calls: list[Call] = []
        self.stack: list = []  # regions entered, MPI or not
        self.open: _Open | None = None  # the outermost MPI region on the stack
        self.active: dict[int, int] = {}  # OTF2 request id -> our request id
        self.pending: dict[int, Call] = {}  # irecvs whose MpiIrecv has not been seen yet
        self.next_request = 0
        self.unrecorded: Counter[str] = Counter()  # non-blocking collectives with no record (Score-P 2.x)

    def event(self, ev, ns: float) -> None:
        import otf2

        kind = type(ev).__name__
        if kind == "Enter":
            if self.open is None and _is_mpi(ev.region, otf2):
                self.open = _Open(ev.region.name, ns, len(self.stack))
            self.stack.append(ev.region)
        elif kind == "Leave":
            if self.stack:
                self.stack.pop()
            if self.open is not None and len(self.stack) == self.open.depth:
                self.close(self.open, ns)
                self.open = None
        elif kind.startswith(("Mpi", "NonBlockingCollective")):
            if self.open is not None:
                self.open.events.append(ev)
            elif kind == "MpiIrecv":
                self.fill_irecv(ev)  # completed outside any MPI region: keep the irecv's details

    def comm(self, ev) -> int:
        return self.comms.id(ev.communicator, self.rank, self.where)

    def new_request(self, otf2_id: int) -> int:
        rid = self.next_request
        self.next_request += 1
        self.active[otf2_id] = rid
        return rid

    def fill_irecv(self, ev) -> int | None:
        call = self.pending.pop(ev.request_id, None)
        if call is not None:
            call.peer, call.tag, call.bytes = _source(ev.sender), _tag(ev.msg_tag), ev.msg_length
            call.comm = self.comm(ev)
        return self.active.pop(ev.request_id, None)

    def close(self, reg: _Open, end_ns: float) -> None:
        name = reg.name
        out: list[Call] = []

        def call(kind: str, **fields) -> Call:
            c = Call(kind=kind, name=name, start_ns=reg.start_ns, end_ns=end_ns, **fields)
            out.append(c)
            return c

        kinds = [type(ev).__name__ for ev in reg.events]
        done: list[int] = []
        if name.startswith("MPI_Sendrecv") and ("MpiSend" in kinds or "MpiRecv" in kinds):
            # A half whose peer was MPI_PROC_NULL has no record.
            send = next((ev for ev in reg.events if type(ev).__name__ == "MpiSend"), None)
            recv = next((ev for ev in reg.events if type(ev).__name__ == "MpiRecv"), None)
            c = call("sendrecv", comm=self.comm(send or recv))
            if send is not None:
                c.peer, c.tag, c.bytes = send.receiver, send.msg_tag, send.msg_length
            if recv is not None:
                c.recv_peer, c.recv_tag, c.recv_bytes = _source(recv.sender), _tag(recv.msg_tag), recv.msg_length
        else:
            for ev, kind in zip(reg.events, kinds):
                if kind == "MpiSend":
                    call("send", peer=ev.receiver, tag=ev.msg_tag, comm=self.comm(ev), bytes=ev.msg_length)
                elif kind == "MpiRecv":
                    call("recv", peer=_source(ev.sender), tag=_tag(ev.msg_tag), comm=self.comm(ev), bytes=ev.msg_length)
                elif kind == "MpiIsend":
                    call("isend", peer=ev.receiver, tag=ev.msg_tag, comm=self.comm(ev), bytes=ev.msg_length,
                         request=self.new_request(ev.request_id))
                elif kind == "MpiIrecvRequest":
                    # Source, tag and size are known at completion (MpiIrecv); until then it moves nothing.
                    self.pending[ev.request_id] = call("irecv", peer=PROC_NULL,
                                                       request=self.new_request(ev.request_id))
                elif kind == "MpiIsendComplete":
                    rid = self.active.pop(ev.request_id, None)
                    if rid is not None:
                        done.append(rid)
                elif kind == "MpiIrecv":
                    rid = self.fill_irecv(ev)
                    if rid is not None:
                        done.append(rid)
                elif kind == "MpiCollectiveEnd" or kind == "NonBlockingCollectiveComplete":
                    # a non-blocking collective is replayed whole where it completes (its MPI_Wait / Test)
                    self.collective(ev, call)
        if done:
            call("wait" if name in SINGLE_WAITS and len(done) == 1 else "waitall", requests=tuple(done))
        if not out and name in BLOCKING:
            call(BLOCKING[name], peer=PROC_NULL)  # Score-P records nothing for MPI_PROC_NULL
        if not out and name in NB_COLLECTIVES and "NonBlockingCollectiveRequest" not in kinds:
            self.unrecorded[name] += 1
        if not out:
            call("noop" if is_noop(name) or name in QUIET_P2P or _has_handle_op(reg.events)
                 or name in NB_COLLECTIVES or "NonBlockingCollectiveRequest" in kinds else "unknown")
        self.calls.extend(out)

    def collective(self, ev, call) -> None:
        op = str(ev.collective_op).rsplit(".", 1)[-1]
        if op in HANDLE_OPS:
            return
        if op not in COLLECTIVE_KINDS:
            call("unknown")  # a collective op with no kind in COLLECTIVE_KINDS
            return
        kind = COLLECTIVE_KINDS[op]
        comm = self.comm(ev)
        members = self.comms.table[comm]
        n = len(members)
        me = members.index(self.rank) if self.rank in members else 0
        root = ev.root if ev.root != UNDEFINED else 0
        if kind == "alltoallv":
            call(kind, comm=comm, send_counts=_spread(ev.size_sent, n), recv_counts=_spread(ev.size_received, n))
        elif op.startswith("REDUCE_SCATTER"):  # sizeSent: the whole buffer, every rank's block
            call(kind, comm=comm, bytes=ev.size_sent // n)
        elif op.endswith("SCAN"):  # Score-P: sent to each higher rank, received from each lower one
            call(kind, comm=comm, bytes=(ev.size_sent + ev.size_received) // max(n - 1, 1))
        else:
            nbytes = _collective_bytes(kind, ev.size_sent, ev.size_received, n, me == root)
            call(kind, comm=comm, bytes=nbytes, root=root if kind in ("bcast", "reduce", "gather", "scatter") else 0)


def _source(sender: int) -> int:
    return ANY_SOURCE if sender == UNDEFINED else sender


def _tag(tag: int) -> int:
    return ANY_TAG if tag == UNDEFINED else tag


def _is_mpi(region, otf2) -> bool:
    return region.paradigm == otf2.Paradigm.MPI or region.name.startswith(("MPI_", "MPIO_"))


def _has_handle_op(events: list) -> bool:
    return any(type(ev).__name__ == "MpiCollectiveEnd" and str(ev.collective_op).rsplit(".", 1)[-1] in HANDLE_OPS
               for ev in events)


def _collective_bytes(kind: str, sent: int, received: int, n: int, at_root: bool) -> int:
    """One rank's `bytes` (calls.py) from Score-P's per-rank totals (scorep_mpi_coll_bytes_*):
    bcast / scatter: the root sends n blocks and receives one, the others receive one;
    reduce / gather: every rank sends one block, the root receives n (n - 1 with MPI_IN_PLACE, sending none);
    allreduce / allgather / alltoall: n blocks each way (n - 1 with MPI_IN_PLACE, taken when n does not divide)."""
    if kind == "barrier":
        return 0
    if kind in ("bcast", "scatter"):
        if not at_root or received > 0:
            return received
        return sent // n
    if kind in ("reduce", "gather"):
        if not at_root or sent > 0:
            return sent
        return received // (n - 1) if n > 1 else 0
    total = received or sent
    if total % n and n > 1 and total % (n - 1) == 0:
        return total // (n - 1)
    return total // n


def _spread(total: int, n: int) -> tuple[int, ...]:
    """`total` bytes over n ranks as evenly as integers allow (OTF2 keeps only alltoallv's totals)."""
    base, extra = divmod(total, n)
    return tuple(base + (1 if i < extra else 0) for i in range(n))
