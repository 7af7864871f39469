"""Readers of real MPI traces into a `Trace` (see fastnet/mpi/calls.py), and writers that turn a `Trace` into files.

| module | what |
|---|---|
| `otf2.py` | `read_otf2`: an OTF2 archive (Score-P) through the `otf2` package |
| `dumpi.py` | `read_dumpi`: a binary DUMPI trace (sst-dumpi's `.bin` per rank + `.meta`) |
| `dumpi_layout.py` | every DUMPI function id and the layout of its record's arguments |
| `dumpi_ascii.py` | `read_dumpi_ascii`: the per-rank text `dumpi2ascii -a` prints for a DUMPI trace |
| `dumpi_calls.py` | DUMPI's calls as `Call`s (handles, requests, communicators), shared by both DUMPI readers |
| `write.py` | `write_otf2`, `write_dumpi`, `write_dumpi_ascii`: a `Trace` in each format (tests, users) |
| `names.py` | which MPI functions move no data (`noop`), shared by the readers |

To add a format: one module here with `read_<format>(path) -> Trace`, and in this file one entry in `READERS` (the
config's `[workload] format` takes its names from there) and a rule in `detect_format` if its files can be told
apart by content. The readers import nothing from this file (their TraceError is in fastnet/errors.py). The `otf2`
package is imported only inside the OTF2 functions, so that importing fastnet stays fast.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastnet.errors import TraceError
from fastnet.mpi.calls import Trace
from fastnet.mpi.traces.dumpi import MAGIC_BYTES, read_dumpi
from fastnet.mpi.traces.dumpi_ascii import ASCII_RANK_FILE, read_dumpi_ascii
from fastnet.mpi.traces.otf2 import read_otf2
from fastnet.registry import Registry

# The one list of trace formats, each with its reader (mpi/schema.py takes `[workload] format`'s names from it)
READERS = Registry("trace format")
READERS.add("otf2", "an OTF2 archive (Score-P), through the otf2 package", read=read_otf2)
READERS.add("dumpi", "binary DUMPI (sst-dumpi's .bin per rank and .meta)", read=read_dumpi)
READERS.add("dumpi_ascii", "DUMPI as text (dumpi2ascii -a, one file per rank)", read=read_dumpi_ascii)


def read_trace(path: str | Path, format: str = "auto") -> Trace:
    """Read a trace; `format` is a key of READERS, or "auto" to tell the formats apart by content."""
    if format == "auto":
        format = detect_format(path)
    if format not in READERS:
        raise TraceError(path, f"unknown trace format {format!r}; known: auto, {', '.join(READERS.names)}")
    return READERS[format].read(path)


def detect_format(path: str | Path) -> str:
    """The READERS key for `path` (a file or a directory), or a TraceError saying why none fits."""
    p = Path(path)
    if not p.exists():
        raise TraceError(p, "no such file or directory")
    if p.is_dir():
        return _detect_dir(p)
    if p.suffix in (".bin", ".meta"):
        return "dumpi"
    head = p.read_bytes()[:4096]
    if p.suffix == ".otf2" or b"OTF2" in head[:8]:
        return "otf2"
    if head.startswith(MAGIC_BYTES):
        return "dumpi"
    if _looks_like_dumpi_ascii(head):
        return "dumpi_ascii"
    raise TraceError(p, "not a trace format fastnet reads: expected an OTF2 anchor file (*.otf2), binary DUMPI "
                        "(*.meta, *-NNNN.bin) or DUMPI ASCII text (dumpi2ascii output, *-NNNN.txt)")


def _looks_like_dumpi_ascii(head: bytes) -> bool:
    for raw in head.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line:
            return line.startswith("version=") or bool(re.match(r"^MPIO?_\w+ entering at walltime ", line))
    return False


def _detect_dir(p: Path) -> str:
    anchors = sorted(a for a in p.glob("*.otf2") if not a.name.startswith("._"))  # (macOS resource forks)
    if len(anchors) == 1:
        return "otf2"
    if len(anchors) > 1:
        raise TraceError(p, f"holds {len(anchors)} OTF2 anchor files ({', '.join(a.name for a in anchors)}); "
                            "name one")
    # The binary form wins over text next to it (sst-dumpi ships rank 0's ASCII beside its .bin files).
    if any(p.glob("*.meta")) or any(p.glob("*.bin")):
        return "dumpi"
    if any(ASCII_RANK_FILE.match(f.name) and _looks_like_dumpi_ascii(f.read_bytes()[:4096]) for f in p.glob("*.txt")):
        return "dumpi_ascii"
    raise TraceError(p, "holds no OTF2 anchor file (*.otf2), no binary DUMPI (*.meta, *-NNNN.bin) and no DUMPI "
                        "ASCII files (*-NNNN.txt)")


__all__ = ["READERS", "TraceError", "detect_format", "read_dumpi", "read_dumpi_ascii", "read_otf2", "read_trace"]
