"""Read a binary DUMPI trace (sst-dumpi's `PREFIX-NNNN.bin`, one per rank, and `PREFIX.meta`) into a `Trace`.

A `.bin` file, all integers big-endian, offsets from the start of the file (the index gives them):

| part | what |
|---|---|
| at 0 | magic 0xffaadd44554d5049 |
| body | int32 cpu and int32 wall time bias (seconds), then the records, ended by function id 293 |
| header | version (3 uint8), start time (uint64), hostname, username, mesh coordinates, mesh size (below) |
| footer | magic 0xf007fee7 (uint64); per function id the times called, then the times not recorded (uint32) |
| perf labels | int32 count, then the perf counters' names (uint16 length + bytes) |
| datatype sizes | int32 count, then the size (int32) of each DUMPI datatype number |
| last 64 bytes | the index: the magic, then the offsets (uint64) of the other parts (below) |

Header strings are a uint16 length and the bytes; the mesh coordinates an int32 count and int32s, and the mesh
size likewise only when there are coordinates. The index lists the datatype sizes, function addresses, perf
labels, header, body, footer and keyval parts; older files lack the first ones (5 uint64 in the oldest).

A record: function id (uint16), mask (uint8), then as the mask says: thread (uint16, bit 0x40), cpu time (bit
0x04) and wall time (bit 0x08), each as start and stop of (uint16 seconds past the bias, uint32 ns), perf
counters (bit 0x80: uint8 count, then count x (int64 at entry, int64 at exit); sst-dumpi's reader takes the count
from the perf labels, which the tracer writes equal); then the call's arguments, in the order and sizes
`dumpi_layout.py` gives for its function id (statuses only when the mask has bit 0x01 or 0x02).

Most records of a large trace are the calls dumpi_calls.py converts a run at a time (BULK_KINDS: sends, receives,
waits, allreduce, and the calls it needs only the name of): those are only located as the body is scanned, and
their arguments read afterwards with numpy, all records of one function id and mask at once (`_bulk`); the rest
are read field by field into DumpiCalls, as are all records of the ASCII form.

Every function DUMPI records has a layout, so every record is read: calls fastnet maps become their `Call`
kinds, the rest `noop` or `unknown` by their names (names.py), exactly as the ASCII form's (dumpi_calls.py does
both). Function enter / exit records (profiled user functions, MPI_Pcontrol annotations) are not MPI calls and
are skipped. A function id with no layout (beyond DUMPI's, or MPI_Pcontrol's, which has no record) is an error:
its record's length is unknown, so nothing after it can be read. Times are the wall clock, as dumpi2ascii prints
them.
"""

from __future__ import annotations

import functools
import re
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastnet.errors import TraceError
from fastnet.mpi.calls import Trace
from fastnet.mpi.traces.dumpi_calls import BULK_COLUMNS, BULK_KINDS, NAME_ONLY, Bulk, DumpiCall, RankCalls, Value, \
    build_trace, spans
from fastnet.mpi.traces.dumpi_layout import ALL_FUNCTIONS, END_OF_STREAM, FUNCTION_ENTER, FUNCTION_EXIT, LAYOUTS, \
    NAMES, Field
from fastnet.mpi.traces.dumpi_scan import locate_records

MAGIC = 0xFFAADD44554D5049  # the first 8 bytes of every .bin file, and of its index
MAGIC_BYTES = MAGIC.to_bytes(8, "big")
FOOTER_MAGIC = 0xF007FEE7
INDEX_NAMES = ("sizes", "addresses", "perf_labels", "header", "body", "footer", "keyval")

# The bits of a record's mask (dumpi/common/settings.h).
STATUSES = 0x03
CPU_TIME = 0x04
WALL_TIME = 0x08
THREAD = 0x40
PERF_COUNTERS = 0x80

RANK_FILE = re.compile(r"^(?!\._)(?P<prefix>.*)-(?P<rank>\d+)\.bin$")  # (not a macOS ._ resource fork)

_SCALAR = {"i": struct.Struct(">i"), "q": struct.Struct(">q"), "h": struct.Struct(">H"), "b": struct.Struct(">B")}
_ELEMENT = {"I": "i", "H": "H", "B": "B"}  # array code -> struct code of its elements
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U64 = struct.Struct(">Q")
_TIME = struct.Struct(">HIHI")  # start seconds, start ns, stop seconds, stop ns
_HEAD = struct.Struct(">BBBQ")  # version, start time


@dataclass
class Header:
    version: tuple[int, int, int] = (0, 0, 0)
    start_time: int = 0  # seconds since the epoch
    hostname: str = ""
    username: str = ""
    mesh_coords: tuple[int, ...] = ()
    mesh_size: tuple[int, ...] = ()


@dataclass
class DumpiFile:
    """One rank's .bin, read: what the file says besides its calls is kept for tests and tools."""
    path: Path
    header: Header
    general: list[DumpiCall]  # the records not read in bulk, in file order
    datatype_sizes: dict[int, int]
    call_counts: dict[str, int] = field(default_factory=dict)  # the footer: calls the program made, by name
    ignored_counts: dict[str, int] = field(default_factory=dict)  # ... and DUMPI did not record
    records: dict[str, int] = field(default_factory=dict)  # records read, by name
    bulk: Bulk | None = None  # every record, those of `general` in their places

    @property
    def calls(self) -> list[DumpiCall]:
        """Every record as a DumpiCall (those read in bulk read again), in file order."""
        general = iter(self.general)
        b = self.bulk
        return [next(general) if fid < 0 else b.reread(pos) for fid, pos in zip(b.fid.tolist(), b.pos.tolist())] if b \
            else self.general

    def rank_calls(self) -> RankCalls:
        return RankCalls(self.path, self.general, self.datatype_sizes, lambda pos: f"{self.path}:byte {pos}",
                         self.bulk)


def read_dumpi(path: str | Path) -> Trace:
    """Read a binary DUMPI trace: its `.meta` file, the directory holding it, or one `PREFIX-NNNN.bin` (all of
    its siblings with the same prefix are read; NNNN is the rank)."""
    files = [read_dumpi_file(f) for f in rank_files(Path(path))]
    trace = build_trace([f.rank_calls() for f in files], source="dumpi")
    trace.not_recorded = dict(sum((Counter(f.ignored_counts) for f in files), Counter()))
    return trace


def rank_files(p: Path) -> list[Path]:
    """The per-rank .bin files of the trace `p` names, in rank order."""
    if not p.exists():
        raise TraceError(p, "no such file or directory")
    meta: Path | None = None
    if p.is_dir():
        metas = sorted(m for m in p.glob("*.meta") if not m.name.startswith("._"))  # (macOS resource forks)
        if len(metas) > 1:
            raise TraceError(p, f"holds {len(metas)} DUMPI .meta files ({', '.join(m.name for m in metas)}); "
                                "name one")
        if metas:
            meta = metas[0]
        else:
            prefixes = sorted({m["prefix"] for f in p.iterdir() if (m := RANK_FILE.match(f.name))})
            if len(prefixes) != 1:
                raise TraceError(p, "holds no binary DUMPI files (PREFIX.meta, PREFIX-NNNN.bin)" if not prefixes
                                 else f"holds .bin files of several traces ({', '.join(prefixes)}); name one")
            directory, prefix = p, prefixes[0]
    elif p.suffix == ".meta":
        meta = p
    else:
        m = RANK_FILE.match(p.name)
        if m is None:
            return [p]  # a lone file not named PREFIX-NNNN.bin: a one-rank trace
        directory, prefix = p.parent, m["prefix"]
        meta = directory / f"{prefix}.meta" if (directory / f"{prefix}.meta").exists() else None
    if meta is not None:  # the .bin files are fileprefix-NNNN.bin, relative to the .meta's directory
        where = meta.parent / read_meta(meta).get("fileprefix", meta.stem)
        if not where.parent.is_dir():  # an absolute prefix from the machine it was traced on
            where = meta.parent / where.name
        directory, prefix = where.parent, where.name
    by_rank = {int(m["rank"]): f for f in directory.iterdir() if (m := RANK_FILE.match(f.name))
               and m["prefix"] == prefix}
    numprocs = len(by_rank)
    if meta:
        given = read_meta(meta).get("numprocs", str(numprocs))
        if not given.isdigit():
            raise TraceError(meta, f"numprocs={given!r} is not a number of ranks")
        numprocs = int(given)
    if not by_rank:
        raise TraceError(directory / f"{prefix}-NNNN.bin", "no such files")
    missing = sorted(set(range(max(numprocs, max(by_rank) + 1))) - set(by_rank))
    if missing:
        raise TraceError(directory / f"{prefix}-NNNN.bin", f"ranks {missing[:8]} have no file"
                         + (f" ({meta.name} says numprocs={numprocs})" if meta else ""))
    if len(by_rank) != numprocs:
        raise TraceError(meta, f"numprocs={numprocs} but there are files for {len(by_rank)} ranks")
    return [by_rank[r] for r in range(len(by_rank))]


def read_meta(meta: Path) -> dict[str, str]:
    """The `key=value` lines of a .meta file (hostname, numprocs, username, startime, fileprefix, version)."""
    out = {}
    for line in meta.read_text(errors="replace").splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key.strip()] = value.strip()
    return out


def read_dumpi_file(path: Path) -> DumpiFile:
    """Read one rank's .bin."""
    data = memoryview(path.read_bytes())
    r = _Cursor(path, data, 0, len(data))
    if len(data) < 8 or bytes(data[:8]) != MAGIC_BYTES:
        raise r.fail("not a binary DUMPI file: it does not start with DUMPI's magic number", 0)
    index = _index(r)
    header = _header(r, index["header"])
    sizes = _datatype_sizes(r, index["sizes"])
    called, ignored = _footer(r, index["footer"])
    out = DumpiFile(path, header, [], sizes, called, ignored)
    _body(r, index, header.version, out)
    return out


class _Cursor:
    """A read position in one file's bytes, between `pos` and `end`; every read checks that the bytes are there, so
    that a truncated or corrupt file is a TraceError naming the file and the offset."""

    def __init__(self, path: Path, data: memoryview, pos: int, end: int):
        self.path = path
        self.data = data
        self.pos = pos
        self.end = end

    def fail(self, message: str, at: int | None = None) -> TraceError:
        return TraceError(f"{self.path}:byte {self.pos if at is None else at}", message)

    def at(self, pos: int, end: int | None = None) -> _Cursor:
        """A cursor on the same bytes at `pos` (an offset the index gives)."""
        if not 0 < pos < len(self.data):
            raise self.fail(f"the index points at byte {pos}, outside the file ({len(self.data)} bytes): corrupt")
        return _Cursor(self.path, self.data, pos, len(self.data) if end is None else end)

    def take(self, st: struct.Struct) -> tuple:
        if self.pos + st.size > self.end:
            raise self.fail(f"needs {st.size} bytes but {self.end - self.pos} are left before byte {self.end}: "
                            "truncated or corrupt")
        values = st.unpack_from(self.data, self.pos)
        self.pos += st.size
        return values

    def one(self, st: struct.Struct) -> int:
        return self.take(st)[0]

    def array(self, element: str) -> tuple[int, ...]:
        """An int32 count, then that many elements (struct code `element`); a count <= 0 is an empty array."""
        n = self.one(_I32)
        return self.take(struct.Struct(f">{n}{element}")) if n > 0 else ()

    def chars(self) -> str:
        """A string of the arguments: int32 length, then the bytes."""
        return bytes(self.array("B")).decode(errors="replace")

    def string(self) -> str:
        """A string of the header: uint16 length, then the bytes."""
        return bytes(self.take(struct.Struct(f">{self.one(_U16)}B"))).decode(errors="replace")


def _index(r: _Cursor) -> dict[str, int]:
    """The index at the end of the file: section name -> offset (0: the file has no such section)."""
    n = len(r.data)
    # The index grew at its front over DUMPI's versions (8 uint64 since 0.6.6, 5 in the oldest): the magic
    # marks where it starts.
    for entries in (8, 7, 6, 5):
        start = n - 8 * entries
        if start >= 8 and _U64.unpack_from(r.data, start)[0] == MAGIC:
            offsets = struct.unpack_from(f">{entries - 1}Q", r.data, start + 8)
            index = dict.fromkeys(INDEX_NAMES, 0) | dict(zip(INDEX_NAMES[8 - entries:], offsets))
            index["index"] = start
            return index
    raise r.fail("no DUMPI index at the end of the file (the tracer writes it in MPI_Finalize): truncated, or the "
                 "program did not finish", n)


def _header(r: _Cursor, at: int) -> Header:
    if at == 0:
        return Header()
    c = r.at(at)
    major, minor, patch, start_time = c.take(_HEAD)
    version = (major, minor, patch)
    hostname, username = c.string(), c.string()
    coords = c.array("i")
    size = c.array("i") if coords and version >= (0, 5, 0) else ()  # the mesh size came in 0.5
    return Header(version, start_time, hostname, username, coords, size)


def _datatype_sizes(r: _Cursor, at: int) -> dict[int, int]:
    return dict(enumerate(r.at(at).array("i"))) if at else {}


def _footer(r: _Cursor, at: int) -> tuple[dict[str, int], dict[str, int]]:
    """Per function name: the times the program called it, and the times DUMPI did not record it."""
    if at == 0:
        return {}, {}
    c = r.at(at)
    if c.one(_U64) != FOOTER_MAGIC:
        raise c.fail("the footer does not start with DUMPI's footer magic number: corrupt", at)
    counts = c.take(struct.Struct(f">{2 * (ALL_FUNCTIONS + 1)}I"))
    called, ignored = counts[:ALL_FUNCTIONS], counts[ALL_FUNCTIONS + 1:-1]  # the last of each: all functions
    return ({n: k for n, k in zip(NAMES, called) if k}, {n: k for n, k in zip(NAMES, ignored) if k})


def _body(r: _Cursor, index: dict[str, int], version: tuple[int, int, int], out: DumpiFile) -> None:
    """The call stream: records from the body until END_OF_STREAM (or the next section). The records of the common
    calls (_bulk_plan) are only located here, by a compiled walk (dumpi_scan.py), and their arguments read
    afterwards with numpy, all records of one layout at once (_bulk); the others become DumpiCalls as they come."""
    body = index["body"]
    end = min([v for k, v in index.items() if v > body and k != "body"])
    c = r.at(body, end)
    _cpu_bias, wall_bias = c.take(struct.Struct(">ii"))
    data, calls = np.frombuffer(c.data, np.uint8), out.general
    offsets = np.zeros(max(16, (c.end - c.pos) // 16), np.int64)  # every record's, in file order (grown as needed)
    n = 0
    general: list[int] = []  # the places in `offsets` of out.general's records
    plans = _Plans(version)
    while True:
        c.pos, n = locate_records(data, c.pos, c.end, plans.size, plans.requests, plans.status, offsets, n)
        if n == len(offsets):
            offsets = np.concatenate((offsets, np.zeros(n, np.int64)))
            continue
        if plans.plan(data, c.pos, c.end):
            continue  # a key met for the first time: the walk goes on if its records are read in bulk
        if c.pos >= c.end:
            raise c.fail("the call stream has no end marker before the next section: corrupt")
        call = _record(c, wall_bias, version)  # read field by field (or a truncated or corrupt record, whose
        # checks name the offset)
        if call is False:
            out.bulk = _bulk(c.data, offsets[:n], general, version, wall_bias,
                             functools.partial(_reread, c, wall_bias, version))
            fids, k = np.unique(out.bulk.fid[out.bulk.fid >= 0], return_counts=True)
            for fid, m in zip(fids.tolist(), k.tolist()):
                out.records[NAMES[fid]] = out.records.get(NAMES[fid], 0) + m
            return
        if call is not None:
            out.records[call.name] = out.records.get(call.name, 0) + 1
            general.append(n)
            offsets[n] = call.pos
            n += 1
            calls.append(call)


class _Plans:
    """The tables locate_records reads (dumpi_scan.py), by key (function id << 8 | mask): each key's _bulk_plan
    filled in the first time the walk meets it."""

    def __init__(self, version: tuple[int, int, int]):
        self.version = version
        self.size = np.full(ALL_FUNCTIONS << 8, -1, np.int64)
        self.requests = np.zeros(ALL_FUNCTIONS << 8, np.int64)
        self.status = np.zeros(ALL_FUNCTIONS << 8, np.int64)

    def plan(self, data: np.ndarray, pos: int, end: int) -> bool:
        """Plan the key of the record at `pos` if it has none yet; whether it did."""
        if pos + 4 > end:
            return False
        key = int(data[pos]) << 16 | int(data[pos + 1]) << 8 | int(data[pos + 2])
        if key >= len(self.size) or self.size[key] >= 0:
            return False
        plan = _bulk_plan(key >> 8, self.version, key & 0xFF)
        if plan is not None:
            self.size[key], self.requests[key], self.status[key] = plan.size, plan.requests, plan.status
        else:
            self.size[key] = 0
        return True


def _record(c: _Cursor, wall_bias: int, version: tuple[int, int, int]) -> DumpiCall | None | bool:
    """The record at c.pos read field by field (one of scalars only with one struct, _plan): a DumpiCall, None
    for a function enter / exit record (not an MPI call), False for the end of the stream."""
    pos, data = c.pos, c.data
    if pos + 3 <= c.end:
        fid, mask = _FID_MASK.unpack_from(data, pos)
        plan = _plan(fid, version, mask)
        if plan is not None and pos + 3 + plan[0].size <= c.end:
            st, names, wall = plan
            values = st.unpack_from(data, pos + 3)
            c.pos = pos + 3 + st.size
            start_ns = end_ns = 0
            if wall >= 0:
                start_ns = (values[wall] + wall_bias) * 1_000_000_000 + values[wall + 1]
                end_ns = (values[wall + 2] + wall_bias) * 1_000_000_000 + values[wall + 3]
            return DumpiCall(NAMES[fid], pos, start_ns, end_ns, dict(zip(names, values[len(values) - len(names):])))
    fid = c.one(_U16)
    if fid in (END_OF_STREAM, ALL_FUNCTIONS):
        return False
    if fid not in LAYOUTS:
        raise c.fail(f"function id {fid} has no DUMPI record layout (ids 0..{ALL_FUNCTIONS - 1} are MPI "
                     f"functions{', and it is MPI_Pcontrol, which has none' if fid < ALL_FUNCTIONS else ''}): "
                     "corrupt, or written by a DUMPI this reader does not know", pos)
    mask, start_ns, end_ns = _preamble(c, wall_bias)
    args = _arguments(c, fid, version, mask)
    if fid in (FUNCTION_ENTER, FUNCTION_EXIT):
        return None
    return DumpiCall(NAMES[fid], pos, start_ns, end_ns, args)


def _reread(c: _Cursor, wall_bias: int, version: tuple[int, int, int], pos: int) -> DumpiCall:
    """The DumpiCall of a record _body read in bulk, read again field by field (for tools, and for a record whose
    arguments the bulk conversion does not take: dumpi_calls.py _Rank.read)."""
    c.pos = pos
    call = _record(c, wall_bias, version)
    assert isinstance(call, DumpiCall)
    return call


class _BulkPlan(NamedTuple):
    """Where a record of one function id and mask keeps what the common calls need (byte offsets from its start)."""
    size: int  # bytes up to the requests (the int32 count included) or statuses; with neither, the whole record
    requests: int  # offset of the int32 count of Waitall's requests, 0: none
    status: int  # bytes per status when the mask records them (they come last), 0: none
    wall: int  # offset of the wall clock's (uint16 s, uint32 ns, uint16 s, uint32 ns), -1: none
    dtype: np.dtype  # the fixed part: the arguments it keeps by Bulk column, the wall clock (s0, ns0, s1, ns1)
    # and the requests' count


@functools.lru_cache(maxsize=None)
def _bulk_plan(fid: int, version: tuple[int, int, int], mask: int) -> _BulkPlan | None:
    """The plan of a record that _body reads in bulk: a call dumpi_calls.py converts in bulk (BULK_KINDS: sends,
    receives, waits, allreduce, and the calls it needs only the name of), whose layout is scalars, then (Waitall)
    the requests array, then the statuses; None for any other record (perf counters, strings, other arrays,
    fields only at the root, statuses in the middle), which it reads field by field."""
    if fid not in LAYOUTS or fid >= ALL_FUNCTIONS or NAMES[fid] not in BULK_KINDS or mask & PERF_COUNTERS:
        return None
    size, wall = 3 + (2 if mask & THREAD else 0) + (12 if mask & CPU_TIME else 0), -1
    if mask & WALL_TIME:
        wall, size = size, size + 12
    requests = status = 0
    fields = [(name, wall + off, code) for name, off, code in (("s0", 0, "h"), ("ns0", 2, "I"), ("s1", 6, "h"),
                                                                ("ns1", 8, "I"))] if wall >= 0 else []
    layout = [f for f in LAYOUTS[fid] if f.present(version)]
    for i, f in enumerate(layout):
        last = i == len(layout) - 1
        if f.at_root:
            return None
        if f.code == "s":
            if not last:
                return None
            status = (14 if version >= (0, 6, 3) else 10) if mask & STATUSES else 0
        elif f.code == "I" and f.name == "requests" and (last or layout[i + 1].code == "s"):
            fields.append(("requests", size, "i"))
            requests, size = size, size + 4
        elif f.code in _SCALAR:
            if f.name in BULK_COLUMNS and BULK_KINDS[NAMES[fid]] != NAME_ONLY:
                fields.append((BULK_COLUMNS[f.name], size, f.code))
            size += _SCALAR[f.code].size
        else:
            return None
    dtype = np.dtype({"names": [n for n, _, _ in fields], "formats": [_BE[code] for _, _, code in fields],
                      "offsets": [off for _, off, _ in fields], "itemsize": size})
    return _BulkPlan(size, requests, status, wall, dtype)


_BE = {"i": ">i4", "q": ">i8", "h": ">u2", "b": "u1", "I": ">u4"}  # layout code -> numpy type (I here: uint32 ns)


def _bulk(data: memoryview, offsets: np.ndarray, general: list[int], version: tuple[int, int, int], wall_bias: int,
          reread) -> Bulk:
    """The Bulk columns of a rank's records: for each layout (function id and mask) its records' fields taken
    from the bytes at once."""
    u8 = np.frombuffer(data, np.uint8)
    window = np.lib.stride_tricks.sliding_window_view  # window(u8, k)[i]: the k bytes from i, without copying
    at = np.array(offsets, np.int64)
    key = (u8[at].astype(np.int64) << 16) | (u8[at + 1].astype(np.int64) << 8) | u8[at + 2]  # fid << 8 | mask
    key[general] = -1
    n = len(key)
    cols = {name: np.zeros(n, np.int64) for name in ("start", "end", *dict.fromkeys(BULK_COLUMNS.values()))}
    n_requests = np.zeros(n, np.int64)
    waitalls = []  # (records, their requests one after the other) of each layout with requests

    for k in np.unique(key[key >= 0]).tolist():
        plan = _bulk_plan(k >> 8, version, k & 0xFF)
        rows = np.flatnonzero(key == k)
        pos = at[rows]
        rec = window(u8, plan.dtype.itemsize)[pos].view(plan.dtype)[:, 0]  # the fixed parts
        for name in plan.dtype.names:
            if name in cols:
                cols[name][rows] = rec[name]
        if plan.wall >= 0:
            cols["start"][rows] = (rec["s0"] + np.int64(wall_bias)) * 1_000_000_000 + rec["ns0"]
            cols["end"][rows] = (rec["s1"] + np.int64(wall_bias)) * 1_000_000_000 + rec["ns1"]
        if plan.requests:
            count = np.maximum(rec["requests"].astype(np.int64), 0)
            first = np.repeat(pos + plan.requests + 4 - 4 * np.cumsum(np.concatenate(([0], count[:-1]))), count)
            flat = window(u8, 4)[first + 4 * np.arange(count.sum())].view(">i4")[:, 0]
            waitalls.append((rows, flat))
            n_requests[rows] = count
    requests_at = np.zeros(n + 1, np.int64)
    np.cumsum(n_requests, out=requests_at[1:])
    requests = np.zeros(requests_at[-1], np.int64)
    for rows, flat in waitalls:
        requests[spans(requests_at[rows], n_requests[rows])] = flat
    fid = np.where(key >= 0, key >> 8, -1)
    return Bulk(fid, at, **cols, requests_at=requests_at, requests=requests, reread=reread)


_FID_MASK = struct.Struct(">HB")


@functools.lru_cache(maxsize=None)
def _plan(fid: int, version: tuple[int, int, int], mask: int) -> tuple[struct.Struct, tuple[str, ...], int] | None:
    """A record of function `fid` with this mask read with one struct, when its preamble has no perf counters and
    its arguments are scalars only (statuses the mask leaves out take no bytes): the struct (of what follows the
    mask), the argument names of its last values, and the place of the wall clock's four values (-1: none).
    None for any other record (END_OF_STREAM, an unknown id, arrays, strings, fields only at the root): _body
    reads those field by field, with its checks."""
    if fid in (END_OF_STREAM, ALL_FUNCTIONS, FUNCTION_ENTER, FUNCTION_EXIT) or fid not in LAYOUTS or \
            mask & PERF_COUNTERS:
        return None
    fmt, wall = ">", -1
    if mask & THREAD:
        fmt += "H"
    if mask & CPU_TIME:
        fmt += "HIHI"
    if mask & WALL_TIME:
        wall = len(fmt) - 1
        fmt += "HIHI"
    names: tuple[str, ...] = ()
    for step in _steps(fid, version):
        if isinstance(step, _Run):
            names += step.names
            fmt += step.st.format[1:]
        elif step.code != "s" or mask & STATUSES:
            return None
    return struct.Struct(fmt), names, wall


def _preamble(c: _Cursor, wall_bias: int) -> tuple[int, int, int]:
    """A record's mask and what it says the record carries before its arguments; returns the mask and the wall
    clock's start and stop in ns (0 without wall time, as dumpi2ascii prints them)."""
    mask = c.one(_SCALAR["b"])
    if mask & THREAD:
        c.take(_U16)
    if mask & CPU_TIME:
        c.take(_TIME)
    start_ns = end_ns = 0
    if mask & WALL_TIME:
        s0, ns0, s1, ns1 = c.take(_TIME)
        start_ns = (s0 + wall_bias) * 1_000_000_000 + ns0
        end_ns = (s1 + wall_bias) * 1_000_000_000 + ns1
    if mask & PERF_COUNTERS:
        n = c.one(_SCALAR["b"])
        c.take(struct.Struct(f">{16 * n}x"))  # n x (int64 at entry, int64 at exit)
    return mask, start_ns, end_ns


@dataclass(frozen=True)
class _Run:
    """Consecutive scalar fields of a layout, read with one struct."""
    names: tuple[str, ...]
    st: struct.Struct


@functools.lru_cache(maxsize=None)
def _steps(fid: int, version: tuple[int, int, int]) -> tuple[_Run | Field, ...]:
    """The layout of function `fid` in a file of this version: runs of scalars, and the other fields."""
    steps: list[_Run | Field] = []
    for f in LAYOUTS[fid]:
        if not f.present(version):
            continue
        if f.code in _SCALAR and not f.at_root:
            if steps and isinstance(steps[-1], _Run):
                last = steps.pop()
                steps.append(_Run(last.names + (f.name,), struct.Struct(last.st.format + _SCALAR[f.code].format[1:])))
            else:
                steps.append(_Run((f.name,), _SCALAR[f.code]))
        else:
            steps.append(f)
    return tuple(steps)


def _arguments(c: _Cursor, fid: int, version: tuple[int, int, int], mask: int) -> dict[str, Value]:
    """A record's arguments by DUMPI's names (statuses are skipped: nothing fastnet maps reads them)."""
    args: dict[str, Value] = {}
    for step in _steps(fid, version):
        if isinstance(step, _Run):
            args.update(zip(step.names, c.take(step.st)))
        elif step.at_root and args.get("commrank", args.get("oldcommrank")) != args["root"]:
            continue
        elif step.code == "s":
            _statuses(c, mask, version)
        else:
            args[step.name] = _argument(c, step.code, args)
    return args


def _argument(c: _Cursor, code: str, args: dict[str, Value]) -> Value:
    """One argument of a layout code other than statuses (dumpi_layout.py's table)."""
    if code in _SCALAR:
        return c.one(_SCALAR[code])
    if code in _ELEMENT:
        return c.array(_ELEMENT[code])
    if code == "c":
        return c.chars()
    if code == "V":  # MPI_Init's argv: as many strings as argc
        argc = args["argc"]
        return tuple(c.chars() for _ in range(argc if isinstance(argc, int) else 0))
    n = max(c.one(_I32), 0)
    if code == "J":  # rows of ints, flattened (Group_range_incl's triplets)
        return tuple(x for _ in range(n) for x in c.array("i"))
    if code == "C":
        return tuple(c.chars() for _ in range(n))
    if code == "K":  # rows of strings, flattened
        return tuple(s for _ in range(n) for s in _argument(c, "C", args))
    raise ValueError(f"unknown layout code {code!r}")


def _statuses(c: _Cursor, mask: int, version: tuple[int, int, int]) -> None:
    """Skip a status or an array of them: in the file only when the record's mask says so."""
    if mask & STATUSES:
        n = c.one(_I32)
        each = 14 if version >= (0, 6, 3) else 10  # bytes, source, cancelled, error; the tag since 0.6.3
        if n > 0:
            c.take(struct.Struct(f">{n * each}x"))
