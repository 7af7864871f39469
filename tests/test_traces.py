"""Trace readers (fastnet/mpi/traces): round trips of hand-built programs through every writer, the real traces
in shared/reference/traces against their README, unknown calls, format detection and errors. Binary DUMPI's own
tests (the reference traces against their ASCII form, files built byte by byte, corrupt files) are in
test_dumpi_binary.py."""

import os
from collections import Counter
from pathlib import Path

import pytest

from fastnet.mpi.calls import ANY_SOURCE, ANY_TAG, PROC_NULL, Call, Trace
from fastnet.mpi.traces import READERS, TraceError, detect_format, read_trace
from fastnet.mpi.traces.dumpi import read_dumpi
from fastnet.mpi.traces.dumpi_ascii import read_dumpi_ascii
from fastnet.mpi.traces.otf2 import read_otf2
from fastnet.mpi.traces.write import write_dumpi, write_dumpi_ascii, write_otf2

WRITERS = ("dumpi", "dumpi_ascii", "otf2")


def through(writer: str, trace: Trace, directory: Path) -> Trace:
    """`trace` written by one of the writers and read back (auto-detected)."""
    if writer == "otf2":
        return read_trace(write_otf2(trace, directory / "t.otf2"))
    (write_dumpi if writer == "dumpi" else write_dumpi_ascii)(trace, directory)
    read = read_trace(directory)
    assert read.source == writer
    return read


def shared_dir() -> Path | None:
    """FASTNET_SHARED, or shared/ next to the checkout (the real one is /work/shared)."""
    for candidate in (os.environ.get("FASTNET_SHARED"), Path(__file__).resolve().parents[1] / ".." / "shared"):
        if candidate and (Path(candidate) / "reference" / "traces").is_dir():
            return Path(candidate)
    return None


def reference(name: str) -> Path:
    shared = shared_dir()
    if shared is None:
        pytest.skip("shared/reference/traces is not next to this checkout (set FASTNET_SHARED)")
    return shared / "reference" / "traces" / name


# --- programs built by hand ----------------------------------------------------------------------------------

def init() -> list[Call]:
    return [Call("noop", "MPI_Init"), Call("noop", "MPI_Comm_rank")]


def finalize() -> list[Call]:
    return [Call("noop", "MPI_Finalize")]


def compute(ns: float) -> Call:
    return Call("compute", duration_ns=ns)


def ping_pong() -> Trace:
    r0 = init() + [compute(1000), Call("send", peer=1, tag=7, bytes=4096), compute(250),
                   Call("recv", peer=1, tag=8, bytes=4096), compute(30)] + finalize()
    r1 = init() + [compute(10), Call("recv", peer=0, tag=7, bytes=4096), compute(500),
                   Call("send", peer=0, tag=8, bytes=4096)] + finalize()
    return Trace([r0, r1])


def ring(n: int = 4) -> Trace:
    ranks = []
    for r in range(n):
        ranks.append(init() + [compute(100 * (r + 1)),
                               Call("irecv", peer=(r - 1) % n, tag=1, bytes=1000 + r, request=10),
                               Call("isend", peer=(r + 1) % n, tag=1, bytes=1000 + (r + 1) % n, request=11),
                               compute(77), Call("waitall", requests=(11, 10)),
                               Call("sendrecv", peer=(r + 1) % n, tag=2, bytes=64, recv_peer=(r - 1) % n,
                                    recv_tag=2, recv_bytes=64)] + finalize())
    return Trace(ranks)


def halo3d() -> Trace:
    """2x2x2 periodic: each rank exchanges with 6 neighbours (the + and - neighbour coincide on a 2-wide axis;
    tags tell the 6 messages apart)."""
    dims = (2, 2, 2)

    def rank_of(x, y, z):
        return (x % 2) * 4 + (y % 2) * 2 + z % 2

    ranks = []
    for r in range(8):
        x, y, z = r // 4, (r // 2) % 2, r % 2
        calls = init()
        for step in range(2):
            calls.append(compute(5000 + 10 * r))
            req = 0
            for axis in range(3):
                for sign in (-1, 1):
                    d = [0, 0, 0]
                    d[axis] = sign
                    nb = rank_of(x + d[0], y + d[1], z + d[2])
                    send_tag, recv_tag = 10 * axis + (sign > 0), 10 * axis + (sign < 0)
                    calls.append(Call("irecv", peer=nb, tag=recv_tag, bytes=8 * dims[axis] * 100, request=req))
                    calls.append(Call("isend", peer=nb, tag=send_tag, bytes=8 * dims[axis] * 100, request=req + 1))
                    req += 2
            calls.append(Call("waitall", requests=tuple(range(12))))
            calls.append(Call("allreduce", bytes=8))
        ranks.append(calls + finalize())
    return Trace(ranks)


def allreduce_loop(n: int = 4) -> Trace:
    ranks = []
    for r in range(n):
        calls = init()
        for i in range(5):
            calls += [compute(1000 + 100 * i + r), Call("allreduce", bytes=8 * (i + 1))]
        calls += [Call("barrier"), Call("reduce", bytes=16, root=2), Call("bcast", bytes=32, root=1),
                  Call("gather", bytes=24, root=3), Call("scatter", bytes=40, root=0), Call("allgather", bytes=12),
                  Call("alltoall", bytes=20)]
        ranks.append(calls + finalize())
    return Trace(ranks)


def alltoallv(n: int = 5) -> Trace:
    ranks = []
    for r in range(n):
        send = tuple((r * 7 + d * 3) % 11 * 16 for d in range(n))
        recv = tuple((s * 7 + r * 3) % 11 * 16 for s in range(n))
        ranks.append(init() + [compute(300 + r), Call("alltoallv", send_counts=send, recv_counts=recv),
                               compute(20)] + finalize())
    return Trace(ranks)


def halves(n: int = 6) -> Trace:
    """World split into two halves (comm 1: even ranks, comm 2: odd ranks, both in reverse order); a bcast and
    a point-to-point exchange inside each half."""
    comms = {1: tuple(range(n - 2, -1, -2)), 2: tuple(range(n - 1, 0, -2))}
    ranks = []
    for r in range(n):
        c = 1 if r % 2 == 0 else 2
        me = comms[c].index(r)
        size = len(comms[c])
        ranks.append(init() + [compute(40), Call("bcast", comm=c, root=1, bytes=512 + c), compute(60),
                               Call("isend", comm=c, peer=(me + 1) % size, tag=3, bytes=128, request=0),
                               Call("recv", comm=c, peer=(me - 1) % size, tag=3, bytes=128),
                               Call("wait", requests=(0,)), Call("barrier")] + finalize())
    return Trace(ranks, comms=comms)


def any_source() -> Trace:
    r0 = init() + [Call("recv", peer=ANY_SOURCE, tag=ANY_TAG, bytes=8), Call("irecv", peer=ANY_SOURCE, tag=5,
                                                                          bytes=8, request=3),
                   Call("wait", requests=(3,))] + finalize()
    r1 = init() + [compute(5), Call("send", peer=0, tag=4, bytes=8), Call("send", peer=0, tag=5, bytes=8)] + finalize()
    return Trace([r0, r1])


PROGRAMS = {"ping_pong": ping_pong, "ring": ring, "halo3d": halo3d, "allreduce_loop": allreduce_loop,
            "alltoallv": alltoallv, "halves": halves}


def summary(trace: Trace, totals_only: bool = False, drop: tuple[str, ...] = ()) -> list[list[tuple]]:
    """Per rank, what each call does: requests as the set of calls (indices) a wait completes, communicators as
    their members, alltoallv as totals where the format keeps only those."""
    out = []
    for calls in trace.ranks:
        rows, issued = [], {}
        for c in calls:
            if c.kind == "compute" or (c.kind == "noop" and c.name in drop):
                continue
            row = (c.kind, c.name if c.kind in ("noop", "unknown") else "", c.peer, c.tag, trace.comms[c.comm],
                   c.bytes, c.root, c.recv_peer, c.recv_tag, c.recv_bytes)
            if totals_only:
                row += (sum(c.send_counts), sum(c.recv_counts))
            else:
                row += (c.send_counts, c.recv_counts)
            if c.kind in ("isend", "irecv"):
                issued[c.request] = len(rows)
            if c.kind in ("wait", "waitall"):
                row += (frozenset(issued[q] for q in c.requests),)
            rows.append(row)
        out.append(rows)
    return out


def gaps(trace: Trace) -> list[list[float]]:
    """Per rank, the time between consecutive calls: the computes between them, or the read trace's gaps."""
    out = []
    for calls in trace.ranks:
        if any(c.kind == "compute" for c in calls):
            row, pending, started = [], 0.0, False
            for c in calls:
                if c.kind == "compute":
                    pending += c.duration_ns
                    continue
                if started:
                    row.append(pending)
                started, pending = True, 0.0
        else:
            row = [b.start_ns - a.end_ns for a, b in zip(calls, calls[1:])]
        out.append(row)
    return out


def check_round_trip(original: Trace, read: Trace, totals_only: bool, drop: tuple[str, ...] = ()) -> None:
    assert read.n_ranks == original.n_ranks
    assert summary(read, totals_only, drop) == summary(original, totals_only)
    kept = Trace([[c for c in calls if not (c.kind == "noop" and c.name in drop)] for calls in read.ranks],
                 comms=read.comms)
    for want, got in zip(gaps(original), gaps(kept)):
        assert got == pytest.approx(want, abs=1.0)


@pytest.mark.parametrize("name", PROGRAMS)
def test_round_trip_dumpi_ascii(tmp_path, name):
    trace = PROGRAMS[name]()
    paths = write_dumpi_ascii(trace, tmp_path, prefix="prog")
    assert [p.name for p in paths] == [f"prog-{r:04d}.txt" for r in range(trace.n_ranks)]
    read = read_dumpi_ascii(tmp_path)
    assert read.source == "dumpi_ascii" and read.files == [str(p) for p in paths]
    # The writer adds one MPI_Comm_split per communicator besides world, for the reader to rebuild them.
    check_round_trip(trace, read, totals_only=False, drop=("MPI_Comm_split",))
    splits = sum(c.name == "MPI_Comm_split" for c in read.ranks[0])
    assert splits == len(trace.comms) - 1


@pytest.mark.parametrize("name", PROGRAMS)
def test_round_trip_dumpi(tmp_path, name):
    trace = PROGRAMS[name]()
    paths = write_dumpi(trace, tmp_path, prefix="prog")
    assert [p.name for p in paths] == [f"prog-{r:04d}.bin" for r in range(trace.n_ranks)]
    assert f"numprocs={trace.n_ranks}\n" in (tmp_path / "prog.meta").read_text()
    read = read_dumpi(tmp_path / "prog.meta")
    assert read.source == "dumpi" and read.files == [str(p) for p in paths]
    check_round_trip(trace, read, totals_only=False, drop=("MPI_Comm_split",))
    # Both DUMPI forms of one trace read the same.
    write_dumpi_ascii(trace, tmp_path / "ascii", prefix="prog")
    as_text = read_dumpi_ascii(tmp_path / "ascii")
    assert read.ranks == as_text.ranks and read.comms == as_text.comms


@pytest.mark.parametrize("name", PROGRAMS)
def test_round_trip_otf2(tmp_path, name):
    trace = PROGRAMS[name]()
    anchor = write_otf2(trace, tmp_path / "prog.otf2")
    read = read_otf2(anchor)
    assert read.source == "otf2" and read.files[1] == f"{anchor}#rank 1"
    check_round_trip(trace, read, totals_only=True)


@pytest.mark.parametrize("damage", ["missing", "cut", "empty"])
def test_a_damaged_otf2_archive_is_one_trace_error(tmp_path, damage, capfd):
    """An event file missing, cut short or emptied: the OTF2 library's error becomes a TraceError naming the
    archive (the CLI's one line, exit 2), not its own exception, and the dozen lines the library printed to the
    C stderr give way to the first thing they said (for a missing file, its name)."""
    anchor = write_otf2(PROGRAMS[next(iter(PROGRAMS))](), tmp_path / "prog.otf2")
    events = sorted((tmp_path / "prog").glob("*.evt"))
    assert len(events) > 1
    if damage == "missing":
        events[1].unlink()
    elif damage == "cut":
        events[1].write_bytes(events[1].read_bytes()[:50])
    else:
        events[0].write_bytes(b"")
    capfd.readouterr()
    with pytest.raises(TraceError, match=r"prog\.otf2: cannot be read: .*missing or damaged") as e:
        read_otf2(anchor)
    assert "[OTF2]" not in capfd.readouterr().err
    if damage == "missing":
        assert events[1].name in str(e.value)


def test_an_otf2_rank_whose_records_end_inside_a_call_is_damaged(tmp_path, monkeypatch):
    """The library may read a cut event file to its end without a word (what lies past the cut in its buffer is
    not defined): a rank whose records stop inside an MPI call is then a damaged archive, not a shorter program."""
    import otf2

    anchor = write_otf2(PROGRAMS[next(iter(PROGRAMS))](), tmp_path / "prog.otf2")
    opened = otf2.reader.open

    class Cut:  # the archive as read, less its last Leave (MPI_Finalize's)
        def __init__(self, path):
            self.inner = opened(path)

        def __enter__(self):
            self.archive = self.inner.__enter__()
            return self

        def __exit__(self, *exc):
            return self.inner.__exit__(*exc)

        def __getattr__(self, name):
            return getattr(self.archive, name)

        @property
        def events(self):
            records = list(self.archive.events)
            last = max(i for i, (_, ev) in enumerate(records) if isinstance(ev, otf2.events.Leave))
            return records[:last] + records[last + 1:]

    monkeypatch.setattr(otf2.reader, "open", Cut)
    with pytest.raises(TraceError, match=r"records end inside MPI_\w+ .*missing or damaged"):
        read_otf2(anchor)


def test_an_otf2_archive_missing_a_ranks_definitions_names_the_file(tmp_path):
    """Score-P's archive without one rank's local definitions: the library reads on without them and the records
    then read wrong (a communicator of the wrong kind); the error names the file the library could not open."""
    import shutil

    archive = tmp_path / "ember"
    shutil.copytree(reference("sst_ember_otf2"), archive)
    for path in archive.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    (archive / "traces" / "1.def").unlink()
    with pytest.raises(TraceError, match=r"cannot be read: .*1\.def"):
        read_otf2(archive)


def test_otf2_alltoallv_spreads_totals_evenly(tmp_path):
    trace = alltoallv()
    read = read_otf2(write_otf2(trace, tmp_path / "a.otf2"))
    for orig, got in zip(trace.ranks, read.ranks):
        want = next(c for c in orig if c.kind == "alltoallv")
        call = next(c for c in got if c.kind == "alltoallv")
        assert max(call.send_counts) - min(call.send_counts) <= 1 and sum(call.send_counts) == sum(want.send_counts)
        assert sum(call.recv_counts) == sum(want.recv_counts)


@pytest.mark.parametrize("writer", WRITERS)
def test_any_source_and_any_tag_survive(tmp_path, writer):
    trace = any_source()
    if writer == "otf2":
        read = read_otf2(write_otf2(trace, tmp_path / "t.otf2"))
    elif writer == "dumpi":
        write_dumpi(trace, tmp_path)
        read = read_dumpi(tmp_path / "trace-0001.bin")  # one file names all its siblings
    else:
        write_dumpi_ascii(trace, tmp_path)
        read = read_dumpi_ascii(tmp_path / "trace-0000.txt")  # one file names all its siblings
    recv, irecv = [c for c in read.ranks[0] if c.kind in ("recv", "irecv")]
    assert (recv.peer, recv.tag, irecv.peer, irecv.tag) == (ANY_SOURCE, ANY_TAG, ANY_SOURCE, 5)


@pytest.mark.parametrize("writer", ["dumpi", "dumpi_ascii"])
def test_dumpi_proc_null_is_read_as_proc_null(tmp_path, writer):
    trace = Trace([[Call("send", peer=PROC_NULL, bytes=8), Call("recv", peer=PROC_NULL, bytes=8)]])
    read = through(writer, trace, tmp_path)
    assert [(c.kind, c.peer) for c in read.ranks[0]] == [("send", PROC_NULL), ("recv", PROC_NULL)]


def test_timed_trace_keeps_its_times(tmp_path):
    calls = [Call("noop", "MPI_Init", start_ns=1_000.0, end_ns=5_000.0),
             Call("barrier", start_ns=9_000.0, end_ns=9_500.0)]
    trace = Trace([calls, [Call(c.kind, c.name, start_ns=c.start_ns + 3, end_ns=c.end_ns + 4) for c in calls]])
    for writer in WRITERS:
        read = through(writer, trace, tmp_path / writer)
        assert [(c.start_ns, c.end_ns) for c in read.ranks[1]] == [(1003.0, 5004.0), (9003.0, 9504.0)], writer


# --- unknown calls -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("writer", WRITERS)
def test_unknown_calls_keep_their_name(tmp_path, writer):
    calls = [Call("noop", "MPI_Init"), Call("unknown", "MPI_Put"), Call("unknown", "MPI_Alltoallw"),
             Call("noop", "MPI_Type_commit"), Call("noop", "MPI_Wtime")]
    trace = Trace([calls, list(calls)])
    read = through(writer, trace, tmp_path)
    assert [(c.kind, c.name) for c in read.ranks[1]] == [(c.kind, c.name) for c in calls]


def test_dumpi_unknown_datatype_is_an_error_naming_it(tmp_path):
    text = ("MPI_Send entering at walltime 1.000000000, cputime 0.0 seconds in thread 0.\n"
            "int count=3\nMPI_Datatype datatype=31 (user-defined-datatype)\nint dest=0\nint tag=1\n"
            "MPI_Comm comm=2 (MPI_COMM_WORLD)\n"
            "MPI_Send returning at walltime 1.000000100, cputime 0.0 seconds in thread 0.\n")
    (tmp_path / "x-0000.txt").write_text(text)
    with pytest.raises(TraceError, match=r"x-0000\.txt:1.*datatype 31 \(user-defined-datatype\)"):
        read_dumpi_ascii(tmp_path)


def test_dumpi_comm_split_and_free_are_replayed(tmp_path):
    """Comm_split with keys reversing the order, a colour left out (MPI_COMM_NULL), then Comm_dup of the new
    communicator; DUMPI's handle numbers differ per rank and are reused after Comm_free."""
    lines = {r: [] for r in range(4)}
    t = [0]

    def block(r, name, *args):
        t[0] += 1
        lines[r] += [f"{name} entering at walltime 0.{t[0]:09d}, cputime 0.0 seconds in thread 0.", *args,
                     f"{name} returning at walltime 0.{t[0]:09d}, cputime 0.0 seconds in thread 0."]

    for r in range(4):
        member = r != 3
        h = 7 + r  # a different handle per rank
        block(r, "MPI_Comm_split", "MPI_Comm oldcomm=2 (MPI_COMM_WORLD)", f"int color={0 if member else -32766}",
              f"int key={10 - r}", f"MPI_Comm newcomm={h if member else 1} (user-defined-comm)")
        if member:
            block(r, "MPI_Comm_dup", f"MPI_Comm oldcomm={h} (user-defined-comm)", "MPI_Comm newcomm=5 (x)")
            block(r, "MPI_Comm_free", f"MPI_Comm comm={h} (user-defined-comm)")
            block(r, "MPI_Bcast", "int count=2", "MPI_Datatype datatype=9 (MPI_INT)", "int root=0",
                  "MPI_Comm comm=5 (user-defined-comm)")
        block(r, "MPI_Barrier", "MPI_Comm comm=3 (MPI_COMM_SELF)")
        (tmp_path / f"s-{r:04d}.txt").write_text("\n".join(lines[r]) + "\n")
    read = read_dumpi_ascii(tmp_path)
    bcasts = [c for calls in read.ranks for c in calls if c.kind == "bcast"]
    assert len({c.comm for c in bcasts}) == 1 and bcasts[0].bytes == 8
    assert read.comms[bcasts[0].comm] == (2, 1, 0)  # key 10 - r: reverse order
    selfs = [next(c for c in calls if c.kind == "barrier").comm for calls in read.ranks]
    assert [read.comms[c] for c in selfs] == [(0,), (1,), (2,), (3,)]


def dumpi_files(tmp_path, per_rank: dict[int, list[tuple[str, list[str]]]]) -> None:
    """Write hand-made DUMPI ASCII files: per rank, (call name, argument lines) blocks 1 ns apart."""
    for r, blocks in per_rank.items():
        lines = []
        for t, (name, args) in enumerate(blocks):
            lines += [f"{name} entering at walltime 0.{t:09d}, cputime 0.0 seconds in thread 0.", *args,
                      f"{name} returning at walltime 0.{t:09d}, cputime 0.0 seconds in thread 0."]
        (tmp_path / f"h-{r:04d}.txt").write_text("\n".join(lines) + "\n")


def test_dumpi_group_range_incl_spanning_lines(tmp_path):
    """dumpi2ascii prints a 2-D array over several lines, its closing bracket running into the next argument."""
    create = [("MPI_Comm_group", ["MPI_Comm comm=2 (MPI_COMM_WORLD)", "MPI_Group group=3 (user-defined-group)"]),
              ("MPI_Group_range_incl", ["MPI_Group group=3 (user-defined-group)", "int count=2",
                                        "int ranges[2][3]=[[4, 2, -1]", ", [5, 5, 1]",
                                        "]MPI_Group newgroup=4 (user-defined-group)"])]
    per_rank = {}
    for r in range(6):
        member = r in (4, 3, 2, 5)
        per_rank[r] = create + [("MPI_Comm_create", ["MPI_Comm oldcomm=2 (MPI_COMM_WORLD)",
                                                     "MPI_Group group=4 (user-defined-group)",
                                                     f"MPI_Comm newcomm={9 if member else 1} (user-defined-comm)"])]
        if member:
            per_rank[r].append(("MPI_Barrier", ["MPI_Comm comm=9 (user-defined-comm)"]))
    dumpi_files(tmp_path, per_rank)
    read = read_dumpi_ascii(tmp_path)
    comm = {c.comm for calls in read.ranks for c in calls if c.kind == "barrier"}
    assert len(comm) == 1 and read.comms[comm.pop()] == (4, 3, 2, 5)


def test_dumpi_cart_create_and_cart_sub(tmp_path):
    """A 2 x 3 grid of 6 ranks (a 7th left out), split into rows: Cart_sub keeps dimension 1."""
    per_rank = {}
    for r in range(7):
        in_grid = r < 6
        blocks = [("MPI_Cart_create", ["MPI_Comm oldcomm=2 (MPI_COMM_WORLD)", "int ndim=2", "int dims[2]=[2, 3]",
                                       "int periods[2]=[0, 0]", "int reorder=0",
                                       f"MPI_Comm newcomm={4 if in_grid else 1} (user-defined-comm)"])]
        if in_grid:
            blocks += [("MPI_Cart_sub", ["int ndim=2", "MPI_Comm oldcomm=4 (user-defined-comm)",
                                         "int remain_dims[2]=[0, 1]", "MPI_Comm newcomm=5 (user-defined-comm)"]),
                       ("MPI_Allreduce", ["int count=1", "MPI_Datatype datatype=14 (MPI_DOUBLE)",
                                          "MPI_Op op=3 (MPI_SUM)", "MPI_Comm comm=5 (user-defined-comm)"])]
        per_rank[r] = blocks
    dumpi_files(tmp_path, per_rank)
    read = read_dumpi_ascii(tmp_path)
    rows = [read.comms[next(c for c in calls if c.kind == "allreduce").comm] for calls in read.ranks[:6]]
    assert rows == [(0, 1, 2)] * 3 + [(3, 4, 5)] * 3


# --- the real traces -----------------------------------------------------------------------------------------

def counts(trace: Trace) -> Counter:
    return Counter(c.name or c.kind for calls in trace.ranks for c in calls)


def test_sst_dumpi_testtrace_ascii():
    trace = read_trace(reference("sst_dumpi_testtrace_ascii"))
    assert trace.source == "dumpi_ascii" and trace.n_ranks == 4
    names = ("MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Barrier", "MPI_Isend", "MPI_Recv", "MPI_Wait",
             "MPI_Allreduce", "MPI_Finalize")
    assert counts(trace) == {name: 4 for name in names}
    p2p = [c for calls in trace.ranks for c in calls if c.kind in ("isend", "recv")]
    assert sum(c.bytes for c in p2p if c.kind == "isend") == 16 == sum(c.bytes for c in p2p if c.kind == "recv")
    r0 = trace.ranks[0]
    isend, recv, wait = (next(c for c in r0 if c.kind == k) for k in ("isend", "recv", "wait"))
    assert (isend.peer, isend.tag, recv.peer, wait.requests) == (1, 1337, 3, (isend.request,))
    assert (r0[0].start_ns, r0[0].end_ns) == (737_669_000.0, 737_670_000.0)  # ns since 1296777956 s, exact


def test_sstmacro_testbgp_dumpi_ascii():
    trace = read_trace(reference("sstmacro_testbgp_dumpi_ascii"))
    assert trace.n_ranks == 7
    c = counts(trace)
    assert (c["MPI_Isend"], c["MPI_Irecv"], c["MPI_Waitall"], c["MPI_Alltoall"], c["MPI_Barrier"],
            c["MPI_Comm_rank"]) == (588, 588, 98, 49, 21, 203)
    for name in ("MPI_Init", "MPI_Comm_size", "MPI_Comm_group", "MPI_Group_incl", "MPI_Comm_create", "MPI_Finalize"):
        assert c[name] == 7
    calls = [x for rank in trace.ranks for x in rank]
    assert sum(x.bytes for x in calls if x.kind == "isend") == 418_656
    assert sum(x.bytes for x in calls if x.kind == "irecv") == 418_656
    assert sum(x.bytes for x in calls if x.kind == "alltoall") == 34_888  # 49 x 89 doubles
    # Comm_create over a Group_incl of all 7 ranks: one communicator, distinct from world, with every rank.
    sub = {x.comm for x in calls if x.kind in ("isend", "irecv", "alltoall")}
    assert len(sub) == 1 and sub != {0} and trace.comms[sub.pop()] == tuple(range(7))
    assert {x.comm for x in calls if x.kind == "barrier"} == {0}
    # Every waitall completes 12 requests this rank issued and had not completed yet.
    for rank in trace.ranks:
        open_requests = set()
        for x in rank:
            if x.kind in ("isend", "irecv"):
                open_requests.add(x.request)
            elif x.kind == "waitall":
                assert len(x.requests) == 12 and set(x.requests) <= open_requests
                open_requests -= set(x.requests)
        assert not open_requests


def test_sst_ember_otf2():
    trace = read_trace(reference("sst_ember_otf2"))
    assert trace.source == "otf2" and trace.n_ranks == 4
    assert counts(trace) == {"MPI_Init": 4, "MPI_Comm_rank": 4, "MPI_Bcast": 4, "MPI_Finalize": 4}
    bcasts = [c for calls in trace.ranks for c in calls if c.kind == "bcast"]
    # The README's 16,384 bytes is what Score-P counts as the root's sizeSent (4 ranks x 4,096); the buffer
    # every rank passes to MPI_Bcast, which calls.py's `bytes` is, is 4,096.
    assert [(c.bytes, c.root, c.comm) for c in bcasts] == [(4096, 0, 0)] * 4
    for calls in trace.ranks:
        assert all(a.end_ns <= b.start_ns for a, b in zip(calls, calls[1:]))


def test_reference_trace_round_trips_through_both_writers(tmp_path):
    trace = read_trace(reference("sstmacro_testbgp_dumpi_ascii"))
    write_dumpi_ascii(trace, tmp_path / "d", prefix="bgp")
    again = read_trace(tmp_path / "d")
    assert summary(again, drop=("MPI_Comm_split",)) == summary(trace)
    assert [[(c.start_ns, c.end_ns) for c in calls if c.name != "MPI_Comm_split"] for calls in again.ranks] == \
        [[(c.start_ns, c.end_ns) for c in calls] for calls in trace.ranks]
    via_otf2 = read_trace(write_otf2(trace, tmp_path / "o" / "bgp.otf2"))
    assert summary(via_otf2, totals_only=True) == summary(trace, totals_only=True)


# --- format detection and errors -----------------------------------------------------------------------------

def test_detect_format(tmp_path):
    write_dumpi_ascii(ping_pong(), tmp_path / "d")
    anchor = write_otf2(ping_pong(), tmp_path / "o" / "pp.otf2")
    bins = write_dumpi(ping_pong(), tmp_path / "b", prefix="pp")
    assert detect_format(tmp_path / "d") == "dumpi_ascii"
    assert detect_format(tmp_path / "d" / "trace-0001.txt") == "dumpi_ascii"
    assert detect_format(anchor) == "otf2" and detect_format(tmp_path / "o") == "otf2"
    for path in (tmp_path / "b", tmp_path / "b" / "pp.meta", bins[1]):
        assert detect_format(path) == "dumpi"
    renamed = bins[0].rename(tmp_path / "rank0.data")  # told by DUMPI's magic number, not the name
    assert detect_format(renamed) == "dumpi" and read_trace(renamed).n_ranks == 1
    assert set(READERS.names) == {"otf2", "dumpi", "dumpi_ascii"}
    assert read_trace(tmp_path / "o").n_ranks == 2
    assert read_trace(tmp_path / "d", format="dumpi_ascii").n_ranks == 2
    with pytest.raises(TraceError, match="unknown trace format 'vampir'"):
        read_trace(tmp_path / "d", format="vampir")
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(TraceError, match=r"notes\.txt: not a trace format"):
        read_trace(tmp_path / "notes.txt")
    with pytest.raises(TraceError, match="no such file"):
        read_trace(tmp_path / "missing")


def test_binary_next_to_ascii_is_read_as_binary():
    # sst-dumpi ships rank 0's ASCII next to the four .bin files: the directory is the binary trace, and the
    # lone text is not a whole trace.
    assert detect_format(reference("sst_dumpi_testtrace")) == "dumpi"
    assert read_trace(reference("sst_dumpi_testtrace")).n_ranks == 4
    with pytest.raises(TraceError, match=r"numprocs=4 but 1 ASCII rank files.*format \"dumpi\""):
        read_dumpi_ascii(reference("sst_dumpi_testtrace") / "testtrace-0000.txt")


@pytest.mark.parametrize("writer", ["dumpi", "dumpi_ascii"])
def test_dumpi_missing_rank_file_is_an_error(tmp_path, writer):
    through(writer, ring(), tmp_path)
    (tmp_path / f"trace-0001.{'bin' if writer == 'dumpi' else 'txt'}").unlink()
    with pytest.raises(TraceError, match=r"ranks \[1\] have no file"):
        read_trace(tmp_path, format=writer)


def test_otf2_writer_refuses_to_overwrite(tmp_path):
    write_otf2(ping_pong(), tmp_path / "x.otf2")
    with pytest.raises(TraceError, match="already exists"):
        write_otf2(ping_pong(), tmp_path / "x.otf2")


def test_compute_in_cycles_cannot_be_written(tmp_path):
    trace = Trace([[Call("compute", duration_cycles=10), Call("barrier")]])
    with pytest.raises(TraceError, match="cycles"):
        write_dumpi_ascii(trace, tmp_path)


def test_v_collectives_reduce_scatter_and_scans_replay_as_their_base_collectives(tmp_path):
    """DUMPI: gatherv / scatterv / allgatherv with their mean block, reduce_scatter as a pairwise alltoall of each
    rank's block, scan as an allreduce of its buffer (docs/mpi.md "Coverage")."""
    world, i32 = "MPI_Comm comm=2 (MPI_COMM_WORLD)", "MPI_Datatype {}=9 (MPI_INT)"
    per_rank = {}
    for r in range(4):
        root = r == 0
        per_rank[r] = [
            ("MPI_Allgatherv", ["int commsize=4", "int sendcount=1", i32.format("sendtype"),
                                "int recvcounts[4]=[1, 2, 3, 2]", "int displs[4]=[0, 1, 3, 6]", i32.format("recvtype"),
                                world]),
            ("MPI_Gatherv", [f"int commrank={r}", "int commsize=4", f"int sendcount={r + 1}", i32.format("sendtype"),
                             "int root=0", world] + (["int recvcounts[4]=[1, 2, 3, 4]", "int displs[4]=[0, 1, 3, 6]"]
                                                     if root else []) + [i32.format("recvtype")]),
            ("MPI_Reduce_scatter", ["int commsize=4", "int recvcounts[4]=[2, 2, 2, 2]", i32.format("datatype"),
                                    "MPI_Op op=1 (MPI_SUM)", world]),
            ("MPI_Scan", ["int count=3", i32.format("datatype"), "MPI_Op op=1 (MPI_SUM)", world]),
        ]
    dumpi_files(tmp_path, per_rank)
    read = read_dumpi_ascii(tmp_path)
    got = [(c.kind, c.bytes) for c in read.ranks[0]]
    assert got == [("allgather", 8), ("gather", 10), ("alltoall", 8), ("allreduce", 12)]
    assert (read.ranks[2][1].kind, read.ranks[2][1].bytes) == ("gather", 12)  # a leaf sends its own block


def test_otf2_v_collectives_and_a_non_blocking_collective(tmp_path):
    """OTF2: an MPI_Iallreduce whose NonBlockingCollectiveComplete sits in its MPI_Wait is replayed there; the
    v-collectives and reduce_scatter are read from Score-P's totals."""
    import otf2
    from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole

    n = 4
    with otf2.writer.open(str(tmp_path), archive_name="nb", timer_resolution=10**9) as w:
        defs = w.definitions
        node = defs.system_tree_node("x", class_name="machine")
        locs = [defs.location("Master thread", group=defs.location_group(f"MPI Rank {r}", system_tree_parent=node))
                for r in range(n)]
        defs.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        comm = defs.comm("MPI_COMM_WORLD", group=defs.group("", group_type=GroupType.COMM_GROUP,
                                                             paradigm=Paradigm.MPI, members=locs))
        reg = {name: defs.region(name, paradigm=Paradigm.MPI, region_role=RegionRole.COLL_ALL2ALL)
               for name in ("MPI_Iallreduce", "MPI_Wait", "MPI_Allgatherv", "MPI_Reduce_scatter", "MPI_Ialltoall")}
        for r in range(n):
            ew = w.event_writer_from_location(locs[r])
            ew.program_begin(0, "x", [])
            ew.enter(10, reg["MPI_Iallreduce"])
            ew.non_blocking_collective_request(11, 7)
            ew.leave(12, reg["MPI_Iallreduce"])
            ew.enter(20, reg["MPI_Wait"])
            ew.non_blocking_collective_complete(21, CollectiveOp.ALLREDUCE, comm, 0xFFFFFFFF, n * 64, n * 64, 7)
            ew.leave(22, reg["MPI_Wait"])
            ew.enter(30, reg["MPI_Allgatherv"])
            ew.mpi_collective_begin(30)
            ew.mpi_collective_end(31, CollectiveOp.ALLGATHERV, comm, 0xFFFFFFFF, 8 * n, 40)
            ew.leave(32, reg["MPI_Allgatherv"])
            ew.enter(40, reg["MPI_Reduce_scatter"])
            ew.mpi_collective_begin(40)
            ew.mpi_collective_end(41, CollectiveOp.REDUCE_SCATTER, comm, 0xFFFFFFFF, 16 * n, 16)
            ew.leave(42, reg["MPI_Reduce_scatter"])
            ew.enter(43, reg["MPI_Ialltoall"])  # as Score-P 2.x writes it: the region alone
            ew.leave(44, reg["MPI_Ialltoall"])
            ew.enter(45, reg["MPI_Wait"])
            ew.leave(46, reg["MPI_Wait"])
            ew.program_end(50, 0)
    read = read_otf2(tmp_path / "nb.otf2")
    assert [(c.kind, c.name, c.bytes) for c in read.ranks[1]] == [
        ("noop", "MPI_Iallreduce", 0), ("allreduce", "MPI_Wait", 64), ("allgather", "MPI_Allgatherv", 10),
        ("alltoall", "MPI_Reduce_scatter", 16), ("noop", "MPI_Ialltoall", 0), ("noop", "MPI_Wait", 0)]
    assert read.not_recorded == {"MPI_Ialltoall": n}  # no communicator, no sizes: reported, not replayed
    from typer.testing import CliRunner

    from fastnet.cli import app

    r = CliRunner().invoke(app, ["run", "--set", "topology.kind=torus", "--set", "topology.dims=[4,4]", "--set",
                                 "workload.kind=trace", "--set", f"workload.file={tmp_path / 'nb.otf2'}"])
    assert r.exit_code == 0 and "did not record" in r.output and "MPI_Ialltoall x4" in r.output, r.output


def test_macos_resource_forks_beside_a_trace_are_ignored(tmp_path):
    trace = Trace([[Call("barrier")], [Call("barrier")]])
    (tmp_path / "t").mkdir()
    write_dumpi(trace, tmp_path / "t")
    for f in list((tmp_path / "t").iterdir()):
        (f.parent / ("._" + f.name)).write_bytes(b"\0\5\26\7 AppleDouble")
    assert detect_format(tmp_path / "t") == "dumpi"
    assert [c.kind for c in read_trace(tmp_path / "t").ranks[1]] == ["barrier"]


def test_dumpi_request_free_of_an_active_isend_replays(tmp_path):
    """MPI_Request_free on an active isend: the message still goes, and nothing waits for it."""
    world = "MPI_Comm comm=2 (MPI_COMM_WORLD)"
    send = ["int count=4", "MPI_Datatype datatype=9 (MPI_INT)", "int dest=1", "int tag=5", world,
            "MPI_Request request=[7]"]
    recv = ["int count=4", "MPI_Datatype datatype=9 (MPI_INT)", "int source=0", "int tag=5", world,
            "MPI_Status status=<IGNORED>"]
    dumpi_files(tmp_path, {0: [("MPI_Isend", send), ("MPI_Request_free", ["MPI_Request request=[7]"])],
                           1: [("MPI_Recv", recv)]})
    read = read_dumpi_ascii(tmp_path)
    assert [c.kind for c in read.ranks[0]] == ["isend", "noop"] and read.ranks[0][1].requests == (0,)
    import fastnet

    ds = fastnet.run({"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"max_cycles": 10**9},
                      "workload": {"kind": "trace", "file": str(tmp_path)}})
    assert ds.messages.item() == 1 and ds.bytes.item() == 16


def test_dumpi_footer_counts_of_unrecorded_calls_are_kept(tmp_path):
    """dumpi2ascii prints DUMPI's footer: calls the program made and DUMPI did not record (a profile that ignores
    them): the Trace keeps them, so a replay can say it is a fragment of the run."""
    dumpi_files(tmp_path, {0: [("MPI_Barrier", ["MPI_Comm comm=2 (MPI_COMM_WORLD)"])]})
    f = tmp_path / "h-0000.txt"
    f.write_text(f.read_text() + "MPI_Allreduce called 3 times and ignored 3 times\n"
                 "MPI_Barrier called 1 times and ignored 0 times\n"
                 "MPI_ALL_FUNCTIONS called 4 times and ignored 3 times\n")
    assert read_dumpi_ascii(tmp_path).not_recorded == {"MPI_Allreduce": 3}


def test_dumpi_cancelled_receive_is_not_waited_for(tmp_path):
    """MPI_Cancel of a posted irecv that nothing sends to: its wait must not hang the replay."""
    world = "MPI_Comm comm=2 (MPI_COMM_WORLD)"
    irecv = ["int count=4", "MPI_Datatype datatype=9 (MPI_INT)", "int source=0", "int tag=5", world,
             "MPI_Request request=[7]"]
    dumpi_files(tmp_path, {0: [("MPI_Barrier", [world])],
                           1: [("MPI_Irecv", irecv), ("MPI_Cancel", ["MPI_Request request=[7]"]),
                               ("MPI_Wait", ["MPI_Request request=[7]", "MPI_Status status=<IGNORED>"]),
                               ("MPI_Barrier", [world])]})
    read = read_dumpi_ascii(tmp_path)
    assert (read.ranks[1][0].kind, read.ranks[1][0].peer) == ("irecv", PROC_NULL)
    import fastnet

    ds = fastnet.run({"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"max_cycles": 10**9},
                      "workload": {"kind": "trace", "file": str(tmp_path)}})
    assert ds.call_count.sel(call="irecv").item() == 1 and ds.bytes.item() == 0
