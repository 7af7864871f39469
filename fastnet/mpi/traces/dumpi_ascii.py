"""Read the text sst-dumpi's `dumpi2ascii -a` prints for a DUMPI trace (one file per rank) into a `Trace`.

Each MPI call is a block:

    MPI_Irecv entering at walltime 1.213451092, cputime 0.237398000 seconds in thread 0.
    int count=89
    MPI_Datatype datatype=14 (MPI_DOUBLE)
    int source=1
    ...
    MPI_Irecv returning at walltime 1.213466411, cputime 0.237413000 seconds in thread 0.

and the file ends with the trace's own datatype table (`Datatype 14 (MPI_DOUBLE) has size 8`). Each block becomes
a `DumpiCall` (an argument's value is its number: `14 (MPI_DOUBLE)` is 14, `[2]` is (2,), `<IGNORED>` is ()),
and dumpi_calls.py turns them into `Call`s as it does the binary form's.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from fastnet.errors import TraceError
from fastnet.mpi.calls import Trace
from fastnet.mpi.traces.dumpi_calls import DumpiCall, RankCalls, Value, build_trace

ASCII_RANK_FILE = re.compile(r"^(?!\._)(?P<prefix>.*)-(?P<rank>\d+)\.txt$")  # (not a macOS ._ resource fork)

_ENTER = re.compile(r"^(MPIO?_\w+) entering at walltime (-?\d+)\.(\d+)")
_RETURN = re.compile(r"^(MPIO?_\w+) returning at walltime (-?\d+)\.(\d+)")
_ARG = re.compile(r"^(\S+) (\w+)((?:\[-?\d+\])*)=(.*)$")
_DTYPE = re.compile(r"^Datatype (\d+) \((.*)\) has size (-?\d+)$")
_IGNORED = re.compile(r"^(MPIO?_\w+) called \d+ times and ignored (\d+) times$")  # the footer's counts
_INT = re.compile(r"\s*(-?\d+)")
_INTS = re.compile(r"-?\d+")


def read_dumpi_ascii(path: str | Path) -> Trace:
    """Read a DUMPI ASCII trace: a directory holding `PREFIX-NNNN.txt` files, or one of them (all of its
    siblings with the same prefix are read; NNNN is the rank)."""
    not_recorded: Counter[str] = Counter()
    cut_off: list[str] = []
    trace = build_trace([_parse(file, not_recorded, cut_off) for file in rank_files(Path(path))],
                        source="dumpi_ascii")
    trace.not_recorded = dict(+not_recorded)  # (+: the calls with a count above 0)
    trace.cut_off = cut_off
    return trace


def rank_files(p: Path) -> list[Path]:
    """The per-rank files of the trace `p` names, in rank order."""
    if not p.exists():
        raise TraceError(p, "no such file or directory")
    if p.is_dir():
        found = [f for f in p.iterdir() if ASCII_RANK_FILE.match(f.name)]
        prefixes = sorted({ASCII_RANK_FILE.match(f.name)["prefix"] for f in found})
        if not prefixes:
            raise TraceError(p, "holds no DUMPI ASCII files (PREFIX-NNNN.txt)")
        if len(prefixes) > 1:
            raise TraceError(p, f"holds DUMPI ASCII files of several traces ({', '.join(prefixes)}); name one file")
        directory, prefix = p, prefixes[0]
    else:
        m = ASCII_RANK_FILE.match(p.name)
        if m is None:
            return [p]  # a lone file not named PREFIX-NNNN.txt: a one-rank trace
        directory, prefix = p.parent, m["prefix"]
    by_rank: dict[int, Path] = {}
    for f in directory.iterdir():
        m = ASCII_RANK_FILE.match(f.name)
        if m and m["prefix"] == prefix:
            by_rank[int(m["rank"])] = f
    missing = sorted(set(range(max(by_rank) + 1)) - set(by_rank))
    if missing:
        raise TraceError(directory / f"{prefix}-NNNN.txt", f"ranks {missing[:8]} have no file")
    meta = directory / f"{prefix}.meta"
    if meta.exists():
        m = re.search(r"^numprocs=(\d+)$", meta.read_text(errors="replace"), re.M)
        if m and int(m[1]) != len(by_rank):
            raise TraceError(meta, f"numprocs={m[1]} but {len(by_rank)} ASCII rank files were found: read the .bin "
                                   "files (format \"dumpi\"), or convert every one with `dumpi2ascii -a`")
    return [by_rank[r] for r in range(len(by_rank))]


def _parse(path: Path, not_recorded: Counter[str], cut_off: list[str]) -> RankCalls:
    """The calls of one rank's file, and its datatype table; adds the calls its footer says DUMPI did not record
    to `not_recorded`, and the file to `cut_off` if it has no footer (`MPI_ALL_FUNCTIONS called ...`: the last line
    dumpi2ascii writes of the calls; a trace whose rank crashed, or a copy cut short, ends before it)."""
    lines = path.read_text(errors="replace").splitlines()
    blocks: list[DumpiCall] = []
    table: dict[int, int] = {}
    cur: DumpiCall | None = None
    pushed: list[str] = []  # the rest of a line after a multi-line value closed
    footer = False
    i = 0
    while pushed or i < len(lines):
        if pushed:
            line = pushed.pop()
        else:
            line = lines[i]
            i += 1
        if m := _ENTER.match(line):
            if cur is not None:
                raise TraceError(f"{path}:{i}", f"{m[1]} enters before {cur.name} (line {cur.pos}) returned")
            cur = DumpiCall(m[1], i, _ns(m[2], m[3]), -1)
        elif m := _RETURN.match(line):
            if cur is None or cur.name != m[1]:
                raise TraceError(f"{path}:{i}", f"{m[1]} returns but was not entered")
            cur.end_ns = _ns(m[2], m[3])
            blocks.append(cur)
            cur = None
        elif cur is not None:
            if m := _ARG.match(line):
                value = m[4]
                if value.startswith("[["):
                    # A 2-D int array (Group_range_incl's ranges) spans lines, and its closing bracket runs
                    # into the next argument's line.
                    while _depth(value) > 0 and i < len(lines):
                        value += lines[i]
                        i += 1
                    end = _closing(value)
                    if end + 1 < len(value):
                        pushed.append(value[end + 1:])
                    value = value[:end + 1]
                cur.args[m[2]] = _value(value)
        elif m := _DTYPE.match(line):
            table[int(m[1])] = int(m[3])
        elif m := _IGNORED.match(line):
            footer = True
            if m[1] != "MPI_ALL_FUNCTIONS":  # (the total of the others)
                not_recorded[m[1]] += int(m[2])
    if cur is not None:  # a trace cut off inside its last call (a crash in MPI_Finalize): keep the call
        cur.end_ns = cur.start_ns
        blocks.append(cur)
    if not footer:
        cut_off.append(str(path))
    return RankCalls(path, blocks, table, lambda line: f"{path}:{line}")


def _ns(seconds: str, fraction: str) -> int:
    return int(seconds) * 1_000_000_000 + int(fraction.ljust(9, "0")[:9])


def _depth(text: str) -> int:
    return text.count("[") - text.count("]")


def _closing(text: str) -> int:
    depth = 0
    for j, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if depth == 0 and ch == "]":
            return j
    return len(text) - 1


def _value(text: str) -> Value:
    """An argument's value: `14 (MPI_DOUBLE)` -> 14, `[1, 2]` and `[[0, 6, 1]]` -> a flat tuple, `<IGNORED>` ->
    (), anything else (a string) as printed."""
    if text.startswith("<"):
        return ()
    if text.startswith("["):
        return tuple(int(x) for x in _INTS.findall(text))
    m = _INT.match(text)
    return int(m[1]) if m else text
