"""Binary DUMPI (fastnet/mpi/traces/dumpi.py): the reference traces of shared/reference/traces against the text
dumpi2ascii printed for them (same records, same Trace, same replay to the cycle), files built here byte by byte
(record masks, statuses, perf counters, old DUMPI versions), unknown calls, and one-line errors for truncated and
corrupt files."""

import os
import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import fastnet
from fastnet.cli import app
from fastnet.errors import ConfigError
from fastnet.mpi.calls import Call, Trace
from fastnet.mpi.traces import TraceError, dumpi_ascii, read_trace
from fastnet.mpi.traces.dumpi import MAGIC, CPU_TIME, PERF_COUNTERS, THREAD, WALL_TIME, rank_files, read_dumpi, \
    read_dumpi_file
from fastnet.mpi.program import Options, lower
from fastnet.mpi.traces.dumpi_calls import DUMPI_DATATYPES, RankCalls, build_trace
from fastnet.mpi.traces.dumpi_layout import END_OF_STREAM, FUNCTION_ENTER, FUNCTION_EXIT, IDS, NAMES
from fastnet.mpi.traces.write import write_dumpi, write_dumpi_ascii

TORUS = {"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"max_cycles": 2**31 - 1}}
REFERENCE_PAIRS = [("sst_dumpi_testtrace", "sst_dumpi_testtrace_ascii"),
                   ("sstmacro_testbgp_dumpi", "sstmacro_testbgp_dumpi_ascii")]


def reference(name: str) -> Path:
    for candidate in (os.environ.get("FASTNET_SHARED"), Path(__file__).resolve().parents[1] / ".." / "shared"):
        if candidate and (Path(candidate) / "reference" / "traces").is_dir():
            return Path(candidate) / "reference" / "traces" / name
    pytest.skip("shared/reference/traces is not next to this checkout (set FASTNET_SHARED)")


# --- the reference traces against their ASCII form ----------------------------------------------------------

@pytest.mark.parametrize("binary,text", REFERENCE_PAIRS)
def test_reference_binary_gives_the_trace_of_its_ascii_form(binary, text):
    got, want = read_trace(reference(binary)), read_trace(reference(text))
    assert (got.source, want.source) == ("dumpi", "dumpi_ascii")
    assert got.comms == want.comms
    assert [len(calls) for calls in got.ranks] == [len(calls) for calls in want.ranks]
    for rank, (mine, theirs) in enumerate(zip(got.ranks, want.ranks)):
        for i, (a, b) in enumerate(zip(mine, theirs)):
            # every field: kind, name, peer, tag, comm, bytes, request(s), root, counts, start and end times
            assert a == b, f"{binary} rank {rank} call {i}"


@pytest.mark.parametrize("binary,text", REFERENCE_PAIRS)
def test_reference_records_are_what_dumpi2ascii_printed(binary, text):
    """Below the Trace: each rank's header, every record's name, wall-clock times and integer arguments, and
    the datatype table are what dumpi2ascii printed; the footer counts the records read."""
    bins, texts = rank_files(reference(binary)), dumpi_ascii.rank_files(reference(text))
    assert len(bins) == len(texts) > 1
    for b, t in zip(bins, texts):
        cut_off: list[str] = []
        f, printed = read_dumpi_file(b), dumpi_ascii._parse(t, Counter(), cut_off)
        assert cut_off == []  # each file has its footer
        head = dict(line.split("=", 1) for line in t.read_text().splitlines()[:7])
        assert ".".join(str(v) for v in f.header.version) == head["version"]
        assert (f.header.hostname, f.header.username) == (head["hostname"], head["username"])
        assert str(list(f.header.mesh_size)) == head["meshsize"] and str(list(f.header.mesh_coords)) == head["meshcrd"]
        assert f.datatype_sizes == printed.datatype_sizes
        assert f.records == {name: n - f.ignored_counts.get(name, 0) for name, n in f.call_counts.items()}
        assert len(f.calls) == len(printed.calls)
        for mine, theirs in zip(f.calls, printed.calls):
            assert (mine.name, mine.start_ns, mine.end_ns) == (theirs.name, theirs.start_ns, theirs.end_ns)
            for key, value in mine.args.items():
                if isinstance(value, str) or (isinstance(value, tuple) and not all(isinstance(v, int) for v in value)):
                    continue  # strings (argv): printed quoted
                # dumpi2ascii prints a request handle as a one-element array
                assert theirs.args[key] in (value, (value,)), f"{t.name}:{theirs.pos} {key}"


@pytest.mark.parametrize("binary,text", REFERENCE_PAIRS)
def test_reference_binary_replays_to_the_cycle_of_its_ascii_form(binary, text):
    got = fastnet.run({**TORUS, "workload": {"kind": "trace", "file": str(reference(binary))}})
    want = fastnet.run({**TORUS, "workload": {"kind": "trace", "file": str(reference(text))}})
    assert got.execution_cycles.item() == want.execution_cycles.item() > 0
    assert set(got.data_vars) == set(want.data_vars)
    for name, var in want.data_vars.items():
        np.testing.assert_array_equal(got[name].values, var.values, err_msg=name)


def test_meta_file_and_one_bin_name_the_whole_trace():
    directory = reference("sstmacro_testbgp_dumpi")
    by_dir = read_dumpi(directory)
    for path in (directory / "testbgp.meta", directory / "testbgp-0003.bin"):
        assert read_trace(path).ranks == by_dir.ranks


# --- files built byte by byte --------------------------------------------------------------------------------

def record(name: str, args: bytes, mask: int = WALL_TIME | THREAD, wall=(0, 0, 0, 0), cpu=(0, 0, 0, 0),
           perf: int = 0, fid: int | None = None) -> bytes:
    """One record: function id, mask, then thread, cpu time, wall time and perf counters as the mask says."""
    out = struct.pack(">HB", IDS[name] if fid is None else fid, mask)
    if mask & THREAD:
        out += struct.pack(">H", 3)
    if mask & CPU_TIME:
        out += struct.pack(">HIHI", *cpu)
    if mask & WALL_TIME:
        out += struct.pack(">HIHI", *wall)
    if mask & PERF_COUNTERS:
        out += struct.pack(f">B{2 * perf}q", perf, *range(2 * perf))
    return out + args


PERF_LABELS = ("PAPI_TOT_CYC", "PAPI_L1_DCM")


def dumpi_bytes(records: list[bytes], version=(1, 1, 0), wall_bias: int = 100, old_index: bool = False) -> bytes:
    """A .bin holding `records`, a header, the perf counter labels and an index; no footer or datatype sizes
    (offsets 0). The oldest index (before DUMPI 0.6.6 had datatype sizes, and before the perf and address
    labels) has 4 offsets."""
    out = struct.pack(">Qii", MAGIC, 0, wall_bias) + b"".join(records) + struct.pack(">H", END_OF_STREAM)
    header = len(out)
    out += struct.pack(">BBBQ", *version, 0) + struct.pack(">H", 1) + b"h" + struct.pack(">H", 1) + b"u"
    out += struct.pack(">i", 0)  # no mesh coordinates (so no mesh size)
    if old_index:
        return out + struct.pack(">5Q", MAGIC, header, 8, 0, 0)
    perf = len(out)  # sst-dumpi's reader takes the number of counters in a record from here
    out += i32(len(PERF_LABELS)) + b"".join(struct.pack(">H", len(x)) + x.encode() for x in PERF_LABELS)
    return out + struct.pack(">8Q", MAGIC, 0, 0, perf, header, 8, 0, 0)


def i32(*values: int) -> bytes:
    return struct.pack(f">{len(values)}i", *values)


def chars(text: str) -> bytes:
    return i32(len(text)) + text.encode()


def status(version=(1, 1, 0)) -> bytes:
    """One status (bytes, source, cancelled, error, and from 0.6.3 the tag)."""
    return i32(1) + struct.pack(">iiBB", 8, 1, 0, 0) + (i32(5) if version >= (0, 6, 3) else b"")


def send(dest: int, nbytes: int, **kw) -> bytes:  # count, datatype (MPI_BYTE), dest, tag, comm (world)
    return record("MPI_Send", i32(nbytes) + struct.pack(">H", 5) + i32(dest, 7) + struct.pack(">H", 2), **kw)


def recv(source: int, nbytes: int, version=(1, 1, 0), perf: bool = True, **kw) -> bytes:
    """MPI_Recv of MPI_DOUBLEs with its status, cpu time and (`perf`) the perf counters."""
    mask = WALL_TIME | THREAD | CPU_TIME | 0x03 | (PERF_COUNTERS if perf else 0)
    return record("MPI_Recv", i32(nbytes) + struct.pack(">H", 14) + i32(source, 7) + struct.pack(">H", 2)
                  + status(version), mask=mask, perf=len(PERF_LABELS) if perf else 0, **kw)


def test_record_masks_statuses_perf_counters_and_function_records(tmp_path):
    """A record carries the thread, cpu time, wall time, perf counters and statuses its mask says; function enter
    and exit records (user functions, MPI_Pcontrol) are read past. Wall seconds are 16 bits past the file's bias."""
    fn = struct.pack(">q", 4096)
    rank0 = [record("MPI_Init", i32(2) + chars("./app") + chars("-x"), wall=(0, 5, 0, 9)),
             record("", fn, fid=FUNCTION_ENTER), record("", fn, fid=FUNCTION_EXIT),
             send(1, 24, wall=(1, 10, 2, 20)),
             record("MPI_Finalize", b"", mask=0x00)]  # no thread, no time: 0, as dumpi2ascii prints it
    rank1 = [recv(0, 3, wall=(1, 50, 1, 70), cpu=(9, 9, 9, 9))]
    (tmp_path / "t-0000.bin").write_bytes(dumpi_bytes(rank0))
    (tmp_path / "t-0001.bin").write_bytes(dumpi_bytes(rank1))
    f = read_dumpi_file(tmp_path / "t-0000.bin")
    assert [(c.name, c.start_ns, c.end_ns) for c in f.calls] == [
        ("MPI_Init", 100 * 10**9 + 5, 100 * 10**9 + 9), ("MPI_Send", 101 * 10**9 + 10, 102 * 10**9 + 20),
        ("MPI_Finalize", 0, 0)]
    assert f.calls[0].args == {"argc": 2, "argv": ("./app", "-x")}
    assert f.calls[1].args == {"count": 24, "datatype": 5, "dest": 1, "tag": 7, "comm": 2}
    assert f.header.version == (1, 1, 0) and f.header.hostname == "h"
    trace = read_trace(tmp_path)
    assert [(c.kind, c.peer, c.tag, c.bytes) for c in trace.ranks[0][1:2]] == [("send", 1, 7, 24)]
    # the datatype table is absent: MPI_DOUBLE (14) has its usual 8 bytes
    assert [(c.kind, c.peer, c.bytes, c.start_ns, c.end_ns) for c in trace.ranks[1]] == [
        ("recv", 0, 24, 1e9 + 50, 1e9 + 70)]


def test_old_dumpi_versions(tmp_path):
    """Before 0.6.2 MPI_Init wrote argc twice; before 0.6.3 a status had no tag; before 0.6.6 the index had no
    datatype sizes (and before the perf and address labels, 5 entries)."""
    version = (0, 6, 1)
    records = [record("MPI_Init", i32(1, 1) + chars("a")), recv(0, 2, version=version, perf=False),
               record("MPI_Finalize", b"")]
    (tmp_path / "old.bin").write_bytes(dumpi_bytes(records, version=version, old_index=True))
    f = read_dumpi_file(tmp_path / "old.bin")
    assert [c.name for c in f.calls] == ["MPI_Init", "MPI_Recv", "MPI_Finalize"]
    assert f.calls[0].args["argv"] == ("a",) and f.calls[1].args["count"] == 2
    assert f.datatype_sizes == {} and f.header.version == version


def test_gather_arguments_at_the_root_only(tmp_path):
    """MPI_Gather records its receive arguments only at the root; both forms give the same calls."""
    trace = Trace([[Call("gather", root=1, bytes=16)] for _ in range(3)])
    write_dumpi(trace, tmp_path / "b")
    sizes = [p.stat().st_size for p in sorted((tmp_path / "b").glob("*.bin"))]
    assert sizes[1] == sizes[0] + 6 == sizes[2] + 6  # recvcount (int32) and recvtype (uint16) at the root
    write_dumpi_ascii(trace, tmp_path / "a")
    got, want = read_trace(tmp_path / "b"), read_trace(tmp_path / "a")
    assert got.ranks == want.ranks and {(c.kind, c.bytes, c.root) for r in got.ranks for c in r} == {("gather", 16, 1)}


# --- the bulk read against the field-by-field read -----------------------------------------------------------

def with_datatype_sizes(data: bytes) -> bytes:
    """A dumpi_bytes file with the datatype sizes section sst-dumpi writes (DUMPI's numbers, LP64 sizes)."""
    body, index = data[:-64], list(struct.unpack(">8Q", data[-64:]))
    index[1] = len(body)
    return body + i32(len(DUMPI_DATATYPES), *(size for _, size in DUMPI_DATATYPES)) + struct.pack(">8Q", *index)


def p2p_args(count: int, datatype: int, peer: int, tag: int, comm: int = 2, request: int | None = None) -> bytes:
    return i32(count) + struct.pack(">H", datatype) + i32(peer, tag) + struct.pack(">H", comm) + \
        (i32(request) if request is not None else b"")


def statuses(n: int) -> bytes:
    return i32(n) + (struct.pack(">iiBB", 8, 1, 0, 0) + i32(5)) * n


def mixed_rank(me: int) -> list[bytes]:
    """Records of every call the reader reads in bulk, with unusual masks (no thread, no time, cpu time only,
    statuses), among records it reads field by field (argv, perf counters, a communicator constructor, a
    datatype the table lacks); wall clock seconds 1, 2, ... so that there are gaps to compute."""
    peer, S = 1 - me, 0x03  # S: the mask bits of statuses
    t = iter(range(1, 100))

    def at(**kw) -> dict:
        s = next(t)
        return dict(wall=(s, 10 * me, s, 500), **kw)

    return [
        record("MPI_Init", i32(0), **at()),
        record("MPI_Comm_rank", struct.pack(">H", 2) + i32(me), mask=0),
        record("MPI_Wtime", b"", mask=CPU_TIME),
        record("MPI_Isend", p2p_args(10, 5, peer, 3, request=10), **at(mask=WALL_TIME | CPU_TIME)),
        record("MPI_Irecv", p2p_args(16, 11, -1, -1, request=11), **at(mask=WALL_TIME)),  # ANY source and tag
        record("MPI_Irecv", p2p_args(0, 40, peer, 3, request=12), **at()),  # datatype 40: not in the table
        record("MPI_Isend", p2p_args(8, 5, -2, 0, request=13), mask=0),  # to MPI_PROC_NULL
        record("MPI_Waitall", i32(5) + i32(5, 10, 11, 99, 11, 13) + statuses(5), **at(mask=WALL_TIME | S)),
        record("MPI_Wait", i32(12) + statuses(1), **at(mask=WALL_TIME | THREAD | 0x01)),
        record("MPI_Wait", i32(12), mask=0),  # its request done: a noop
        record("MPI_Send", p2p_args(24, 14, peer, 7), **at(mask=CPU_TIME | WALL_TIME)),
        record("MPI_Recv", p2p_args(3, 14, peer, 7) + statuses(1), **at(mask=WALL_TIME | CPU_TIME | S)),
        record("MPI_Send", p2p_args(2, 5, peer, 8), perf=2, **at(mask=WALL_TIME | PERF_COUNTERS)),
        record("MPI_Recv", p2p_args(0, 40, peer, 8) + statuses(1), **at(mask=WALL_TIME | S)),
        record("MPI_Allreduce", i32(4) + struct.pack(">HBH", 14, 3, 2), **at(mask=WALL_TIME | THREAD)),
        record("MPI_Comm_dup", struct.pack(">HH", 2, 4), **at()),
        record("MPI_Isend", p2p_args(6, 5, peer, 4, comm=4, request=10), **at()),  # handle 10 again, new comm
        record("MPI_Irecv", p2p_args(6, 5, peer, 4, comm=4, request=14), **at(mask=THREAD)),
        record("MPI_Allreduce", i32(1) + struct.pack(">HBH", 5, 3, 4), mask=0),
        record("MPI_Waitall", i32(2) + i32(2, 14, 10), **at()),
        record("MPI_Wtime", b"", **at()),
        record("MPI_Finalize", b"", **at()),
    ]


def test_bulk_read_gives_the_program_of_the_field_by_field_read(tmp_path):
    """Most records are located in one pass and their arguments read with numpy, then converted a run at a time
    (dumpi.py _bulk, dumpi_calls.py _Rank.read): the same Trace and the same lowered program as reading every
    record field by field and converting it alone (_Rank.add)."""
    for r in range(2):
        (tmp_path / f"t-000{r}.bin").write_bytes(with_datatype_sizes(dumpi_bytes(mixed_rank(r))))
    files = [read_dumpi_file(f) for f in rank_files(tmp_path)]
    bulk = {NAMES[fid] for fid in files[0].bulk.fid.tolist() if fid >= 0}
    assert bulk == {"MPI_Comm_rank", "MPI_Wtime", "MPI_Finalize", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Wait",
                    "MPI_Send", "MPI_Recv", "MPI_Allreduce"}
    fast = read_dumpi(tmp_path)
    general = build_trace([RankCalls(f.path, f.calls, f.datatype_sizes, f.rank_calls().locate) for f in files],
                          source="dumpi")
    assert fast.ranks == general.ranks and fast.comms == general.comms and len(fast.ranks[0]) == 22
    assert [c.kind for c in fast.ranks[0]] == [
        "noop", "noop", "noop", "isend", "irecv", "irecv", "isend", "waitall", "wait", "noop", "send", "recv", "send",
        "recv", "allreduce", "noop", "isend", "irecv", "allreduce", "waitall", "noop", "noop"]
    opt = Options(cycle_ns=0.5)
    want = lower(general, opt)
    got = lower(fast, opt)
    for name in ("ops", "op_begin", "op_end", "req_list", "counts", "call_counts", "recorded_wait"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert (got.ops[:, 0] == 0).sum() > 10  # computation between the calls


def test_waits_complete_the_requests_of_the_field_by_field_read(tmp_path):
    """The bulk read matches waits to requests a run of records at a time, per handle (dumpi_calls.py
    complete_run): random isends, irecvs, waits and waitalls on a few handles (reused, named twice, never made,
    active across the records read field by field) complete what converting each record alone completes."""
    rng = np.random.default_rng(7)
    for r in range(2):
        records = [record("MPI_Init", i32(0), mask=0)]
        for x, h in zip(rng.random(400).tolist(), rng.integers(1, 7, 400).tolist()):
            if x < 0.3:
                records.append(record("MPI_Isend", p2p_args(8, 5, 1 - r, 0, request=h), mask=0))
            elif x < 0.4:  # datatype 40 is not in the table: read field by field
                records.append(record("MPI_Irecv", p2p_args(0, 40 if x < 0.35 else 5, 1 - r, 0, request=h), mask=0))
            elif x < 0.6:
                records.append(record("MPI_Wait", i32(h), mask=0))
            else:
                named = rng.integers(1, 7, rng.integers(0, 4)).tolist()
                records.append(record("MPI_Waitall", i32(len(named)) + i32(len(named), *named), mask=0))
        records.append(record("MPI_Finalize", b"", mask=0))
        (tmp_path / f"t-000{r}.bin").write_bytes(with_datatype_sizes(dumpi_bytes(records)))
    files = [read_dumpi_file(f) for f in rank_files(tmp_path)]
    fast = read_dumpi(tmp_path)
    general = build_trace([RankCalls(f.path, f.calls, f.datatype_sizes, f.rank_calls().locate) for f in files],
                          source="dumpi")
    assert fast.ranks == general.ranks
    assert sum(c.kind == "noop" and c.name == "MPI_Wait" for c in fast.ranks[0]) > 10  # waits completing nothing
    assert sum(len(c.requests) for c in fast.ranks[0]) > 50


# --- unknown calls -------------------------------------------------------------------------------------------

def test_unknown_calls_are_refused_or_skipped_as_in_ascii(tmp_path):
    """A call DUMPI records but fastnet does not model (MPI_Put) is an error naming it, or skipped and counted
    with skip_unknown, the same for both DUMPI forms."""
    ranks = [[Call("unknown", "MPI_Put"), Call("send", peer=1, bytes=64)], [Call("recv", peer=0, bytes=64)]]
    trace = Trace(ranks + [[] for _ in range(14)])
    write_dumpi(trace, tmp_path / "bin")
    write_dumpi_ascii(trace, tmp_path / "txt")
    results = []
    for form in ("bin", "txt"):
        workload = {"kind": "trace", "file": str(tmp_path / form)}
        with pytest.raises(ConfigError, match="MPI_Put.*unsupported MPI call.*skip_unknown"):
            fastnet.run({**TORUS, "workload": workload})
        results.append(fastnet.run({**TORUS, "workload": {**workload, "skip_unknown": True}}))
    assert [ds.mpi_calls_skipped.item() for ds in results] == [1, 1]
    assert results[0].execution_cycles.item() == results[1].execution_cycles.item()


def test_function_ids_without_a_layout_are_refused(tmp_path):
    """MPI_Pcontrol (128) writes no record of its own, and ids past DUMPI's end nothing at all: a record with
    either cannot be measured, so the file is refused at that record."""
    for fid, words in ((IDS["MPI_Pcontrol"], "MPI_Pcontrol"), (999, "function id 999 has no DUMPI record layout")):
        (tmp_path / "x.bin").write_bytes(dumpi_bytes([record("MPI_Init", i32(0)), record("", b"", fid=fid)]))
        with pytest.raises(TraceError, match=rf"x\.bin:byte {16 + 17 + 4}: .*{words}"):
            read_trace(tmp_path / "x.bin")


# --- truncated and corrupt files -----------------------------------------------------------------------------

def ring_files(tmp_path: Path) -> list[Path]:
    n = 4
    ranks = [[Call("noop", "MPI_Init"), Call("isend", peer=(r + 1) % n, bytes=100, request=0),
              Call("recv", peer=(r - 1) % n, bytes=100), Call("waitall", requests=(0,)), Call("noop", "MPI_Finalize")]
             for r in range(n)]
    return write_dumpi(Trace(ranks), tmp_path)


def test_truncated_file_is_a_one_line_error(tmp_path):
    paths = ring_files(tmp_path)
    data = paths[2].read_bytes()
    paths[2].write_bytes(data[:len(data) // 2])
    with pytest.raises(TraceError, match=rf"trace-0002\.bin:byte {len(data) // 2}: no DUMPI index .*truncated"):
        read_trace(tmp_path)


def test_corrupt_array_length_names_the_offset(tmp_path):
    paths = ring_files(tmp_path)
    waitall = next(c for c in read_dumpi_file(paths[1]).calls if c.name == "MPI_Waitall")
    at = waitall.pos + 17 + 4  # id, mask, thread, wall time; then count; then the requests' length
    data = bytearray(paths[1].read_bytes())
    data[at:at + 4] = struct.pack(">i", 2**30)
    paths[1].write_bytes(bytes(data))
    with pytest.raises(TraceError, match=rf"trace-0001\.bin:byte {at + 4}: needs {2**32} bytes .*corrupt"):
        read_trace(tmp_path)


def test_not_a_dumpi_file(tmp_path):
    (tmp_path / "x-0000.bin").write_bytes(b"\x00" * 100)
    with pytest.raises(TraceError, match=r"x-0000\.bin:byte 0: not a binary DUMPI file"):
        read_trace(tmp_path)


def test_cli_reports_a_corrupt_trace_in_one_line(tmp_path):
    paths = ring_files(tmp_path)
    data = bytearray(paths[0].read_bytes())
    data[16:18] = struct.pack(">H", 999)  # the first record's function id
    paths[0].write_bytes(bytes(data))
    result = CliRunner().invoke(app, ["run", "--set", "topology.kind='torus'", "--set", "topology.dims=[4, 4]",
                                      "--set", "workload.kind='trace'", "--set", f"workload.file='{tmp_path}'"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "trace-0000.bin:byte 16: function id 999" in lines[0]
